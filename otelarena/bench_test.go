package otelarena

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/internal/cputime"
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
// span_id and span_name labels, a set new on every request, and its usage
// function, which Put calls): 64 spans in turn, each context in the CPU's
// caches as a request's own context is. cpu-ns/op is the process's CPU
// time per operation, steadier than ns/op on a loaded machine. Compare
// with
//
//	go test -run '^$' -bench GetPut -count 10 ./otelarena
func BenchmarkGetPut(b *testing.B) {
	for _, c := range []struct {
		name string
		ctxs []context.Context
	}{
		{"ctx=background", []context.Context{context.Background()}},
		{"ctx=span", spanContexts(b, 64)},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := arena.NewPool()
			p.Put(p.Get(context.Background()))
			b.ReportAllocs()
			t0 := cputime.Process()
			defer func() { b.ReportMetric(float64(cputime.Process()-t0)/float64(b.N), "cpu-ns/op") }()
			i := 0
			for b.Loop() {
				a := p.Get(c.ctxs[i%len(c.ctxs)])
				sink = arena.New[obj24](a)
				p.Put(a)
				i++
			}
		})
	}
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
