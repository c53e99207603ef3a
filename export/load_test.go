package export_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/profiler"
)

var heapStackSink []byte

// heapStackA and heapStackB allocate from 2^depth distinct stacks, so that
// the Go heap's allocs profile has as many records as a real service's.
//
//go:noinline
func heapStackA(depth int, bits uint) { heapStackStep(depth, bits) }

//go:noinline
func heapStackB(depth int, bits uint) { heapStackStep(depth, bits) }

func heapStackStep(depth int, bits uint) {
	if depth == 0 {
		// 4 MiB: sampled by the runtime at any MemProfileRate up to
		// about 1 MiB with probability above 0.98.
		heapStackSink = make([]byte, 4<<20)
		heapStackSink = nil
		return
	}
	if bits&1 == 0 {
		heapStackA(depth-1, bits>>1)
	} else {
		heapStackB(depth-1, bits>>1)
	}
}

// fullProfiler returns a profiler holding profiler.DefaultMaxBuckets
// buckets, every one of its own stack and size (164 real stacks of 10
// levels times 100 sizes), the state of a service whose collector is full,
// and fills the Go heap's profile with about 1,000 stacks.
func fullProfiler(tb testing.TB) *profiler.Profiler {
	tb.Helper()
	setMeanBytes(tb, 1)
	p := startProfiler(tb)
	var stacks [][]uintptr
	for i := range uint(profiler.DefaultMaxBuckets/100 + 1) {
		benchStackStep(10, i, &stacks)
	}
	ev := hooks.Event{TypeName: "main.user", MeanBytes: 1, Arena: hooks.NewArenaID(),
		Labels: hooks.NewLabels("handler", "/api/v1/users")}
	for _, st := range stacks {
		ev.Stack = st
		for size := range int64(100) {
			ev.Size = 8 * (size + 1)
			hooks.Emit(&ev)
		}
	}
	if got := p.Stats().Buckets; got != profiler.DefaultMaxBuckets {
		tb.Fatalf("%d buckets, want %d", got, profiler.DefaultMaxBuckets)
	}
	for i := range uint(1024) {
		heapStackStep(10, i)
	}
	return p
}

// BenchmarkHandlerFull serves one request on each path of the handlers a
// service mounts, with a full collector (profiler.DefaultMaxBuckets
// buckets): the arena profile, its debug=1 tables, the memory profile (arena
// and Go heap) and its tables. B/op is what one request allocates.
func BenchmarkHandlerFull(b *testing.B) {
	p := fullProfiler(b)
	for _, tc := range []struct {
		name  string
		h     http.Handler
		query string
	}{
		{"plain", export.Handler(p), ""},
		{"debug", export.Handler(p), "debug=1"},
		{"memory", export.MemoryHandler(p), ""},
		{"memory-debug", export.MemoryHandler(p), "debug=1"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", "/debug/arenaprof?"+tc.query, nil)
			b.ReportAllocs()
			for b.Loop() {
				w := &discardResponse{h: http.Header{}}
				tc.h.ServeHTTP(w, req)
				if w.n < 500 {
					b.Fatalf("%d bytes served", w.n)
				}
			}
			_ = fmt.Sprint()
		})
	}
}
