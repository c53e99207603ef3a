package otelarena

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/arenaprof/arenaprof/internal/cputime"
)

// burn computes until the process has used d more CPU time, so that a
// CPU profile holds about d/10ms samples in it whatever the machine's load.
func burn(d time.Duration) {
	t0 := cputime.Process()
	var buf [4096]byte
	for cputime.Process()-t0 < d {
		for range 16 {
			sum := sha256.Sum256(buf[:])
			copy(buf[:], sum[:])
		}
	}
}

// The functions a request runs in, told apart in the CPU profile.
//
//go:noinline
func burnUnderSpan(d time.Duration) { burn(d) }

//go:noinline
func burnInSpawned(d time.Duration) { burn(d) }

//go:noinline
func burnAfterEnd(d time.Duration) { burn(d) }

// cpuRequests runs n requests under the wrapped provider tp, each on a
// goroutine of its own under the pprof label req=i (pprof.Do, as a
// caller's own labels), while a CPU profile runs: the request's span is
// started, the goroutine computes (burnUnderSpan) and starts a goroutine
// that computes (burnInSpawned), the span ends, the goroutine computes
// again (burnAfterEnd). It returns the profile and each request's span.
func cpuRequests(t *testing.T, tp trace.TracerProvider, n int, d time.Duration) (*profile.Profile, []trace.SpanContext) {
	t.Helper()
	tr := tp.Tracer("test")
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Skipf("a CPU profile runs already (go test -cpuprofile?): %v", err)
	}
	spans := make([]trace.SpanContext, n)
	for i := range n {
		var wg sync.WaitGroup
		wg.Go(func() {
			pprof.Do(context.Background(), pprof.Labels("req", fmt.Sprint(i)), func(ctx context.Context) {
				ctx, span := tr.Start(ctx, "GET /cpu")
				spans[i] = span.SpanContext()
				burnUnderSpan(d)
				var spawned sync.WaitGroup
				spawned.Go(func() { burnInSpawned(d / 2) })
				spawned.Wait()
				span.End()
				burnAfterEnd(d)
				_ = ctx
			})
		})
		wg.Wait()
	}
	pprof.StopCPUProfile()
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return p, spans
}

// inFunc reports whether s's stack holds the function named fn.
func inFunc(s *profile.Sample, fn string) bool {
	for _, loc := range s.Location {
		for _, l := range loc.Line {
			if strings.HasSuffix(l.Function.Name, "."+fn) {
				return true
			}
		}
	}
	return false
}

// TestGoroutineLabelsInCPUProfiles runs requests under a real CPU profile
// with the real SDK and checks the labels of the CPU samples, by where
// they were taken:
//
//   - a local root span that records: every sample taken under the span
//     (on its goroutine, and on a goroutine started under it) carries its
//     span_id and span_name, and the caller's req; every sample taken on
//     its goroutine after End carries req (restored, not cleared) and
//     neither span_id nor span_name;
//   - a local root that does not record, with WithUnsampledSpanNames:
//     span_name and req under the span, no span_id; req alone after End;
//   - without it: req alone, under the span and after.
//
// No sample carries trace_id: the goroutine's labels leave it out. Each
// request computes 30 ms under its span (and 15 ms more on the goroutine
// it starts) and 30 ms after, 12 requests per case: at 100 samples per
// CPU second about 36, 18 and 36 samples per place. A case needs one in
// each place; were the samples Poisson (the profiler's timer is more
// regular than that), a place would get none with probability below 2e-8.
func TestGoroutineLabelsInCPUProfiles(t *testing.T) {
	cases := []struct {
		name      string
		sampler   sdktrace.Sampler
		opts      []Option
		id, named bool // whether samples under the span carry span_id, span_name
	}{
		{"recording", sdktrace.AlwaysSample(), nil, true, true},
		{"unsampled with WithUnsampledSpanNames", sdktrace.NeverSample(), []Option{WithUnsampledSpanNames()}, false, true},
		{"unsampled", sdktrace.NeverSample(), nil, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sdk := sdktrace.NewTracerProvider(sdktrace.WithSampler(c.sampler))
			defer func() { _ = sdk.Shutdown(context.Background()) }()
			const n, d = 12, 30 * time.Millisecond
			p, spans := cpuRequests(t, NewTracerProvider(sdk, c.opts...), n, d)
			type tally struct{ all, right int }
			counts := map[string]*tally{}
			for _, fn := range []string{"burnUnderSpan", "burnInSpawned", "burnAfterEnd"} {
				counts[fn] = &tally{}
			}
			for _, s := range p.Sample {
				for fn, tl := range counts {
					if !inFunc(s, fn) {
						continue
					}
					tl.all++
					var i int
					req := s.Label["req"]
					if len(req) != 1 {
						t.Errorf("%s: a sample without req: %v", fn, s.Label)
						continue
					}
					fmt.Sscan(req[0], &i)
					under := fn != "burnAfterEnd"
					wantID, wantName := []string(nil), []string(nil)
					if under && c.id {
						wantID = []string{spans[i].SpanID().String()}
					}
					if under && c.named {
						wantName = []string{"GET /cpu"}
					}
					if fmt.Sprint(s.Label[labelSpanID]) == fmt.Sprint(wantID) && fmt.Sprint(s.Label[labelSpanName]) == fmt.Sprint(wantName) && len(s.Label[labelTraceID]) == 0 {
						tl.right++
					} else {
						t.Errorf("%s of request %d: labels %v, want span_id %v, span_name %v, no trace_id", fn, i, s.Label, wantID, wantName)
					}
				}
			}
			for _, fn := range []string{"burnUnderSpan", "burnInSpawned", "burnAfterEnd"} {
				tl := counts[fn]
				t.Logf("%s: %d of %d CPU samples with the labels wanted", fn, tl.right, tl.all)
				if tl.all == 0 {
					t.Errorf("%s: no CPU sample", fn)
				}
			}
		})
	}
}
