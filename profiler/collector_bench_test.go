package profiler

import (
	"runtime"
	"testing"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/simalloc"
)

//go:noinline
func collectorBenchSite(a *simalloc.Arena) { a.Alloc(64, "main.t") }

// BenchmarkCollectorEvent measures one sample event end to end: stack
// capture, hooks.Emit and aggregation into an existing bucket. At mean 1
// every allocation is sampled, so ns/op is ns/event.
func BenchmarkCollectorEvent(b *testing.B) {
	setMeanBytes(b, 1)
	p := startCollector(b)
	a := newCollectorTestArena(b, 1, hooks.NewLabels("k", "v"))
	collectorBenchSite(a)
	b.ReportAllocs()
	for b.Loop() {
		collectorBenchSite(a)
	}
	b.StopTimer()
	if p.Stats().Events == 0 {
		b.Fatal("no events")
	}
}

// BenchmarkCollectorEventParallel is BenchmarkCollectorEvent from
// GOMAXPROCS goroutines, one arena each: it shows contention, if any.
func BenchmarkCollectorEventParallel(b *testing.B) {
	setMeanBytes(b, 1)
	startCollector(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		a := newCollectorTestArena(b, 2, hooks.Labels{})
		for pb.Next() {
			collectorBenchSite(a)
		}
	})
}

var collectorBenchSink *[64]byte

// BenchmarkRuntimeHeapSample measures the Go runtime's cost per heap
// profile sample: new([64]byte) with runtime.MemProfileRate = 1 (every
// allocation sampled, stack captured and recorded) minus the same with
// MemProfileRate = 0.
func BenchmarkRuntimeHeapSample(b *testing.B) {
	for _, rate := range []int{0, 1} {
		b.Run("rate="+map[int]string{0: "0", 1: "1"}[rate], func(b *testing.B) {
			old := runtime.MemProfileRate
			runtime.MemProfileRate = rate
			defer func() { runtime.MemProfileRate = old }()
			for range 1000 { // let the new rate take effect
				collectorBenchSink = new([64]byte)
			}
			for b.Loop() {
				collectorBenchSink = new([64]byte)
			}
		})
	}
}
