package agent

import (
	"bytes"
	"context"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// testSource returns synthetic profiles in the arena profile's format. The
// n-th Collect (from 1) returns one sample whose alloc_samples is n, so the
// receiver can tell which interval a profile holds.
type testSource struct {
	name string
	mu   sync.Mutex
	n    int64
	err  error // returned by Collect when set
}

func (s *testSource) Name() string { return s.name }

func (s *testSource) Collect(context.Context) (*profile.Profile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	s.n++
	return arenaLikeProfile(s.n, 1000*s.n, 5000), nil
}

func (s *testSource) count() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

var arenaSampleTypes = []string{
	"alloc_objects/count", "alloc_space/bytes", "inuse_objects/count",
	"inuse_space/bytes", "alloc_samples/count", "alloc_tail/bytes",
}

// arenaLikeProfile builds a one-sample profile in the arena profile format:
// samples events, allocBytes weighted bytes (of 100-byte objects), inuse
// bytes live.
func arenaLikeProfile(samples, allocBytes, inuse int64) *profile.Profile {
	fn := &profile.Function{ID: 1, Name: "main.handle", SystemName: "main.handle", Filename: "main.go"}
	loc := &profile.Location{ID: 1, Address: 0x1000, Line: []profile.Line{{Function: fn, Line: 42}}}
	p := &profile.Profile{
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            512 * 1024,
		DefaultSampleType: "alloc_space",
		Function:          []*profile.Function{fn},
		Location:          []*profile.Location{loc},
		TimeNanos:         time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano(),
		DurationNanos:     int64(time.Second),
		Comments:          []string{"arenaprof window=end"},
	}
	for _, st := range arenaSampleTypes {
		t, u, _ := strings.Cut(st, "/")
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: t, Unit: u})
	}
	p.Sample = []*profile.Sample{{
		Location: []*profile.Location{loc},
		Value:    []int64{allocBytes / 100, allocBytes, inuse / 100, inuse, samples, 37 * samples},
		Label:    map[string][]string{"type": {"main.user"}},
		NumLabel: map[string][]int64{"bytes": {100}, "sampling_mean": {512 * 1024}},
		NumUnit:  map[string][]string{"bytes": {"bytes"}, "sampling_mean": {"bytes"}},
	}}
	return p
}

// recorder is an Uploader that keeps what it receives; it can be made to
// fail or block.
type recorder struct {
	mu      sync.Mutex
	got     []*Upload
	fail    func(ctx context.Context, n int) error // called with the attempt number (from 1)
	block   chan struct{}                          // when non-nil, Upload waits for it (or ctx)
	entered chan struct{}                          // when non-nil, signalled on each Upload entry
	calls   int
}

func (r *recorder) Upload(ctx context.Context, u *Upload) error {
	r.mu.Lock()
	r.calls++
	n := r.calls
	fail, block, entered := r.fail, r.block, r.entered
	r.mu.Unlock()
	if entered != nil {
		select {
		case entered <- struct{}{}:
		default:
		}
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if fail != nil {
		if err := fail(ctx, n); err != nil {
			return err
		}
	}
	r.mu.Lock()
	r.got = append(r.got, u)
	r.mu.Unlock()
	return nil
}

func (r *recorder) uploads() []*Upload {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Upload(nil), r.got...)
}

func (r *recorder) String() string { return "recorder" }

// syncBuffer is a goroutine-safe log sink.
// funcUploader is an Uploader named name that calls fn.
type funcUploader struct {
	name string
	fn   func(context.Context, *Upload) error
}

func (f funcUploader) Upload(ctx context.Context, u *Upload) error { return f.fn(ctx, u) }
func (f funcUploader) String() string                              { return f.name }

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func debugLogger(w *syncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// waitFor polls cond every millisecond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// checkNoLeak fails if the number of goroutines does not come back to
// base within a few seconds (goroutines of closed connections and stopped
// profilers take a moment to exit).
func checkNoLeak(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= base {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines left running, %d before:\n%s", n, base, buf)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkBalance checks the documented invariant after Stop: every profile
// handed to a destination is uploaded, failed or dropped, and nothing is
// queued.
func checkBalance(t *testing.T, s Stats) {
	t.Helper()
	for _, d := range s.Destinations {
		if d.Enqueued != d.Uploaded+d.Failed+d.Dropped+d.Unconfirmed || d.Queued != 0 || d.InFlight != 0 {
			t.Errorf("%s: enqueued %d != uploaded %d + failed %d + dropped %d + unconfirmed %d (queued %d, in flight %d)",
				d.Name, d.Enqueued, d.Uploaded, d.Failed, d.Dropped, d.Unconfirmed, d.Queued, d.InFlight)
		}
	}
	if want := s.Collected * uint64(len(s.Destinations)); sumEnqueued(s) != want {
		t.Errorf("enqueued %d, want collected %d x %d destinations", sumEnqueued(s), s.Collected, len(s.Destinations))
	}
}

func sumEnqueued(s Stats) uint64 {
	var n uint64
	for _, d := range s.Destinations {
		n += d.Enqueued
	}
	return n
}

func stopAgent(t *testing.T, a *Agent) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

// fastConfig is a config with small intervals and backoffs, at most two
// retries and a logger that discards, for tests.
func fastConfig(srcs []Source, ups ...Uploader) Config {
	return Config{
		AppName:       "shop",
		Labels:        map[string]string{"env": "test", "region": "eu-1"},
		Interval:      20 * time.Millisecond,
		Sources:       srcs,
		Uploaders:     ups,
		Timeout:       2 * time.Second,
		MaxRetries:    2,
		BackoffBase:   time.Millisecond,
		BackoffMax:    5 * time.Millisecond,
		RetryAfterMax: 30 * time.Millisecond,
		// Tests that check warnings set their own; without one, failures
		// would be logged through slog.Default.
		Logger: slog.New(slog.DiscardHandler),
	}
}

func mustParse(t *testing.T, data []byte) *profile.Profile {
	t.Helper()
	p, err := profile.ParseData(data)
	if err != nil {
		t.Fatalf("parse profile: %v", err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatalf("invalid profile: %v", err)
	}
	return p
}

func sampleValue(t *testing.T, p *profile.Profile, typ string) int64 {
	t.Helper()
	for i, st := range p.SampleType {
		if st.Type == typ {
			var v int64
			for _, s := range p.Sample {
				v += s.Value[i]
			}
			return v
		}
	}
	t.Fatalf("no sample type %s in %v", typ, p.SampleType)
	return 0
}

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
