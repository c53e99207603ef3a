package sampling

import (
	"testing"

	"github.com/arenaprof/arenaprof/internal/samplingstate"
)

var benchSink int64

func BenchmarkGapNext(b *testing.B) {
	g, _ := NewGapSamplerSeeded(samplingstate.DefaultMeanBytes, 1, 2)
	var s int64
	for b.Loop() {
		s += g.Next()
	}
	benchSink = s
}
