package estimate

import (
	"fmt"
	"testing"

	"github.com/arenaprof/arenaprof/internal/samplingstate"
)

var benchSink int64

func BenchmarkSingleMeanInterval(b *testing.B) {
	for _, s := range []int64{1, 100, 10_000, 1_000_000} {
		b.Run(fmt.Sprintf("s=%d", s), func(b *testing.B) {
			u := s * 5000
			for b.Loop() {
				iv, err := SingleMeanInterval(s, u, samplingstate.DefaultMeanBytes, 0.95, WindowBoth)
				if err != nil {
					b.Fatal(err)
				}
				benchSink += iv.UnsampledHi
			}
		})
	}
}
