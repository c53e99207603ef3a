package otelarena

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/internal/cputime"
)

// BenchmarkRequest serves a request through otelhttp with the real SDK
// recording every span (no exporter), with the SDK's tracer provider
// (tp=sdk) and with it wrapped (tp=otelarena): the difference is
// arenaprof's share of the overhead of tracing. The handler takes an
// arena under the request's context and builds 20 small records in it,
// as a JSON handler's own values would be. Called through ServeHTTP, with
// no network, so that the difference is not lost in a socket's cost.
// Compare with
//
//	go test -run '^$' -bench Request -count 10 ./otelarena
func BenchmarkRequest(b *testing.B) {
	sdk := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	b.Cleanup(func() { _ = sdk.Shutdown(context.Background()) })
	handler := requestHandler()
	for _, c := range []struct {
		name string
		tp   trace.TracerProvider
	}{
		{"tp=sdk", sdk},
		{"tp=otelarena", NewTracerProvider(sdk)},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := otelhttp.NewHandler(handler, "GET /records", otelhttp.WithTracerProvider(c.tp))
			req := httptest.NewRequest("GET", "/records", nil)
			b.ReportAllocs()
			t0 := cputime.Process()
			defer func() { b.ReportMetric(float64(cputime.Process()-t0)/float64(b.N), "cpu-ns/op") }()
			for b.Loop() {
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}

// requestHandler is BenchmarkRequest's handler: an arena under the
// request's context, 20 small records in it.
func requestHandler() http.Handler {
	pool := arena.NewPool()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := pool.Get(r.Context())
		defer pool.Put(a)
		for i := range 20 {
			o := arena.New[withPtr](a)
			o.s = arena.String(a, "record-"+strconv.Itoa(i))
			o.n = int64(i)
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// BenchmarkRequestOverhead is BenchmarkRequest's two providers in one
// loop (see interleave): overhead-% is the wrapped provider's CPU over
// the SDK's, less one, over all the blocks: arenaprof's share of a traced
// request. Run with -count 10 and compare medians:
//
//	go test -run '^$' -bench RequestOverhead -count 10 ./otelarena
func BenchmarkRequestOverhead(b *testing.B) {
	sdk := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	b.Cleanup(func() { _ = sdk.Shutdown(context.Background()) })
	hs := [2]func(){requestThrough(sdk), requestThrough(NewTracerProvider(sdk))}
	cpu, reqs := interleave(b, 64, hs)
	b.ReportMetric(float64(cpu[0])/reqs, "sdk-cpu-ns/req")
	b.ReportMetric(float64(cpu[1])/reqs, "otelarena-cpu-ns/req")
	b.ReportMetric(100*(float64(cpu[1])/float64(cpu[0])-1), "overhead-%")
}

// requestThrough returns a function that serves one request of
// BenchmarkRequest through otelhttp with tp.
func requestThrough(tp trace.TracerProvider) func() {
	h := otelhttp.NewHandler(requestHandler(), "GET /records", otelhttp.WithTracerProvider(tp))
	req := httptest.NewRequest("GET", "/records", nil)
	return func() { h.ServeHTTP(httptest.NewRecorder(), req) }
}

// interleave runs the two variants of a request in one loop: blocks of
// block requests through each in turn, each first every other round, the
// process's CPU time taken around each block, so that a machine whose
// load drifts weighs on both alike. It returns each variant's CPU time and
// the requests each served.
func interleave(b *testing.B, block int, fs [2]func()) (cpu [2]time.Duration, reqs float64) {
	for _, f := range fs { // warm both
		for range block {
			f()
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += block {
		// Each variant goes first every other round: what a block
		// leaves (a GC cycle it started) falls on both alike.
		for k := range 2 {
			i := k ^ (n / block & 1)
			t0 := cputime.Process()
			for range block {
				fs[i]()
			}
			cpu[i] += cputime.Process() - t0
		}
	}
	b.StopTimer()
	return cpu, float64((b.N + block - 1) / block * block)
}

// BenchmarkGoroutineLabels is what the goroutine's labels (span_id and
// span_name set at a local root's Start, the caller's set back at End)
// cost a request, the wrapped provider with them against the same without
// them, interleaved (see interleave): label-cpu-ns/req is the difference
// in CPU time per request, label-% that over the request without them.
//
//   - request: a request of BenchmarkRequest through otelhttp, the span
//     recorded;
//   - span: a local root's Start and End alone;
//   - unsampled: Start and End of a span that does not record, with
//     WithUnsampledSpanNames (span_name on the goroutine) against without.
//
// Run with
//
//	go test -run '^$' -bench GoroutineLabels -count 10 ./otelarena
func BenchmarkGoroutineLabels(b *testing.B) {
	sdk := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	never := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	b.Cleanup(func() {
		_ = sdk.Shutdown(context.Background())
		_ = never.Shutdown(context.Background())
	})
	with, without := NewTracerProvider(sdk), &tracerProvider{TracerProvider: sdk, noGoroutineLabels: true}
	span := func(tp trace.TracerProvider) func() {
		tr := tp.Tracer("bench")
		return func() {
			_, s := tr.Start(context.Background(), "GET /records")
			s.End()
		}
	}
	for _, c := range []struct {
		name string
		fs   [2]func() // without, with
	}{
		{"request", [2]func(){requestThrough(without), requestThrough(with)}},
		{"span", [2]func(){span(without), span(with)}},
		{"unsampled", [2]func(){span(NewTracerProvider(never)), span(NewTracerProvider(never, WithUnsampledSpanNames()))}},
	} {
		b.Run(c.name, func(b *testing.B) {
			cpu, reqs := interleave(b, 64, c.fs)
			b.ReportMetric(float64(cpu[1]-cpu[0])/reqs, "label-cpu-ns/req")
			b.ReportMetric(100*(float64(cpu[1])/float64(cpu[0])-1), "label-%")
		})
	}
}
