package export_test

import (
	"github.com/arenaprof/arenaprof/internal/pprofmt"

	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/estimate"
)

// TestHandlerNoTraceID: the profile served leaves trace_id out (a series
// label per request in Pyroscope v1.19, which scrapes it through Alloy)
// and keeps span_id and the other labels.
func TestHandlerNoTraceID(t *testing.T) {
	setMeanBytes(t, 1)
	p := startProfiler(t)
	a := newTestArena(t, 9, hooks.NewLabels("span_id", "00000000000000aa", "span_name", "GET /x", "trace_id", "000000000000000000000000000000bb"))
	allocSmall(a, 10)
	rec := httptest.NewRecorder()
	export.Handler(p).ServeHTTP(rec, httptest.NewRequest("GET", "/debug/arenaprof", nil))
	q, err := profile.Parse(rec.Result().Body)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Sample) == 0 {
		t.Fatal("no sample")
	}
	for _, s := range q.Sample {
		if len(s.Label["trace_id"]) != 0 || len(s.Label["span_id"]) != 1 || len(s.Label["span_name"]) != 1 {
			t.Errorf("labels %v, want span_id and span_name, no trace_id", s.Label)
		}
	}
}

func TestHandlerFullProfile(t *testing.T) {
	setMeanBytes(t, 1)
	p := startProfiler(t)
	a := newTestArena(t, 9, hooks.Labels{})
	allocSmall(a, 10)
	rec := httptest.NewRecorder()
	export.Handler(p).ServeHTTP(rec, httptest.NewRequest("GET", "/debug/arenaprof", nil))
	res := rec.Result()
	if res.StatusCode != 200 {
		t.Fatalf("status %d: %s", res.StatusCode, rec.Body)
	}
	for k, v := range map[string]string{
		"Content-Type":           "application/octet-stream",
		"Content-Disposition":    `attachment; filename="arenaprof.pb.gz"`,
		"X-Content-Type-Options": "nosniff",
	} {
		if got := res.Header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	q, err := profile.Parse(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if v := sumValues(q); v[pprofmt.IndexAllocSamples] != 10 || pprofmt.WindowOf(q) != estimate.WindowEnd {
		t.Errorf("values %v window %v", v, pprofmt.WindowOf(q))
	}
}

func TestHandlerErrors(t *testing.T) {
	p := startProfiler(t)
	h := export.Handler(p, export.WithMaxSeconds(60))
	for _, query := range []string{
		"seconds=", "seconds=abc", "seconds=0", "seconds=-1", "seconds=1.5", "seconds=61",
		"seconds=99999999999999999999", "seconds=+", "debug=2", "debug=x", "seconds=1e3",
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/x?"+query, nil))
		res := rec.Result()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusBadRequest || res.Header.Get("X-Go-Pprof") != "1" ||
			!strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") ||
			res.Header.Get("Content-Disposition") != "" || len(body) == 0 {
			t.Errorf("%s: status %d headers %v body %q", query, res.StatusCode, res.Header, body)
		}
	}
	rec := httptest.NewRecorder()
	export.Handler(nil).ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("X-Go-Pprof") != "1" {
		t.Errorf("nil profiler: %d %v", rec.Code, rec.Header())
	}
}

func TestHandlerWriteTimeout(t *testing.T) {
	p := startProfiler(t)
	srv := httptest.NewUnstartedServer(export.Handler(p))
	srv.Config.WriteTimeout = 2 * time.Second
	srv.Start()
	defer srv.Close()
	res, err := http.Get(srv.URL + "/?seconds=5")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "WriteTimeout") {
		t.Errorf("status %d body %q", res.StatusCode, body)
	}
}

// The handler stops waiting when the client goes away. The deadline only
// keeps a broken handler from hanging the test run.
func TestHandlerCancellation(t *testing.T) {
	p := startProfiler(t)
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequest("GET", "/x?seconds=3600", nil).WithContext(ctx)
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		export.Handler(p).ServeHTTP(rec, req)
		close(done)
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the handler kept waiting after the client went away")
	}
	if rec.Body.Len() != 0 {
		t.Errorf("wrote %d bytes to a gone client", rec.Body.Len())
	}
}

// A one-second delta window through a real server.
func TestHandlerSeconds(t *testing.T) {
	if testing.Short() {
		t.Skip("waits one second")
	}
	setMeanBytes(t, 1)
	p := startProfiler(t)
	a := newTestArena(t, 10, hooks.Labels{})
	allocSmall(a, 10) // before the window
	srv := httptest.NewServer(export.Handler(p))
	defer srv.Close()
	type result struct {
		prof *profile.Profile
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		res, err := http.Get(srv.URL + "/?seconds=1")
		if err != nil {
			ch <- result{nil, err}
			return
		}
		defer res.Body.Close()
		prof, err := profile.Parse(res.Body)
		ch <- result{prof, err}
	}()
	time.Sleep(300 * time.Millisecond)
	allocSmall(a, 4) // inside the window
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	v := sumValues(r.prof)
	// The window's start is not synchronised with the request's arrival,
	// but 300ms is far more than the handler needs to take its first
	// snapshot.
	if v[pprofmt.IndexAllocSamples] != 4 || v[pprofmt.IndexInuseObjects] != 14 || pprofmt.WindowOf(r.prof) != estimate.WindowBoth {
		t.Errorf("values %v window %v", v, pprofmt.WindowOf(r.prof))
	}
	if r.prof.DurationNanos < int64(time.Second) {
		t.Errorf("duration %d", r.prof.DurationNanos)
	}
}

func TestHandlerDebug(t *testing.T) {
	setMeanBytes(t, 64)
	p := startProfiler(t)
	a := newTestArena(t, 11, hooks.Labels{})
	allocSmall(a, 20000)
	allocBig(a, 200) // 800 KiB, above main.small's 312 KiB
	rec := httptest.NewRecorder()
	export.Handler(p).ServeHTTP(rec, httptest.NewRequest("GET", "/x?debug=1&rows=1", nil))
	body := rec.Body.String()
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("status %d headers %v", rec.Code, rec.Header())
	}
	for _, want := range []string{"window=end", "95% INTERVAL", "main.big", "export_test.allocBig", "by func", "by type", "showing 1 of 2 groups"} {
		if !strings.Contains(body, want) {
			t.Errorf("table lacks %q:\n%s", want, body)
		}
	}
	t.Logf("\n%s", body)
}

// TestHandlerDebugRows: rows=N sets the rows of each debug=1 table (50
// without it), a positive integer up to 10000; any other value, or rows
// without debug=1, gets 400 with a text/plain message.
func TestHandlerDebugRows(t *testing.T) {
	setMeanBytes(t, 64)
	p := startProfiler(t)
	a := newTestArena(t, 12, hooks.Labels{})
	allocSmall(a, 20000)
	allocBig(a, 200)
	h := export.Handler(p)
	for _, tc := range []struct {
		query string
		code  int
		want  string // in the body
	}{
		{"debug=1", 200, "by func"},
		{"debug=1&rows=1", 200, "showing 1 of 2 groups"},
		{"debug=1&rows=2", 200, "main.big"},
		{"debug=1&rows=10000", 200, "by type"},
		{"debug=1&rows=007", 200, "by type"},
		{"debug=1&rows=0", 400, `bad rows parameter "0": want a positive integer`},
		{"debug=1&rows=-1", 400, "bad rows parameter"},
		{"debug=1&rows=", 400, "bad rows parameter"},
		{"debug=1&rows=x", 400, "bad rows parameter"},
		{"debug=1&rows=1.5", 400, "bad rows parameter"},
		{"debug=1&rows=1e3", 400, "bad rows parameter"},
		{"debug=1&rows=10001", 400, "rows=10001 is above the limit of 10000"},
		{"debug=1&rows=99999999999999999999", 400, "bad rows parameter"},
		{"rows=5", 400, "debug=1 tables only"},
		{"debug=0&rows=5", 400, "debug=1 tables only"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/x?"+tc.query, nil))
			body := rec.Body.String()
			if rec.Code != tc.code || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") || !strings.Contains(body, tc.want) {
				t.Fatalf("status %d (want %d), Content-Type %q, body lacks %q:\n%s", rec.Code, tc.code, rec.Header().Get("Content-Type"), tc.want, body)
			}
			if tc.code == 400 && rec.Header().Get("X-Go-Pprof") != "1" {
				t.Errorf("400 without X-Go-Pprof: %v", rec.Header())
			}
			// Only rows=1 cuts the tables of two sites and two types short.
			if cut := strings.Contains(body, "showing 1 of 2 groups"); tc.code == 200 && cut != strings.HasSuffix(tc.query, "rows=1") {
				t.Errorf("cut short: %v:\n%s", cut, body)
			}
		})
	}
}

// Importing export registers nothing on http.DefaultServeMux.
func TestNoDefaultServeMux(t *testing.T) {
	for _, path := range []string{"/debug/arenaprof", "/debug/pprof/arenas", "/debug/arenaprof/"} {
		_, pattern := http.DefaultServeMux.Handler(httptest.NewRequest("GET", path, nil))
		if pattern != "" {
			t.Errorf("%s is served by pattern %q", path, pattern)
		}
	}
}

// TestHandlerBoundsDeltas: past WithMaxDeltas running seconds=N requests,
// more get 429 with Retry-After at once; a client that leaves frees its
// slot. Many concurrent requests never run more than the bound.
func TestHandlerBoundsDeltas(t *testing.T) {
	p := startProfiler(t)
	h := export.Handler(p, export.WithMaxDeltas(2))
	type result struct {
		code  int
		retry string
	}
	start := func(ctx context.Context, seconds string) chan result {
		c := make(chan result, 1)
		go func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/x?seconds="+seconds, nil).WithContext(ctx))
			c <- result{rec.Code, rec.Result().Header.Get("Retry-After")}
		}()
		return c
	}
	// Start two long requests and wait until both hold their slot: a probe
	// whose client is already gone holds a slot for an instant only and
	// is refused once both are held. A long request refused because a
	// probe held a slot at that instant is started again.
	ctx1, cancel1 := context.WithCancel(context.Background())
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	gone, cancelGone := context.WithCancel(context.Background())
	cancelGone()
	long1, long2 := start(ctx1, "3600"), start(ctx2, "3600")
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case r := <-long1:
			if r.code != http.StatusTooManyRequests {
				t.Fatalf("long request: %+v", r)
			}
			long1 = start(ctx1, "3600")
		case r := <-long2:
			if r.code != http.StatusTooManyRequests {
				t.Fatalf("long request: %+v", r)
			}
			long2 = start(ctx2, "3600")
		default:
		}
		if r := <-start(gone, "1"); r.code == http.StatusTooManyRequests {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the bound never took effect")
		}
		time.Sleep(time.Millisecond)
	}
	r := <-start(context.Background(), "5")
	if r.code != http.StatusTooManyRequests || r.retry == "" {
		t.Fatalf("third request: %+v, want 429 with Retry-After", r)
	}
	if n, err := strconv.Atoi(r.retry); err != nil || n < 3500 || n > 3600 {
		t.Errorf("Retry-After %q, want the seconds until the first window ends", r.retry)
	}
	cancel1() // the first client leaves: its slot is free again
	<-long1
	deadline = time.Now().Add(30 * time.Second)
	for {
		r := <-start(context.Background(), "1")
		if r.code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slot of a gone client was never freed: %+v", r)
		}
	}
	cancel2()
	<-long2

	// 40 concurrent one-second requests against a bound of 2: every one is
	// either served or refused at once, never lost.
	var wg sync.WaitGroup
	var ok, refused atomic.Int32
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch r := <-start(context.Background(), "1"); r.code {
			case http.StatusOK:
				ok.Add(1)
			case http.StatusTooManyRequests:
				refused.Add(1)
			default:
				t.Errorf("status %d", r.code)
			}
		}()
	}
	wg.Wait()
	if ok.Load() < 1 || refused.Load() < 1 || ok.Load()+refused.Load() != 40 {
		t.Errorf("%d served, %d refused of 40 against a bound of 2", ok.Load(), refused.Load())
	}
}
