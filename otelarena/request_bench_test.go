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
// loop: blocks of 64 requests through each in turn, each first every
// other round, the process's CPU time taken around each block, so that a machine whose load drifts
// weighs on both alike. overhead-% is the wrapped provider's CPU over
// the SDK's, less one, over all the blocks: arenaprof's share of a traced
// request. Run with -count 10 and compare medians:
//
//	go test -run '^$' -bench RequestOverhead -count 10 ./otelarena
func BenchmarkRequestOverhead(b *testing.B) {
	sdk := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	b.Cleanup(func() { _ = sdk.Shutdown(context.Background()) })
	handler := requestHandler()
	hs := [2]http.Handler{
		otelhttp.NewHandler(handler, "GET /records", otelhttp.WithTracerProvider(sdk)),
		otelhttp.NewHandler(handler, "GET /records", otelhttp.WithTracerProvider(NewTracerProvider(sdk))),
	}
	req := httptest.NewRequest("GET", "/records", nil)
	for _, h := range hs { // warm both
		for range 64 {
			h.ServeHTTP(httptest.NewRecorder(), req)
		}
	}
	const block = 64
	var cpu [2]time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += block {
		// Each provider goes first every other round: what a block
		// leaves (a GC cycle it started) falls on both alike.
		for k := range 2 {
			i := k ^ (n / block & 1)
			t0 := cputime.Process()
			for range block {
				hs[i].ServeHTTP(httptest.NewRecorder(), req)
			}
			cpu[i] += cputime.Process() - t0
		}
	}
	b.StopTimer()
	reqs := float64((b.N + block - 1) / block * block)
	b.ReportMetric(float64(cpu[0])/reqs, "sdk-cpu-ns/req")
	b.ReportMetric(float64(cpu[1])/reqs, "otelarena-cpu-ns/req")
	b.ReportMetric(100*(float64(cpu[1])/float64(cpu[0])-1), "overhead-%")
}
