package export_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
	"github.com/arenaprof/arenaprof/internal/testkit/benchsnap"
	"github.com/arenaprof/arenaprof/internal/testkit/hookstest"
	"github.com/arenaprof/arenaprof/profiler"
)

// benchSnapshot returns a snapshot of 10,000 records: 100 distinct real
// stacks (7 levels of two functions, plus the test harness) times 100
// object sizes.
func benchSnapshot() *profiler.Snapshot { return benchsnap.Snapshot(100, 7) }

// BenchmarkBuild10k builds a profile of 10,000 buckets.
func BenchmarkBuild10k(b *testing.B) {
	s := benchSnapshot()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := export.Build(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWrite10k builds and writes (gzipped protobuf) a profile of
// 10,000 buckets.
func BenchmarkWrite10k(b *testing.B) {
	s := benchSnapshot()
	b.ReportAllocs()
	for b.Loop() {
		if err := export.Write(io.Discard, s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWrite100k builds and writes a profile of 100,000 buckets: 1,000
// distinct stacks of 10 levels plus the harness, times 100 sizes.
func BenchmarkWrite100k(b *testing.B) {
	s := benchsnap.Snapshot(1000, 10)
	b.ReportAllocs()
	for b.Loop() {
		if err := export.Write(io.Discard, s); err != nil {
			b.Fatal(err)
		}
	}
}

var benchSink *[32]byte

// BenchmarkArenaProfilerOverhead allocates 32-byte objects from an arena,
// resetting it every 1024 objects: with sampling off (no consumer), with a
// consumer that does nothing (the cost of the arena's events: slow path,
// stack capture), and with a profiler, all at the default mean. ns/op is
// per object; on minus noop is the collector's own share.
func BenchmarkArenaProfilerOverhead(b *testing.B) {
	for _, mode := range []string{"off", "noop", "on"} {
		b.Run(mode, func(b *testing.B) {
			if err := hooks.SetMeanBytes(samplingstate.DefaultMeanBytes); err != nil {
				b.Fatal(err)
			}
			switch mode {
			case "noop":
				defer hooks.Register(hookstest.Func(func(*hooks.Event) {}))()
			case "on":
				p, err := profiler.Start()
				if err != nil {
					b.Fatal(err)
				}
				defer p.Stop()
			}
			if got := samplingstate.Current().MeanBytes; (got > 0) != (mode != "off") {
				b.Fatalf("sampling mean %d in mode %s", got, mode)
			}
			a := arena.NewArena(arena.WithSeed(1, 2))
			n := 0
			for b.Loop() {
				benchSink = arena.New[[32]byte](a)
				if n++; n == 1024 {
					a.Reset()
					n = 0
				}
			}
		})
	}
}

// discardResponse is an http.ResponseWriter that counts and drops the
// body, so that a benchmark of the handler measures the handler alone.
type discardResponse struct {
	h http.Header
	n int
}

func (w *discardResponse) Header() http.Header         { return w.h }
func (w *discardResponse) WriteHeader(int)             {}
func (w *discardResponse) Write(b []byte) (int, error) { w.n += len(b); return len(b), nil }

// BenchmarkHandler100k serves the profile of a profiler holding 100,000
// buckets through the HTTP handler: snapshot, build, encode and gzip,
// streamed to the client. sizes=100 is the layout of BenchmarkWrite100k
// (1,000 real stacks times 100 object sizes); sizes=100000 is one stack
// with 100,000 object sizes, the worst case for the per-size labels.
func BenchmarkHandler100k(b *testing.B) {
	for _, sizes := range []int{100, 100_000} {
		b.Run(fmt.Sprintf("sizes=%d", sizes), func(b *testing.B) {
			setMeanBytes(b, 1)
			p, err := profiler.Start(profiler.WithMaxBuckets(100_000))
			if err != nil {
				b.Fatal(err)
			}
			defer p.Stop()
			stacks := benchsnap.Stacks(100_000/sizes, 10)
			ev := hooks.Event{TypeName: "main.user", MeanBytes: 1, Arena: hooks.NewArenaID()}
			for _, st := range stacks {
				ev.Stack = st
				for size := range int64(sizes) {
					ev.Size = 8 * (size + 1)
					hooks.Emit(&ev)
				}
			}
			if got := p.Stats().Buckets; got != 100_000 {
				b.Fatalf("%d buckets", got)
			}
			h := export.Handler(p)
			req := httptest.NewRequest("GET", "/debug/arenaprof", nil)
			b.ReportAllocs()
			for b.Loop() {
				w := &discardResponse{h: http.Header{}}
				h.ServeHTTP(w, req)
				if w.n < 100_000 {
					b.Fatalf("%d bytes served", w.n)
				}
			}
		})
	}
}
