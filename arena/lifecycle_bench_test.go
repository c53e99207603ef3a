package arena

import (
	"context"
	"fmt"
	"runtime/metrics"
	"runtime/pprof"
	"testing"
	"time"

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
	// A set new on every Get (a span's ID and name): 4096 sets in turn,
	// more than the label cache holds, so that none is ever found there.
	ctxs := make([]context.Context, 4096)
	for i := range ctxs {
		ctxs[i] = pprof.WithLabels(context.Background(), pprof.Labels("span_id", fmt.Sprintf("%016x", 0x5eed<<32+i), "span_name", "GET /api/users"))
	}
	b.Run("labels=span", func(b *testing.B) {
		p := NewPool()
		b.ReportAllocs()
		defer cpuPerOp(b)()
		i := 0
		for b.Loop() {
			a := p.Get(ctxs[i%len(ctxs)])
			sink32 = New[obj32](a)
			p.Put(a)
			i++
		}
	})
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

// BenchmarkFree frees arenas that have taken their first chunk, a batch of
// freeBatch at a time, and reports ns/op per Free. Making an arena and its
// first New costs about 50 times a Free (18.6 µs against 0.34 µs, see
// BENCHMARKS.md), so the benchmark cannot let the framework size b.N from
// the frees alone: a design that stops the timer around the setup makes b.N
// millions (-benchtime=1s of 0.3 µs frees), each with an untimed 64 KiB
// chunk, and ran for minutes per count. Here b.Loop counts batches, so the
// whole loop, setup included, lasts about -benchtime; only the frees are
// timed (time.Now around each batch, about 50 ns against 256 frees), and
// the reported ns/op, allocs/op and B/op are theirs, per Free. The
// allocations come from runtime/metrics, which counts small objects when
// a goroutine's cached span is handed back: exact over the run, not per
// batch.
func BenchmarkFree(b *testing.B) {
	arenas := make([]*Arena, freeBatch)
	var (
		freeing time.Duration
		frees   int
		allocs  memCounter
	)
	b.ReportAllocs()
	for b.Loop() {
		for i := range arenas {
			a := NewArena()
			sink32 = New[obj32](a)
			arenas[i] = a
		}
		allocs.start()
		t0 := time.Now()
		for i := len(arenas) - 1; i >= 0; i-- { // the newest first, as before
			arenas[i].Free()
		}
		freeing += time.Since(t0)
		allocs.stop()
		frees += len(arenas)
	}
	b.ReportMetric(float64(freeing.Nanoseconds())/float64(frees), "ns/op")
	b.ReportMetric(float64(allocs.objects)/float64(frees), "allocs/op")
	b.ReportMetric(float64(allocs.bytes)/float64(frees), "B/op")
}

// freeBatch is the number of arenas BenchmarkFree makes, then frees, per
// iteration of its loop: 16 MiB of first chunks.
const freeBatch = 256

// memCounter sums the heap allocations (objects and bytes) made between
// its start and stop calls, from runtime/metrics: unlike
// runtime.ReadMemStats (what b.StopTimer calls) it does not stop the world.
type memCounter struct {
	samples          [2]metrics.Sample
	objects, bytes   uint64
	objects0, bytes0 uint64
}

func (m *memCounter) read() (objects, bytes uint64) {
	m.samples[0].Name = "/gc/heap/allocs:objects"
	m.samples[1].Name = "/gc/heap/allocs:bytes"
	metrics.Read(m.samples[:])
	return m.samples[0].Value.Uint64(), m.samples[1].Value.Uint64()
}

func (m *memCounter) start() { m.objects0, m.bytes0 = m.read() }

func (m *memCounter) stop() {
	o, b := m.read()
	m.objects += o - m.objects0
	m.bytes += b - m.bytes0
}
