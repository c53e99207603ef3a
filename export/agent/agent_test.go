package agent

import (
	"context"
	"errors"
	"github.com/google/pprof/profile"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestConfigValidation(t *testing.T) {
	src := []Source{&testSource{name: "arena"}}
	up := []Uploader{&recorder{}}
	ok := func() Config { return Config{AppName: "shop", Sources: src, Uploaders: up} }
	tests := []struct {
		name   string
		edit   func(*Config)
		errSub string // "" means valid
	}{
		{"valid", func(*Config) {}, ""},
		{"no app", func(c *Config) { c.AppName = "" }, "AppName is required"},
		{"bad utf8 app", func(c *Config) { c.AppName = "a\xffb" }, "valid UTF-8"},
		{"label key with space", func(c *Config) { c.Labels = map[string]string{"a b": "x"} }, "must match"},
		{"label key digit first", func(c *Config) { c.Labels = map[string]string{"1a": "x"} }, "must match"},
		{"reserved label", func(c *Config) { c.Labels = map[string]string{"__name__": "x"} }, "reserved"},
		{"empty label value", func(c *Config) { c.Labels = map[string]string{"env": ""} }, "non-empty"},
		{"odd label value ok", func(c *Config) { c.Labels = map[string]string{"path": "../../etc/passwd\x00 ü{},="} }, ""},
		{"negative interval", func(c *Config) { c.Interval = -time.Second }, "Interval"},
		{"tiny interval", func(c *Config) { c.Interval = time.Microsecond }, "Interval"},
		{"huge interval", func(c *Config) { c.Interval = 48 * time.Hour }, "Interval"},
		{"no sources", func(c *Config) { c.Sources = nil }, "Sources is empty"},
		{"nil source", func(c *Config) { c.Sources = []Source{nil} }, "Sources[0] is nil"},
		{"bad source name", func(c *Config) { c.Sources = []Source{&testSource{name: "Arena/1"}} }, "source name"},
		{"duplicate source", func(c *Config) {
			c.Sources = []Source{&testSource{name: "a"}, &testSource{name: "a"}}
		}, "two sources"},
		{"no uploaders", func(c *Config) { c.Uploaders = nil }, "Uploaders is empty"},
		{"nil uploader", func(c *Config) { c.Uploaders = []Uploader{nil} }, "Uploaders[0] is nil"},
		{"negative timeout", func(c *Config) { c.Timeout = -1 }, "Timeout"},
		{"too many retries", func(c *Config) { c.MaxRetries = 1000 }, "MaxRetries"},
		{"no retries ok", func(c *Config) { c.MaxRetries = -1 }, ""},
		{"negative queue", func(c *Config) { c.QueueSize = -1 }, "QueueSize"},
		{"huge queue", func(c *Config) { c.QueueSize = maxQueueSize + 1 }, "QueueSize"},
		{"backoff max below base", func(c *Config) { c.BackoffBase, c.BackoffMax = time.Second, time.Millisecond }, "BackoffMax"},
		{"negative retry-after cap", func(c *Config) { c.RetryAfterMax = -time.Second }, "RetryAfterMax"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok()
			tt.edit(&c)
			got, err := c.validate()
			if tt.errSub == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if got.Interval != defaultInterval || got.QueueSize != defaultQueueSize ||
					got.DrainTimeout != defaultDrainTimeout || got.MaxRetryTime != defaultMaxRetryTime {
					t.Fatalf("defaults not applied: %+v", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.errSub) {
				t.Fatalf("error %v, want one containing %q", err, tt.errSub)
			}
			if a, err := Start(c); err == nil {
				a.Stop(context.Background())
				t.Fatal("Start accepted an invalid config")
			}
		})
	}
}

func TestConfigNoRetries(t *testing.T) {
	c, err := Config{AppName: "a", Sources: []Source{&testSource{name: "x"}}, Uploaders: []Uploader{&recorder{}}, MaxRetries: -1}.validate()
	if err != nil || c.MaxRetries != -1 {
		t.Fatalf("MaxRetries -1: got %d, %v; want -1", c.MaxRetries, err)
	}
}

// TestStopFlushesPartialInterval: with an interval far longer than the
// test, the only profiles are those of the partial interval Stop collects.
func TestStopFlushesPartialInterval(t *testing.T) {
	base := runtime.NumGoroutine()
	rec := &recorder{}
	srcA, srcB := &testSource{name: "arena"}, &testSource{name: "other"}
	cfg := fastConfig([]Source{srcA, srcB}, rec)
	cfg.Interval = time.Hour
	start := time.Now()
	a, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	stopAgent(t, a)
	s := a.Stats()
	if s.Collected != 2 || s.Uploaded != 2 || s.Failed != 0 || s.Dropped != 0 {
		t.Fatalf("stats %+v, want 2 collected and uploaded", s)
	}
	checkBalance(t, s)
	got := rec.uploads()
	if len(got) != 2 || got[0].Profile != "arena" || got[1].Profile != "other" {
		t.Fatalf("uploads %v", got)
	}
	for _, u := range got {
		if u.From.Before(start) || u.Until.Before(u.From) || time.Since(u.Until) < 0 {
			t.Errorf("%s: from %v until %v, started %v", u.Profile, u.From, u.Until, start)
		}
		if u.AppName != "shop" || u.Labels["env"] != "test" {
			t.Errorf("app %q labels %v", u.AppName, u.Labels)
		}
		if _, ok := u.sampleTypes["inuse_space"]; !ok {
			t.Errorf("sample types %v", u.sampleTypes)
		}
	}
	// A second Stop returns the first result at once.
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkNoLeak(t, base)
}

// TestIntervalsTile: consecutive uploads of one source cover adjacent
// intervals, in order.
func TestIntervalsTile(t *testing.T) {
	rec := &recorder{}
	src := &testSource{name: "arena"}
	a, err := Start(fastConfig([]Source{src}, rec))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "5 uploads", func() bool { return len(rec.uploads()) >= 5 })
	stopAgent(t, a)
	got := rec.uploads()
	for i := 1; i < len(got); i++ {
		if !got[i].From.Equal(got[i-1].Until) {
			t.Fatalf("upload %d starts at %v, previous ended at %v", i, got[i].From, got[i-1].Until)
		}
		p := mustParse(t, got[i].Data)
		if n := sampleValue(t, p, "alloc_samples"); n != int64(i+1) {
			t.Fatalf("upload %d holds interval %d", i, n)
		}
	}
	checkBalance(t, a.Stats())
}

// TestDropOldest: while the destination is stuck, collection goes on, the
// queue keeps the newest QueueSize profiles and counts the rest as dropped.
func TestDropOldest(t *testing.T) {
	base := runtime.NumGoroutine()
	block := make(chan struct{})
	rec := &recorder{block: block, entered: make(chan struct{}, 1)}
	src := &testSource{name: "arena"}
	cfg := fastConfig([]Source{src}, rec)
	cfg.Interval = 5 * time.Millisecond
	cfg.QueueSize = 3
	a, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	<-rec.entered // the first profile is in flight, stuck
	waitFor(t, "10 more collections", func() bool { return src.count() >= 11 })
	if d := a.Stats().Destinations[0]; d.Queued != 3 || d.Dropped == 0 {
		t.Fatalf("stuck destination: %+v, want a full queue of 3 and drops", d)
	}
	// Later uploads pass; the stuck one waits on the original channel.
	rec.mu.Lock()
	rec.block = nil
	rec.mu.Unlock()
	close(block)
	stopAgent(t, a)
	s := a.Stats()
	checkBalance(t, s)
	if s.Failed != 0 || s.Dropped == 0 || s.Uploaded+s.Dropped != s.Collected {
		t.Fatalf("stats %+v", s)
	}
	got := rec.uploads()
	// The first upload is interval 1 (in flight when the queue filled);
	// the rest are strictly increasing and end with the last interval.
	last := int64(0)
	for i, u := range got {
		n := sampleValue(t, mustParse(t, u.Data), "alloc_samples")
		if n <= last {
			t.Fatalf("upload %d holds interval %d after %d", i, n, last)
		}
		last = n
	}
	if last != src.count() {
		t.Fatalf("newest profile %d not delivered (last %d)", src.count(), last)
	}
	checkNoLeak(t, base)
}

// TestStopDeadline: a destination that never answers cannot hold Stop
// past its context; what is left is counted as dropped and no goroutine
// stays behind.
func TestStopDeadline(t *testing.T) {
	base := runtime.NumGoroutine()
	rec := &recorder{block: make(chan struct{})} // never closed
	cfg := fastConfig([]Source{&testSource{name: "arena"}}, rec)
	cfg.Timeout = time.Hour
	a, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "3 collections", func() bool { return a.Stats().Collected >= 3 })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = a.Stop(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "counted as dropped") {
		t.Fatalf("Stop: %v, want a deadline error", err)
	}
	s := a.Stats()
	checkBalance(t, s)
	if s.Uploaded != 0 || s.Failed != 0 || s.Dropped != s.Collected {
		t.Fatalf("stats %+v: want everything dropped", s)
	}
	checkNoLeak(t, base)
}

// TestSlowDestinationDoesNotDelayOthers: each destination has its own
// queue, so a stuck one does not hold back the other.
func TestSlowDestinationDoesNotDelayOthers(t *testing.T) {
	stuck := &recorder{block: make(chan struct{})}
	fast := &recorder{}
	cfg := fastConfig([]Source{&testSource{name: "arena"}}, stuck, fast)
	a, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "5 uploads to the healthy destination", func() bool { return len(fast.uploads()) >= 5 })
	close(stuck.block)
	stopAgent(t, a)
	checkBalance(t, a.Stats())
}

func TestRetries(t *testing.T) {
	perm := errors.New("bad request")
	always503 := func(context.Context, int) error { return Retryable(errors.New("503"), 0) }
	const some = ^uint64(0) // at least one, the exact number depends on the jitter
	tests := []struct {
		name         string
		maxRetries   int
		maxRetryTime time.Duration
		fail         func(ctx context.Context, n int) error
		// per profile, with one source and a flush-only run
		uploaded, failed, unconfirmed, retried uint64
	}{
		{"ok", 0, 0, nil, 1, 0, 0, 0},
		{"transient then ok", 0, 0, func(ctx context.Context, n int) error {
			if n <= 2 {
				return Retryable(errors.New("503"), 0)
			}
			return nil
		}, 1, 0, 0, 2},
		{"twelve transient failures then ok: no count bound by default", 0, 0, func(ctx context.Context, n int) error {
			if n <= 12 {
				return Retryable(errors.New("422 empty ring"), 0)
			}
			return nil
		}, 1, 0, 0, 12},
		{"always retryable, 5 retries", 5, 0, always503, 0, 1, 0, 5},
		{"always retryable, bounded by MaxRetryTime", 0, 100 * time.Millisecond, always503, 0, 1, 0, some},
		{"no retries", -1, 0, always503, 0, 1, 0, 0},
		{"permanent", 0, 0, func(context.Context, int) error { return perm }, 0, 1, 0, 0},
		{"timeout is unconfirmed, not retried", 0, 0, func(ctx context.Context, n int) error {
			<-ctx.Done() // the attempt's own timeout
			return ctx.Err()
		}, 0, 0, 1, 0},
		{"timeout marked retryable is retried", 0, 0, func(ctx context.Context, n int) error {
			if n == 1 {
				<-ctx.Done()
				return Retryable(ctx.Err(), 0)
			}
			return nil
		}, 1, 0, 0, 1},
		{"unconfirmed", 0, 0, func(context.Context, int) error { return Unconfirmed(errors.New("sent, no answer")) }, 0, 0, 1, 0},
		{"unconfirmed outranks retryable", 0, 0, func(context.Context, int) error {
			return Retryable(Unconfirmed(errors.New("sent, no answer")), 0)
		}, 0, 0, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{fail: tt.fail}
			cfg := fastConfig([]Source{&testSource{name: "arena"}}, rec)
			cfg.Interval = time.Hour
			cfg.Timeout = 20 * time.Millisecond
			cfg.MaxRetries = tt.maxRetries
			cfg.MaxRetryTime = tt.maxRetryTime
			a, err := Start(cfg)
			if err != nil {
				t.Fatal(err)
			}
			stopAgent(t, a)
			s := a.Stats()
			checkBalance(t, s)
			retriedOK := s.Retried == tt.retried || tt.retried == some && s.Retried > 0
			if s.Uploaded != tt.uploaded || s.Failed != tt.failed || s.Unconfirmed != tt.unconfirmed || !retriedOK || s.Dropped != 0 {
				t.Fatalf("stats %+v, want uploaded %d failed %d unconfirmed %d retried %d", s, tt.uploaded, tt.failed, tt.unconfirmed, tt.retried)
			}
			if tt.failed+tt.unconfirmed > 0 && (s.LastError == "" || s.LastErrorTime.IsZero()) {
				t.Errorf("no last error in %+v", s)
			}
			if tt.uploaded > 0 && s.BytesUploaded == 0 {
				t.Errorf("no bytes counted in %+v", s)
			}
		})
	}
}

func TestCollectErrorsCounted(t *testing.T) {
	rec := &recorder{}
	bad := &testSource{name: "bad", err: errors.New("boom")}
	good := &testSource{name: "good"}
	var logs syncBuffer
	cfg := fastConfig([]Source{bad, good}, rec)
	cfg.Interval = time.Hour
	cfg.Logger = debugLogger(&logs)
	a, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	stopAgent(t, a)
	s := a.Stats()
	if s.CollectErrors != 1 || s.Collected != 1 || s.Uploaded != 1 {
		t.Fatalf("stats %+v", s)
	}
	if !strings.Contains(logs.String(), "boom") {
		t.Fatalf("collection error not logged: %s", logs.String())
	}
}

// TestStartStopMany starts and stops agents with every kind of source and
// destination many times; no goroutine may be left behind.
func TestStartStopMany(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	n := 20
	if testing.Short() {
		n = 5
	}
	base := runtime.NumGoroutine()
	for i := range n {
		dir, err := newDir(DirConfig{Path: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		py, err := newPyroscope(PyroscopeConfig{URL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		cfg := fastConfig([]Source{WallSource(), HeapSource(), &testSource{name: "arena"}}, dir, py)
		cfg.Interval = 10 * time.Millisecond
		a, err := Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(i%4) * 10 * time.Millisecond)
		stopAgent(t, a)
		s := a.Stats()
		checkBalance(t, s)
		if s.Failed != 0 || s.CollectErrors != 0 || s.Uploaded != 2*s.Collected {
			t.Fatalf("run %d: stats %+v", i, s)
		}
	}
	checkNoLeak(t, base)
}

// deafUploader ignores its context and blocks until released.
type deafUploader struct{ release chan struct{} }

func (u deafUploader) Upload(context.Context, *Upload) error {
	<-u.release
	return nil
}

// TestStopKeepsDeadlineWithDeafUploader: an uploader that ignores the
// cancellation does not hold Stop past its context (plus the short grace);
// the blocked upload, once it returns, leaves no goroutine behind.
func TestStopKeepsDeadlineWithDeafUploader(t *testing.T) {
	up := deafUploader{release: make(chan struct{})}
	cfg := fastConfig([]Source{&testSource{name: "arena"}}, up)
	cfg.Interval = time.Hour
	a, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	begin := time.Now()
	err = a.Stop(ctx)
	took := time.Since(begin)
	close(up.release)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop: %v, want the deadline error", err)
	}
	// The uploader would block for ever; 5 s is far beyond 300 ms + grace
	// and still catches a Stop that waits for it.
	if took > 5*time.Second {
		t.Fatalf("Stop took %v with a 300 ms context", took)
	}
}

// TestLaterStamp: a profile time within or before the millisecond of the
// previous one moves to the start of the next millisecond; later ones stay.
func TestLaterStamp(t *testing.T) {
	const ms = int64(time.Millisecond)
	for _, tc := range []struct {
		name       string
		t, last    int64 // last in milliseconds
		want, next int64
	}{
		{"first", 5*ms + 7, 0, 5*ms + 7, 5},
		{"later millisecond", 9*ms + 1, 5, 9*ms + 1, 9},
		{"same millisecond", 5*ms + 999_999, 5, 6 * ms, 6},
		{"same instant", 5 * ms, 5, 6 * ms, 6},
		{"earlier", 3 * ms, 5, 6 * ms, 6},
	} {
		last := tc.last
		if got := laterStamp(tc.t, &last); got != tc.want || last != tc.next {
			t.Errorf("%s: laterStamp(%d, %d) = %d, last %d; want %d, %d", tc.name, tc.t, tc.last, got, last, tc.want, tc.next)
		}
	}
}

// TestUploadsDistinctMilliseconds: Pyroscope keeps one profile per series
// and millisecond, so the agent sends each source's profiles in distinct,
// increasing milliseconds, even when the source stamps them all alike (as
// the peak source does after the profiler stopped, and a snapshot taken at
// Stop right after the interval's own may).
func TestUploadsDistinctMilliseconds(t *testing.T) {
	rec := &recorder{}
	src := &testSource{name: "arena"} // every profile at one instant
	a, err := Start(fastConfig([]Source{src}, rec))
	if err != nil {
		t.Fatal(err)
	}
	for src.count() < 5 {
		time.Sleep(5 * time.Millisecond)
	}
	stopAgent(t, a)
	var last int64 = -1
	for i, u := range rec.uploads() {
		p, err := profile.ParseData(u.Data)
		if err != nil {
			t.Fatal(err)
		}
		if m := p.TimeNanos / int64(time.Millisecond); m <= last {
			t.Errorf("upload %d at millisecond %d, not after the previous one's %d", i, m, last)
		} else {
			last = m
		}
	}
}
