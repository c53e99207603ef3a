package arena

import (
	"context"
	"runtime/pprof"
	"testing"

	"github.com/arenaprof/arenaprof/internal/cputime"
)

// The lifecycle of an arena: NewArena, Pool.Get and Put, Reset and Free.
// These are not the allocation fast path, but a service pays them once per
// request or job, so they are kept cheap too. Run before and after a change
// with
//
//	go test -run '^$' -bench 'NewArena|PoolGetPut|Reset|Free' -count 10 ./arena
//
// Beside ns/op they report cpu-ns/op, the process's CPU time per
// operation: on a shared machine, time spent waiting for a core inflates
// the first and not the second.

var sinkArena *Arena

// cpuPerOp starts counting the process's CPU time; the function it returns
// reports it per operation (call it after b.Loop has returned).
func cpuPerOp(b *testing.B) func() {
	t0 := cputime.Process()
	return func() {
		b.ReportMetric(float64(cputime.Process()-t0)/float64(b.N), "cpu-ns/op")
	}
}

func BenchmarkNewArena(b *testing.B) {
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		sinkArena = NewArena()
	}
}

// BenchmarkNewArenaFirstNew is a new arena's whole setup: NewArena and its
// first New, which takes its first chunk (and lists it in the registry of
// live arenas).
func BenchmarkNewArenaFirstNew(b *testing.B) {
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		a := NewArena()
		sink32 = New[obj32](a)
		sinkArena = a
	}
}

// BenchmarkPoolGetPut runs with sampling off and on: Get takes its
// caller's stack only while profiling is on.
func BenchmarkPoolGetPut(b *testing.B) {
	sampling(b, func(b *testing.B) {
		p := NewPool()
		b.ReportAllocs()
		defer cpuPerOp(b)()
		for b.Loop() {
			a := p.Get(nil)
			sink32 = New[obj32](a)
			p.Put(a)
		}
	})
}

// BenchmarkPoolGetPutLabels is BenchmarkPoolGetPut with pprof labels on
// the context (labels=2: a handler's route and tenant), against none: a
// label set Get has seen before costs no allocation. Compare with
//
//	go test -run '^$' -bench 'PoolGetPut' -count 10 ./arena
func BenchmarkPoolGetPutLabels(b *testing.B) {
	for _, c := range []struct {
		name string
		ctx  context.Context
	}{
		{"labels=0", context.Background()},
		{"labels=2", pprof.WithLabels(context.Background(), pprof.Labels("route", "/api/users", "tenant", "acme"))},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := NewPool()
			b.ReportAllocs()
			defer cpuPerOp(b)()
			for b.Loop() {
				a := p.Get(c.ctx)
				sink32 = New[obj32](a)
				p.Put(a)
			}
		})
	}
}

func BenchmarkReset(b *testing.B) {
	a := NewArena()
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		sink32 = New[obj32](a)
		a.Reset()
	}
}

// BenchmarkFree frees arenas made outside the timed part, a batch at a time.
func BenchmarkFree(b *testing.B) {
	const batch = 256
	arenas := make([]*Arena, 0, batch)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if len(arenas) == 0 {
			b.StopTimer()
			for range batch {
				a := NewArena()
				sink32 = New[obj32](a)
				arenas = append(arenas, a)
			}
			b.StartTimer()
		}
		arenas[len(arenas)-1].Free()
		arenas = arenas[:len(arenas)-1]
	}
}
