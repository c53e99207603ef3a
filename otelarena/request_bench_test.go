package otelarena

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

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
	pool := arena.NewPool()
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := pool.Get(r.Context())
		defer pool.Put(a)
		for i := range 20 {
			o := arena.New[withPtr](a)
			o.s = arena.String(a, "record-"+strconv.Itoa(i))
			o.n = int64(i)
		}
		w.WriteHeader(http.StatusNoContent)
	})
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
