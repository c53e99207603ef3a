package otelarena

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/arenaprof/arenaprof/arena"
)

var sink *obj24

// spanContexts starts n local root spans through a wrapped provider over
// the real SDK and returns their contexts (the spans stay open).
func spanContexts(tb testing.TB, n int) []context.Context {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	tb.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tr := NewTracerProvider(tp).Tracer("bench")
	ctxs := make([]context.Context, n)
	for i := range ctxs {
		ctxs[i], _ = tr.Start(context.Background(), "GET /api/users")
	}
	return ctxs
}

// BenchmarkGetPut is a request's arena round trip, Get, one New, Put,
// under context.Background() and under a local root span's context (its
// labels, a set new on every request, and its usage function, which Put
// calls): 64 spans in turn, each context in the CPU's caches as a
// request's own context is. The two run interleaved (see interleave, in
// blocks of 1024): span-extra-cpu-ns/op is the CPU per round trip the
// span adds, span-x the ratio. Compare with
//
//	go test -run '^$' -bench GetPut -count 10 ./otelarena
func BenchmarkGetPut(b *testing.B) {
	ctxs := spanContexts(b, 64)
	p := arena.NewPool()
	p.Put(p.Get(context.Background()))
	i := 0
	cpu, ops := interleave(b, 1024, [2]func(){
		func() {
			a := p.Get(context.Background())
			sink = arena.New[obj24](a)
			p.Put(a)
		},
		func() {
			a := p.Get(ctxs[i%len(ctxs)])
			sink = arena.New[obj24](a)
			p.Put(a)
			i++
		},
	})
	b.ReportMetric(float64(cpu[0])/ops, "background-cpu-ns/op")
	b.ReportMetric(float64(cpu[1])/ops, "span-cpu-ns/op")
	b.ReportMetric(float64(cpu[1]-cpu[0])/ops, "span-extra-cpu-ns/op")
	b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "span-x")
}

// TestGetPutUnderSpanNoAlloc checks that Get and Put under a span's
// context allocate nothing once the pool is warm.
func TestGetPutUnderSpanNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops arenas at random")
	}
	ctxs := spanContexts(t, 300)
	p := arena.NewPool()
	p.Put(p.Get(context.Background()))
	i := 0
	n := testing.AllocsPerRun(200, func() {
		a := p.Get(ctxs[i])
		sink = arena.New[obj24](a)
		p.Put(a)
		i++
	})
	if n != 0 {
		t.Errorf("%v allocations per Get and Put under a span, want 0", n)
	}
}
