package export_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/buildlimit"
	"github.com/arenaprof/arenaprof/internal/testkit/benchsnap"
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
		// 2 MiB: sampled by the runtime at its default MemProfileRate
		// (512 KiB) with probability 1-exp(-4) = 0.98.
		heapStackSink = make([]byte, 2<<20)
		heapStackSink = nil
		return
	}
	if bits&1 == 0 {
		heapStackA(depth-1, bits>>1)
	} else {
		heapStackB(depth-1, bits>>1)
	}
}

// fullBuckets is the profiler's default bound on buckets.
const fullBuckets = 16384

// fullProfiler returns a profiler holding fullBuckets
// buckets, every one of its own stack and size (164 real stacks of 10
// levels times 100 sizes), the state of a service whose collector is full,
// and fills the Go heap's profile with about 1,000 stacks.
func fullProfiler(tb testing.TB) *profiler.Profiler {
	tb.Helper()
	setMeanBytes(tb, 1)
	p := startProfiler(tb)
	stacks := benchsnap.Stacks(fullBuckets/100+1, 10)
	ev := hooks.Event{TypeName: "main.user", MeanBytes: 1, Arena: hooks.NewArenaID(),
		Labels: hooks.NewLabels("handler", "/api/v1/users")}
	for _, st := range stacks {
		ev.Stack = st
		for size := range int64(100) {
			ev.Size = 8 * (size + 1)
			hooks.Emit(&ev)
		}
	}
	if got := p.Stats().Buckets; got != fullBuckets {
		tb.Fatalf("%d buckets, want %d", got, fullBuckets)
	}
	for i := range uint(1024) {
		heapStackStep(10, i)
	}
	return p
}

// BenchmarkHandlerFull serves one request on each path of the handlers a
// service mounts, with a full collector (fullBuckets
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
		})
	}
}

// peakHeapGrowth runs f and returns the peak, while f ran, of the bytes of
// heap objects (live, and dead but not yet swept: what the process holds)
// above their level after a collection before f, sampled every
// millisecond with runtime/metrics (which does not stop the world).
func peakHeapGrowth(f func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	base := read()
	stop, done := make(chan struct{}), make(chan uint64)
	go func() {
		peak := base
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				peak = max(peak, read())
			case <-stop:
				done <- max(peak, read())
				return
			}
		}
	}()
	f()
	close(stop)
	return <-done - base
}

// loadClients is the number of concurrent clients of TestHandlersUnderLoad.
const loadClients = 200

// TestHandlersUnderLoad: 200 clients GET a path at once, with a full
// collector, through a real server whose handlers share one Limiter, as
// arenaprof.Start mounts them. On every path the heap grows by less than
// 512 MiB at its peak (without the bound it grew by 2.6-11 GB), at least
// one client gets its profile, and every other one gets 429.
func TestHandlersUnderLoad(t *testing.T) {
	p := fullProfiler(t)
	limit := buildlimit.New(0)
	mux := http.NewServeMux()
	mux.Handle("/debug/arenaprof", buildlimit.Share(limit, export.Handler(p)))
	mux.Handle("/debug/arenaprof/memory", buildlimit.Share(limit, export.MemoryHandler(p)))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: loadClients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 5 * time.Minute}

	for _, path := range []string{
		"/debug/arenaprof", "/debug/arenaprof?debug=1", "/debug/arenaprof?seconds=1",
		"/debug/arenaprof/memory", "/debug/arenaprof/memory?debug=1",
	} {
		var mu sync.Mutex
		codes := map[int]int{}
		var body []byte // of one answer 200
		growth := peakHeapGrowth(func() {
			var wg sync.WaitGroup
			start := make(chan struct{})
			for range loadClients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					res, err := client.Get(srv.URL + path)
					if err != nil {
						t.Error(err)
						return
					}
					defer res.Body.Close()
					mu.Lock()
					keep := res.StatusCode == http.StatusOK && body == nil
					codes[res.StatusCode]++
					mu.Unlock()
					if !keep {
						io.Copy(io.Discard, res.Body)
						return
					}
					b, err := io.ReadAll(res.Body)
					if err != nil {
						t.Error(err)
					}
					mu.Lock()
					body = b
					mu.Unlock()
				}()
			}
			close(start)
			wg.Wait()
		})
		t.Logf("%s: %d clients, statuses %v, peak heap growth %.1f MiB", path, loadClients, codes, float64(growth)/(1<<20))
		if growth >= 512<<20 {
			t.Errorf("%s: the heap grew by %.0f MiB under %d clients, want under 512 MiB", path, float64(growth)/(1<<20), loadClients)
		}
		if codes[http.StatusOK] == 0 || codes[http.StatusOK]+codes[http.StatusTooManyRequests] != loadClients {
			t.Errorf("%s: statuses %v: want at least one 200 and 429 for the rest", path, codes)
		}
		if body != nil && !strings.Contains(path, "debug=1") {
			prof, err := profile.ParseData(body)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if err := prof.CheckValid(); err != nil || len(prof.Sample) < fullBuckets {
				t.Errorf("%s: %d samples, %v", path, len(prof.Sample), err)
			}
		}
	}
}

// slowClient is a ResponseWriter whose first Write signals wrote and
// blocks until release is closed: a client that reads slowly, holding its
// build slot.
type slowClient struct {
	h       http.Header
	once    sync.Once
	wrote   chan struct{}
	release chan struct{}
}

func newSlowClient() *slowClient {
	return &slowClient{h: http.Header{}, wrote: make(chan struct{}), release: make(chan struct{})}
}

func (w *slowClient) Header() http.Header { return w.h }
func (w *slowClient) WriteHeader(int)     {}
func (w *slowClient) Write(b []byte) (int, error) {
	w.once.Do(func() { close(w.wrote) })
	<-w.release
	return len(b), nil
}

// hold serves a request to h for a slow client and returns once the
// request holds its build slot; close the client's release to end it, then
// wait on the returned channel.
func hold(h http.Handler, target string) (*slowClient, chan struct{}) {
	w := newSlowClient()
	done := make(chan struct{})
	go func() {
		h.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
		close(done)
	}()
	<-w.wrote
	return w, done
}

// TestHandlerLimiter: handlers given one Limiter (buildlimit.Share) share
// its slots, handlers without one do not; a request that finds no slot waits, then gets 429
// with Retry-After and X-Go-Pprof; a client that leaves while waiting gets
// nothing written; a seconds=N window's build waits for its slot past the
// one-second wait.
func TestHandlerLimiter(t *testing.T) {
	p := startProfiler(t)
	l := buildlimit.New(1)
	if l.Max() != 1 || buildlimit.New(0).Max() != buildlimit.DefaultMaxBuilds || buildlimit.New(-3).Max() != buildlimit.DefaultMaxBuilds {
		t.Fatalf("Max: %d %d %d", l.Max(), buildlimit.New(0).Max(), buildlimit.New(-3).Max())
	}
	arenaH := buildlimit.Share(l, export.Handler(p))
	memH := buildlimit.Share(l, export.MemoryHandler(p))
	own := export.Handler(p) // a Limiter of its own

	w, done := hold(arenaH, "/x")
	for _, tc := range []struct {
		name string
		h    http.Handler
		code int
	}{
		{"memory, shared", memH, http.StatusTooManyRequests},
		{"debug, shared", arenaH, http.StatusTooManyRequests},
		{"own limiter", own, http.StatusOK},
	} {
		target := "/x"
		if tc.name == "debug, shared" {
			target = "/x?debug=1"
		}
		rec := httptest.NewRecorder()
		tc.h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		if rec.Code != tc.code {
			t.Errorf("%s: status %d, want %d", tc.name, rec.Code, tc.code)
		}
		if tc.code == http.StatusTooManyRequests && (rec.Header().Get("Retry-After") != "1" || rec.Header().Get("X-Go-Pprof") != "1" ||
			!strings.Contains(rec.Body.String(), "bound on concurrent builds")) {
			t.Errorf("%s: headers %v body %q", tc.name, rec.Header(), rec.Body)
		}
	}

	// A client that leaves while it waits: nothing written, at once.
	ctx, cancel := context.WithCancel(context.Background())
	rec := httptest.NewRecorder()
	left := make(chan struct{})
	go func() {
		memH.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil).WithContext(ctx))
		close(left)
	}()
	cancel()
	<-left
	if rec.Body.Len() != 0 || rec.Header().Get("Retry-After") != "" {
		t.Errorf("a gone client got %d %v %q", rec.Code, rec.Header(), rec.Body)
	}
	close(w.release)
	<-done

	if testing.Short() {
		return // the rest waits two seconds
	}
	// A window ending while the slot is held waits for it.
	window := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		arenaH.ServeHTTP(rec, httptest.NewRequest("GET", "/x?seconds=1", nil))
		window <- rec.Code
	}()
	time.Sleep(100 * time.Millisecond)
	w, done = hold(memH, "/x")
	time.Sleep(2 * time.Second) // the window ends and its build waits past the one-second wait
	select {
	case code := <-window:
		t.Fatalf("the window's request ended with %d while the slot was held", code)
	default:
	}
	close(w.release)
	<-done
	if code := <-window; code != http.StatusOK {
		t.Errorf("the window's request: %d, want 200 once the slot is free", code)
	}
}
