package profiler

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/arena"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/cputime"
	"github.com/arenaprof/arenaprof/internal/testkit/simalloc"
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

// arenaBenchObj is the object the arena benchmarks allocate.
type arenaBenchObj struct{ a, b, c, d int64 }

var arenaBenchSink *arenaBenchObj

// arenaBenchDepth calls fn below depth more physical frames.
//
//go:noinline
func arenaBenchDepth(depth int, fn func()) {
	if depth <= 1 {
		fn()
		return
	}
	arenaBenchDepth(depth-1, fn)
}

// BenchmarkArenaEvent measures one sample event through the real path:
// arena.New of a 32-byte struct at mean 1 (every object sampled) from a
// 20-frame stack, frame-pointer stack capture, hooks.Emit and aggregation
// into an existing bucket by a profiler, from g goroutines with an arena
// each (reset every 1024 objects, which releases its objects to the
// profiler). ns/op is wall time per event; cpu-ns/event is the process's
// CPU time (user and system, from getrusage) per event, which stays flat
// from 1 to 32 goroutines if the path has no contention.
func BenchmarkArenaEvent(b *testing.B) {
	for _, g := range []int{1, 2, 8, 32} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			setMeanBytes(b, 1)
			p := startCollector(b)
			var before uint64
			cpu := arenaBenchRun(b, g, func() { before = p.Stats().Events })
			if got := p.Stats().Events - before; got != uint64(b.N) {
				b.Fatalf("%d events for %d objects", got, b.N)
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/event")
		})
	}
}

// BenchmarkArenaNoEvent is BenchmarkArenaEvent with sampling off: the same
// loops, arenas and goroutines, no events. Its CPU per object from 1 to 32
// goroutines shows what the machine itself adds when both cores run (on
// the shared 2-core virtual machine of BENCHMARKS.md, about 2.3x from 1 to
// 2 goroutines for code that shares nothing).
func BenchmarkArenaNoEvent(b *testing.B) {
	for _, g := range []int{1, 2, 8, 32} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			setMeanBytes(b, 0)
			cpu := arenaBenchRun(b, g, func() {})
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// arenaBenchRun allocates b.N objects, split over g goroutines with an
// arena each, below a 20-frame stack, and returns the process's CPU time.
// It calls ready after creating the buckets, before the timed part.
func arenaBenchRun(b *testing.B, g int, ready func()) time.Duration {
	arenas := make([]*arena.Arena, g)
	for i := range arenas {
		arenas[i] = arena.NewArena(arena.WithSeed(uint64(i), 7))
		defer arenas[i].Free()
	}
	run := func(a *arena.Arena, n int) {
		arenaBenchDepth(20, func() {
			for i := range n {
				if i%1024 == 1023 {
					a.Reset()
				}
				arenaBenchSink = arena.New[arenaBenchObj](a)
			}
		})
	}
	for _, a := range arenas { // create the buckets
		run(a, 2)
	}
	ready()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Process()
	var wg sync.WaitGroup
	for i, a := range arenas {
		n := b.N / g
		if i < b.N%g {
			n++
		}
		wg.Go(func() { run(a, n) })
	}
	wg.Wait()
	cpu := cputime.Process() - cpu0
	b.StopTimer()
	return cpu
}
