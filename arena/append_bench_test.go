package arena

import (
	"testing"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
	"github.com/arenaprof/arenaprof/internal/testkit/hookstest"
)

var sinkInts []int64

// BenchmarkAppend appends 1000 int64 one at a time per op, starting from a
// nil slice: in an arena reset every op, and with the built-in append on
// the heap (the slice escapes to sinkInts). Sampling is on at the default
// mean, with a consumer registered, as a profiled service runs.
//
//	go test -run '^$' -bench BenchmarkAppend -count 10 ./arena | tee new.txt
//	benchstat -col /impl new.txt
func BenchmarkAppend(b *testing.B) {
	const n = 1000
	b.Run("impl=arena", func(b *testing.B) {
		withDefaultSampling(b)
		a := NewArena()
		b.ReportAllocs()
		for b.Loop() {
			a.Reset()
			var s []int64
			for i := range n {
				s = Append(a, s, int64(i))
			}
			sinkInts = s
		}
		sinkInts = nil
	})
	b.Run("impl=heap", func(b *testing.B) {
		withDefaultSampling(b)
		b.ReportAllocs()
		for b.Loop() {
			var s []int64
			for i := range n {
				s = append(s, int64(i))
			}
			sinkInts = s
		}
		sinkInts = nil
	})
}

// withDefaultSampling turns sampling on at the default mean, with a
// consumer registered, for the rest of the benchmark.
func withDefaultSampling(b *testing.B) {
	b.Helper()
	if err := hooks.SetMeanBytes(samplingstate.DefaultMeanBytes); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(hooks.Register(hookstest.Func(func(*hooks.Event) {})))
}
