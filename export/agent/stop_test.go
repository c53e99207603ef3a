package agent

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// silentServer accepts connections and never reads or answers: a server
// that hangs, or one stopped with SIGSTOP (the kernel still completes the
// handshake and buffers the request).
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + l.Addr().String()
}

// TestStopBoundedAgainstSilentServer: Stop(context.Background()) against a
// server that never answers returns within about DrainTimeout, says the
// drain timed out, and accounts for every profile. The bounds are loose
// (the machine is shared); what matters is that Stop does not wait for
// each queued profile's timeout and retries in turn.
func TestStopBoundedAgainstSilentServer(t *testing.T) {
	py, err := newPyroscope(PyroscopeConfig{URL: silentServer(t)})
	if err != nil {
		t.Fatal(err)
	}
	srcs := []Source{&testSource{name: "arena"}, &testSource{name: "heap"}, &testSource{name: "cpu"}, &testSource{name: "wall"}}
	cfg := fastConfig(srcs, py)
	cfg.Interval = time.Hour
	cfg.Timeout = 200 * time.Millisecond
	cfg.DrainTimeout = 300 * time.Millisecond
	cfg.MaxRetries = 0 // no count bound: only the time bounds
	a, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	err = a.Stop(context.Background())
	took := time.Since(begin)
	t.Logf("Stop: %v after %v", err, took.Round(time.Millisecond))
	// Four profiles of 200 ms each would take 800 ms in turn.
	if took > 5*time.Second {
		t.Errorf("Stop took %v, want about DrainTimeout (300 ms)", took)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "drain timeout 300ms") ||
		strings.Contains(err.Error(), "still running") {
		t.Errorf("Stop: %v; want the drain timeout, nothing stuck", err)
	}
	s := a.Stats()
	checkBalance(t, s)
	if s.Collected != 4 || s.Uploaded != 0 || s.Failed != 0 || s.Unconfirmed == 0 || s.Dropped == 0 {
		t.Errorf("stats %+v: want the first sent ones unconfirmed, the rest dropped", s)
	}
}

// TestStopDefaultsAgainstSilentServer: the same with the default config, as
// a user calls it; Stop must end within about defaultDrainTimeout.
func TestStopDefaultsAgainstSilentServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits for the default drain timeout (10 s)")
	}
	py, err := newPyroscope(PyroscopeConfig{URL: silentServer(t)})
	if err != nil {
		t.Fatal(err)
	}
	srcs := []Source{&testSource{name: "arena"}, &testSource{name: "heap"}, &testSource{name: "cpu"}, &testSource{name: "wall"}}
	a, err := Start(Config{AppName: "shop", Sources: srcs, Uploaders: []Uploader{py}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	err = a.Stop(context.Background())
	took := time.Since(begin)
	t.Logf("Stop(context.Background()) against a silent server: %v, %v", took.Round(time.Millisecond), err)
	if took > defaultDrainTimeout+10*time.Second || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Stop took %v and returned %v; want about %v and a deadline error", took, err, defaultDrainTimeout)
	}
	checkBalance(t, a.Stats())
}

// TestStopCancelledContext: with a context cancelled before Stop, nothing
// is stuck, and the error says so: it counts what was not delivered and
// names no source or uploader.
func TestStopCancelledContext(t *testing.T) {
	rec := &recorder{}
	src := &testSource{name: "arena"}
	cfg := fastConfig([]Source{src}, rec)
	a, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "3 uploads", func() bool { return len(rec.uploads()) >= 3 })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = a.Stop(ctx)
	t.Logf("Stop: %v", err)
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "still running") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Stop: %v; want a cancellation error naming nothing stuck", err)
	}
	checkBalance(t, a.Stats())
}

// blockingSource ignores its context: its Collect blocks while block is
// open once armed.
type blockingSource struct {
	name    string
	mu      sync.Mutex
	calls   int
	armed   bool
	block   chan struct{}
	entered chan struct{}
}

func (s *blockingSource) Name() string { return s.name }

func (s *blockingSource) Collect(context.Context) (*profile.Profile, error) {
	s.mu.Lock()
	s.calls++
	armed := s.armed
	s.mu.Unlock()
	if armed {
		s.entered <- struct{}{}
		<-s.block
	}
	return arenaLikeProfile(1, 1000, 100), nil
}

func (s *blockingSource) arm() {
	s.mu.Lock()
	s.armed = true
	s.mu.Unlock()
}

func (s *blockingSource) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// TestNothingAfterStop: a source and an uploader that ignore cancellation
// cannot make Stop wait past its deadline; Stop names them, and once it
// returns no source or uploader is called again and the counters do not
// move, even when the stuck calls return. Run with -race.
func TestNothingAfterStop(t *testing.T) {
	for _, stuck := range []string{"source", "uploader"} {
		t.Run(stuck, func(t *testing.T) {
			src := &blockingSource{name: "arena", block: make(chan struct{}), entered: make(chan struct{}, 1)}
			other := &testSource{name: "heap"}
			upBlock := make(chan struct{})
			upEntered := make(chan struct{}, 1)
			var upMu sync.Mutex
			upCalls, upArmed := 0, false
			up := funcUploader{"stubborn", func(ctx context.Context, u *Upload) error {
				upMu.Lock()
				upCalls++
				armed := upArmed
				upMu.Unlock()
				if armed {
					select {
					case upEntered <- struct{}{}:
					default:
					}
					<-upBlock // ignores ctx
				}
				return nil
			}}
			cfg := fastConfig([]Source{src, other}, up)
			cfg.Interval = 2 * time.Millisecond
			a, err := Start(cfg)
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "uploads", func() bool { return a.Stats().Uploaded >= 4 })
			// Poll Stats concurrently, so that -race sees every counter
			// access.
			pollDone := make(chan struct{})
			var pollWG sync.WaitGroup
			pollWG.Go(func() {
				for {
					select {
					case <-pollDone:
						return
					default:
						a.Stats()
					}
				}
			})
			switch stuck {
			case "source":
				src.arm()
				<-src.entered
			case "uploader":
				upMu.Lock()
				upArmed = true
				upMu.Unlock()
				<-upEntered
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			err = a.Stop(ctx)
			t.Logf("Stop: %v", err)
			want := map[string]string{"source": `source "arena" (Collect)`, "uploader": `uploader "stubborn" (Upload)`}[stuck]
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "still running") || !strings.Contains(err.Error(), want) {
				t.Fatalf("Stop: %v; want a deadline error naming %s", err, want)
			}
			after := a.Stats()
			checkBalance(t, after)
			srcCalls, otherCalls := src.count(), other.count()
			upMu.Lock()
			upAfter := upCalls
			upMu.Unlock()
			// Let the stuck call return, and give the agent's goroutines
			// time to do whatever they would do next.
			close(src.block)
			close(upBlock)
			time.Sleep(100 * time.Millisecond)
			close(pollDone)
			pollWG.Wait()
			if got := a.Stats(); !reflect.DeepEqual(got, after) {
				t.Errorf("counters moved after Stop returned:\n%+v\n%+v", after, got)
			}
			upMu.Lock()
			defer upMu.Unlock()
			if src.count() != srcCalls || other.count() != otherCalls || upCalls != upAfter {
				t.Errorf("calls after Stop: sources %d->%d, %d->%d, uploader %d->%d",
					srcCalls, src.count(), otherCalls, other.count(), upAfter, upCalls)
			}
		})
	}
}

// TestNilLoggerWarns: without a Logger, a persistent failure is reported
// through the default logger, at most once per interval; a transient one
// (a retry that then succeeds) is not.
func TestNilLoggerWarns(t *testing.T) {
	permanent := func(context.Context, int) error { return errors.New("connection refused") }
	tests := []struct {
		name      string
		fail      func(context.Context, int) error
		every     time.Duration
		intervals int // collections before Stop
		warnings  func(n int) bool
	}{
		{"persistent, once an hour: one warning", permanent, time.Hour, 10, func(n int) bool { return n == 1 }},
		{"persistent, no rate limit: one per failure", permanent, time.Nanosecond, 10, func(n int) bool { return n >= 10 }},
		{"one transient failure: none", func(_ context.Context, n int) error {
			if n == 1 {
				return Retryable(errors.New("503"), 0)
			}
			return nil
		}, time.Nanosecond, 3, func(n int) bool { return n == 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs syncBuffer
			def := slog.New(slog.NewTextHandler(&logs, nil))
			rec := &recorder{fail: tt.fail}
			src := &testSource{name: "arena"}
			cfg := fastConfig([]Source{src}, rec)
			cfg.Interval = time.Millisecond
			cfg.Logger = nil
			cfg.warnEvery = tt.every
			cfg.defaultLogger = func() *slog.Logger { return def }
			a, err := Start(cfg)
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "collections", func() bool { return a.Stats().Collected >= uint64(tt.intervals) })
			stopAgent(t, a)
			out := logs.String()
			n := strings.Count(out, "level=WARN")
			if !tt.warnings(n) {
				t.Fatalf("%d warnings:\n%s", n, out)
			}
			if n > 0 && !strings.Contains(out, "connection refused") {
				t.Errorf("the warning does not hold the error:\n%s", out)
			}
		})
	}
}
