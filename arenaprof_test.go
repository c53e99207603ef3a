package arenaprof_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof"
	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export/agent"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
	"github.com/arenaprof/arenaprof/internal/testkit/meantest"
	"github.com/arenaprof/arenaprof/report"
)

type order struct {
	id    int64
	items [6]int64
}

// allocOrders allocates n orders of 56 bytes each.
func allocOrders(a *arena.Arena, n int) {
	for i := range n {
		arena.New[order](a).id = int64(i)
	}
}

// The paths Start mounts on Config.Mux (see Config.Mux).
const (
	handlerPath = "/debug/arenaprof"
	memoryPath  = "/debug/arenaprof/memory"
	arenasPath  = "/debug/arenaprof/arenas"
	peakPath    = "/debug/arenaprof/peak"
	rssPath     = "/debug/arenaprof/rss"
	uiPath      = "/debug/arenaprof/ui"
	statsPath   = "/debug/arenaprof/stats"
)

// arenaProfiles are the arena profiles alone, without the runtime's.
var arenaProfiles = []string{"arena", "arenas", "peak"}

// setMeanBytes sets the sampling mean for the rest of tb (meantest.Set).
func setMeanBytes(tb testing.TB, n int64) { tb.Helper(); meantest.Set(tb, n) }

// TestStartServesAndWrites: one call mounts the handler and writes the
// profile of every interval into a directory; Stop flushes the last one.
func TestStartServesAndWrites(t *testing.T) {
	setMeanBytes(t, 1)
	dir := t.TempDir()
	mux := http.NewServeMux()
	s, err := arenaprof.Start(arenaprof.Config{
		AppName: "shop", Mux: mux, Dir: dir, Profiles: arenaProfiles,
	})
	if err != nil {
		t.Fatal(err)
	}
	a := arena.NewArena()
	allocOrders(a, 100)

	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := http.Get(srv.URL + handlerPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	prof, err := report.Parse(bytes.NewReader(body), report.ParseOptions{})
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	if got := prof.Sample[0].Value[pprofmt.IndexAllocSamples]; len(prof.Sample) != 1 || got != 100 {
		t.Errorf("handler profile: %d samples, %d events", len(prof.Sample), got)
	}

	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*-arena.pb.gz"))
	var events int64
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := report.Parse(bytes.NewReader(data), report.ParseOptions{})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, smp := range p.Sample {
			events += smp.Value[pprofmt.IndexAllocSamples]
		}
	}
	if events != 100 {
		t.Errorf("the directory's profiles (%v) hold %d events, want 100", files, events)
	}
	// The live-arenas and peak profiles are uploaded beside them.
	for _, name := range []string{"arenas", "peak"} {
		if fs, _ := filepath.Glob(filepath.Join(dir, "*-"+name+".pb.gz")); len(fs) == 0 {
			t.Errorf("no %s profile in the directory", name)
		}
	}
	a.Free()
}

// TestStartErrors: bad configuration fails at Start, naming the field,
// never at upload time; no error prints a secret (secret, when set, must
// not appear in it).
func TestStartErrors(t *testing.T) {
	taken := http.NewServeMux()
	taken.Handle(handlerPath, http.NotFoundHandler())
	const key = "s3cr3t-k3y"
	pyro := func(headers map[string]string) *agent.PyroscopeConfig {
		return &agent.PyroscopeConfig{URL: "http://127.0.0.1:4040", Headers: headers}
	}
	for _, tc := range []struct {
		name   string
		cfg    arenaprof.Config
		want   string
		secret string
	}{
		{"port above 65535", arenaprof.Config{AppName: "x", PyroscopeURL: "http://127.0.0.1:99999999"}, "Config.PyroscopeURL: agent: PyroscopeConfig.URL: port 99999999 is outside 1..65535", ""},
		{"port 0", arenaprof.Config{AppName: "x", OTLPURL: "http://127.0.0.1:0"}, "Config.OTLPURL: agent: OTLPConfig.URL: port 0 is outside 1..65535", ""},
		{"port in Pyroscope", arenaprof.Config{AppName: "x", Pyroscope: &agent.PyroscopeConfig{URL: "https://u:" + key + "@h:70000"}}, "arenaprof: agent: PyroscopeConfig.URL: port 70000", key},
		{"no host", arenaprof.Config{AppName: "x", PyroscopeURL: "http://:4040"}, "has no host", ""},
		{"url with a secret, unparsable", arenaprof.Config{AppName: "x", OTLPURL: "http://u:" + key + "@h:x"}, "OTLPConfig.URL is not a valid URL", key},
		{"header value with DEL", arenaprof.Config{AppName: "x", Pyroscope: pyro(map[string]string{"X-Key": key + "\x7f"})}, `PyroscopeConfig.Headers: invalid header value of "X-Key": a control character, 0x7f, at byte 10`, key},
		{"header value with a line break", arenaprof.Config{AppName: "x", Pyroscope: pyro(map[string]string{"X-Key": key + "\r\nX: y"})}, "0x0d", key},
		{"header name holding the key", arenaprof.Config{AppName: "x", OTLP: &agent.OTLPConfig{URL: "http://h:4318", Headers: map[string]string{"Authorization: Bearer " + key: ""}}}, "OTLPConfig.Headers: invalid header name of 32 bytes: byte 13 is ':'", key},
		{"empty header name", arenaprof.Config{AppName: "x", Pyroscope: pyro(map[string]string{"": "v"})}, "invalid header name: empty", ""},
		{"no app name", arenaprof.Config{Dir: t.TempDir()}, "AppName", ""},
		{"bad url", arenaprof.Config{AppName: "x", PyroscopeURL: "ftp://h"}, "http", ""},
		{"bad buckets", arenaprof.Config{MaxBuckets: -1}, "bucket", ""},
		{"mux taken", arenaprof.Config{Mux: taken}, handlerPath, ""},
		{"unknown profile", arenaprof.Config{Profiles: []string{"arena", "goroutine"}}, `unknown profile "goroutine"`, ""},
		{"profile twice", arenaprof.Config{Profiles: []string{"heap", "heap"}}, `"heap" twice`, ""},
		{"negative mean", arenaprof.Config{SampleMeanBytes: -1}, "SampleMeanBytes", ""},
		{"mean too large", arenaprof.Config{SampleMeanBytes: 1<<40 + 1}, "SampleMeanBytes", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := arenaprof.Start(tc.cfg)
			if err == nil {
				s.Stop(context.Background())
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
			if tc.secret != "" && strings.Contains(err.Error(), tc.secret) {
				t.Errorf("error %q prints the secret", err)
			}
		})
	}
	// Nothing is left running: sampling is off again.
	if samplingstate.Current().MeanBytes != 0 {
		t.Error("a failed Start left sampling on")
	}
}

// TestStartPyroscope pushes through the one-call setup to the real
// Pyroscope server named by ARENAPROF_PYROSCOPE_URL (.ci/run starts one)
// and checks that the server lists the service's arena profile.
func TestStartPyroscope(t *testing.T) {
	url := os.Getenv("ARENAPROF_PYROSCOPE_URL")
	if url == "" {
		t.Skip("ARENAPROF_PYROSCOPE_URL is not set: no Pyroscope server to push to")
	}
	setMeanBytes(t, 64)
	app := fmt.Sprintf("arenaprof-start-%d", time.Now().UnixNano())
	begin := time.Now()
	startAllocStop(t, arenaprof.Config{AppName: app, PyroscopeURL: url})
	// The server indexes asynchronously: poll for the service name.
	want := app
	deadline := time.Now().Add(20 * time.Second)
	for {
		names, err := labelValues(url, "service_name", begin)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if n == want {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server lists services %v, not %q", names, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// startAllocStop starts cfg, allocates in an arena and stops the session,
// which uploads the interval.
func startAllocStop(t *testing.T, cfg arenaprof.Config) *arenaprof.Session {
	t.Helper()
	s, err := arenaprof.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := arena.NewArena()
	allocOrders(a, 10000)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	a.Free()
	return s
}

// TestStartOTLP pushes through the one-call setup over OTLP, the service
// name taken from OTEL_SERVICE_NAME and the endpoint from
// OTEL_EXPORTER_OTLP_ENDPOINT, to a receiver that records the requests.
func TestStartOTLP(t *testing.T) {
	setMeanBytes(t, 64)
	var mu sync.Mutex
	var got []*http.Request
	var named bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body, _ := io.ReadAll(zr)
		mu.Lock()
		got = append(got, r)
		named = named || bytes.Contains(body, []byte("shop-from-env"))
		mu.Unlock()
	}))
	defer srv.Close()
	t.Setenv("OTEL_SERVICE_NAME", "shop-from-env")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	s := startAllocStop(t, arenaprof.Config{OTLP: &agent.OTLPConfig{}, Profiles: arenaProfiles})
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 {
		t.Fatal("no request")
	}
	r := got[0]
	if r.URL.Path != "/v1development/profiles" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		t.Errorf("request %s %s (%s)", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
	}
	if !named {
		t.Error("no request names the service from OTEL_SERVICE_NAME")
	}
	if st := s.Stats(); st.Uploaded == 0 || st.Failed != 0 {
		t.Errorf("stats %+v", st)
	}
}

// labelValues asks a Pyroscope server for the values of a label.
func labelValues(base, name string, since time.Time) ([]string, error) {
	req, _ := json.Marshal(map[string]any{
		"name": name, "start": since.Add(-time.Minute).UnixMilli(), "end": time.Now().Add(time.Minute).UnixMilli(),
	})
	resp, err := http.Post(base+"/querier.v1.QuerierService/LabelValues", "application/json", bytes.NewReader(req))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("LabelValues: %s: %s", resp.Status, body)
	}
	var out struct{ Names []string }
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("LabelValues: %v: %s", err, body)
	}
	return out.Names, nil
}

// TestStartAllOrNothing: with either path taken on the mux, Start fails
// with a one-line error, mounts nothing and leaves sampling off; a later
// Start on another mux works. A pattern with a method on the path does
// not conflict, and does not stop Start.
func TestStartAllOrNothing(t *testing.T) {
	for _, tc := range []struct {
		taken, free string
	}{
		{memoryPath, handlerPath},
		{handlerPath, memoryPath},
		{uiPath, handlerPath},
	} {
		t.Run(tc.taken, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.Handle(tc.taken, http.NotFoundHandler())
			s, err := arenaprof.Start(arenaprof.Config{Mux: mux, AppName: "x", Dir: t.TempDir()})
			if err == nil {
				s.Stop(context.Background())
				t.Fatal("Start on a mux with a taken path: no error")
			}
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") || !strings.Contains(msg, tc.taken) {
				t.Errorf("error %q: want one line naming %s", msg, tc.taken)
			}
			if _, pattern := mux.Handler(httptest.NewRequest("GET", tc.free, nil)); pattern == tc.free {
				t.Errorf("a failed Start left %s mounted", tc.free)
			}
			if samplingstate.Current().MeanBytes != 0 {
				t.Error("a failed Start left sampling on")
			}
			other := http.NewServeMux()
			s, err = arenaprof.Start(arenaprof.Config{Mux: other})
			if err != nil {
				t.Fatalf("Start on a free mux after a failed one: %v", err)
			}
			defer s.Stop(context.Background())
			for _, path := range []string{handlerPath, memoryPath, uiPath} {
				rec := httptest.NewRecorder()
				other.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
				if rec.Code != http.StatusOK {
					t.Errorf("%s: status %d", path, rec.Code)
				}
			}
		})
	}
	t.Run("method pattern", func(t *testing.T) {
		mux := http.NewServeMux()
		mux.Handle("POST "+handlerPath, http.NotFoundHandler())
		s, err := arenaprof.Start(arenaprof.Config{Mux: mux})
		if err != nil {
			t.Fatalf("a POST pattern does not conflict: %v", err)
		}
		s.Stop(context.Background())
	})
}

// TestStartSharesLimiter: the handlers Start mounts share one bound of
// MaxConcurrentBuilds: while a slow client holds the only slot on one
// path, a request on the other path waits for it, then gets 429 with
// Retry-After.
func TestStartSharesLimiter(t *testing.T) {
	mux := http.NewServeMux()
	s, err := arenaprof.Start(arenaprof.Config{Mux: mux, MaxConcurrentBuilds: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(context.Background())
	w := &blockingWriter{h: http.Header{}, wrote: make(chan struct{}), release: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		mux.ServeHTTP(w, httptest.NewRequest("GET", handlerPath, nil))
		close(done)
	}()
	<-w.wrote // the first request holds the slot while it writes
	for _, path := range []string{memoryPath, handlerPath + "?debug=1"} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
			t.Errorf("%s while the slot is held: %d %v", path, rec.Code, rec.Header())
		}
	}
	close(w.release)
	<-done
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", memoryPath, nil))
	if rec.Code != http.StatusOK {
		t.Errorf("after the slot is freed: %d", rec.Code)
	}
	if _, err := arenaprof.Start(arenaprof.Config{MaxConcurrentBuilds: -1}); err == nil {
		t.Error("MaxConcurrentBuilds -1: no error")
	}
}

// blockingWriter is a ResponseWriter whose first Write signals wrote and
// blocks until release is closed: a client that reads slowly.
type blockingWriter struct {
	h       http.Header
	once    sync.Once
	wrote   chan struct{}
	release chan struct{}
}

func (w *blockingWriter) Header() http.Header { return w.h }
func (w *blockingWriter) WriteHeader(int)     {}
func (w *blockingWriter) Write(b []byte) (int, error) {
	w.once.Do(func() { close(w.wrote) })
	<-w.release
	return len(b), nil
}

// TestConfigRedacted: however a Config is printed (fmt's verbs, log/slog's
// JSON and text handlers, encoding/json, as a field of another value), no
// credential shows.
func TestConfigRedacted(t *testing.T) {
	secrets := []string{"url-s3cret", "query-t0ken", "lone-t0ken", "basic-s3cret", "bearer-t0ken", "header-s3cret", "tenant-s3cret"}
	for _, cfg := range []arenaprof.Config{
		{
			AppName:      "shop",
			Labels:       map[string]string{"env": "prod"},
			Mux:          http.NewServeMux(),
			PyroscopeURL: "https://alice:url-s3cret@pyroscope:4040/base?access_token=query-t0ken&region=eu",
			Pyroscope: &agent.PyroscopeConfig{
				URL: "https://bob:url-s3cret@pyroscope:4040", TenantID: "tenant-s3cret",
				BasicAuthUser: "bob", BasicAuthPassword: "basic-s3cret", BearerToken: "bearer-t0ken",
				Headers: map[string]string{"X-Api-Key": "header-s3cret"},
			},
			Interval:            10 * time.Second,
			MaxConcurrentBuilds: 2,
			Logger:              slog.Default(),
		},
		{AppName: "shop", PyroscopeURL: "https://lone-t0ken@pyroscope:4040/?API_KEY=query-t0ken"},
		{AppName: "shop", PyroscopeURL: "http:alice:url-s3cret@pyroscope:4040"},
		{
			AppName: "shop",
			OTLPURL: "https://alice:url-s3cret@otel-collector:4318/?api_key=query-t0ken",
			OTLP: &agent.OTLPConfig{
				URL:                "https://bob:url-s3cret@otel-collector:4318",
				Headers:            map[string]string{"Authorization": "Bearer bearer-t0ken", "X-Api-Key": "header-s3cret"},
				Timeout:            5 * time.Second,
				ResourceAttributes: map[string]string{"deployment.environment": "prod"},
			},
		},
		{AppName: "shop", OTLPURL: "https://lone-t0ken@otel-collector:4318"},
	} {
		var outs []string
		for _, verb := range []string{"%v", "%+v", "%s", "%#v"} {
			outs = append(outs, fmt.Sprintf(verb, cfg), fmt.Sprintf(verb, &cfg), fmt.Sprintf(verb, struct{ C arenaprof.Config }{cfg}))
		}
		for _, h := range []func(io.Writer) slog.Handler{
			func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, nil) },
			func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) },
		} {
			var buf bytes.Buffer
			l := slog.New(h(&buf))
			l.Info("start", "cfg", cfg, "ptr", &cfg)
			l.Info("start", slog.Any("cfg", cfg))
			outs = append(outs, buf.String())
		}
		for _, v := range []any{cfg, &cfg, struct{ C arenaprof.Config }{cfg}} {
			data, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(data) {
				t.Errorf("invalid JSON %s", data)
			}
			outs = append(outs, string(data))
		}
		for _, out := range outs {
			for _, s := range secrets {
				if strings.Contains(out, s) {
					t.Errorf("%q shows %s", out, s)
				}
			}
			if !strings.Contains(out, "shop") {
				t.Errorf("%q lacks the app name", out)
			}
		}
		t.Logf("%v", outs[0])
	}
}

// TestSecondStart: a Start while a session runs fails, naming the running
// session, and changes nothing (the first session's mean stays); after the
// first's Stop, which restores the mean, Start works again. Of Starts
// racing each other, exactly one succeeds.
func TestSecondStart(t *testing.T) {
	setMeanBytes(t, 4096)
	first, err := arenaprof.Start(arenaprof.Config{AppName: "shop", SampleMeanBytes: 512})
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []arenaprof.Config{
		{AppName: "other", SampleMeanBytes: 1 << 20},
		{},
		{Mux: http.NewServeMux()},
	} {
		s, err := arenaprof.Start(cfg)
		if err == nil {
			s.Stop(context.Background())
			t.Fatalf("a second Start(%v) succeeded", cfg)
		}
		msg := err.Error()
		for _, want := range []string{"running already", `AppName "shop"`, "TestSecondStart", "arenaprof_test.go:"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not say %q", msg, want)
			}
		}
		if got := hooks.MeanBytes(); got != 512 {
			t.Errorf("the first session's mean became %d, want 512", got)
		}
	}
	if err := first.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := hooks.MeanBytes(); got != 4096 {
		t.Errorf("mean after Stop: %d, want 4096 (the one Start found)", got)
	}
	second, err := arenaprof.Start(arenaprof.Config{SampleMeanBytes: 1 << 20})
	if err != nil {
		t.Fatalf("Start after Stop: %v", err)
	}
	second.Stop(context.Background())
	first.Stop(context.Background()) // again: changes nothing
	if got := hooks.MeanBytes(); got != 4096 {
		t.Errorf("mean after both Stops: %d, want 4096", got)
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	var started []*arenaprof.Session
	for range 8 {
		wg.Go(func() {
			if s, err := arenaprof.Start(arenaprof.Config{SampleMeanBytes: 2048}); err == nil {
				mu.Lock()
				started = append(started, s)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(started) != 1 {
		t.Errorf("%d of 8 racing Starts succeeded, want 1", len(started))
	}
	for _, s := range started {
		s.Stop(context.Background())
	}
	if got := hooks.MeanBytes(); got != 4096 {
		t.Errorf("mean after the racing sessions: %d, want 4096", got)
	}
}

// exactRouter is a router with exact paths only and no way to ask what it
// holds, as chi and gorilla/mux are to Start: it records what is mounted,
// and panics on a path registered twice when strict.
type exactRouter struct {
	handlers map[string]http.Handler
	strict   bool
}

func (r *exactRouter) Handle(path string, h http.Handler) {
	if _, ok := r.handlers[path]; ok && r.strict {
		panic("exactRouter: " + path + " registered twice")
	}
	r.handlers[path] = h
}

func (r *exactRouter) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if h, ok := r.handlers[req.URL.Path]; ok {
		h.ServeHTTP(w, req)
		return
	}
	http.NotFound(w, req)
}

// TestStartRouter: Config.Mux takes any router with Handle(string,
// http.Handler); it gets exactly the five documented paths, which serve
// profiles, and nothing under /debug/pprof/. A nil *http.ServeMux is no
// Mux. A router that panics on a taken path makes Start fail in one line,
// with nothing left running.
func TestStartRouter(t *testing.T) {
	r := &exactRouter{handlers: map[string]http.Handler{}}
	s, err := arenaprof.Start(arenaprof.Config{Mux: r})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{handlerPath, arenasPath, memoryPath, peakPath, rssPath, statsPath, uiPath}
	if got := slices.Sorted(maps.Keys(r.handlers)); !slices.Equal(got, want) {
		t.Errorf("mounted %q, want %q", got, want)
	}
	for _, path := range append(want, "/debug/pprof/") {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		// The router's own 404 (peak's handler answers 404 too, with no
		// peak yet, in a body of its own).
		unrouted := rec.Body.String() == "404 page not found\n"
		if mounted := path != "/debug/pprof/"; unrouted == mounted || mounted && rec.Code != http.StatusOK && path != peakPath {
			t.Errorf("%s: status %d %q, want it mounted: %v", path, rec.Code, rec.Body, mounted)
		}
	}
	s.Stop(context.Background())

	var nilMux *http.ServeMux
	if got := (arenaprof.Config{Mux: nilMux}).String(); strings.Contains(got, "Mux") {
		t.Errorf("a Config with a nil *http.ServeMux prints as %s, a Mux set", got)
	}
	s, err = arenaprof.Start(arenaprof.Config{Mux: nilMux})
	if err != nil {
		t.Fatalf("Start with a nil *http.ServeMux: %v", err)
	}
	s.Stop(context.Background())

	setMeanBytes(t, 4096)
	strict := &exactRouter{handlers: map[string]http.Handler{peakPath: http.NotFoundHandler()}, strict: true}
	s, err = arenaprof.Start(arenaprof.Config{Mux: strict, SampleMeanBytes: 64})
	if err == nil {
		s.Stop(context.Background())
		t.Fatal("Start on a router that refused a path: no error")
	}
	if msg := err.Error(); strings.ContainsAny(msg, "\n\r") || !strings.Contains(msg, peakPath) {
		t.Errorf("error %q: want one line naming %s", msg, peakPath)
	}
	if got := hooks.MeanBytes(); got != 4096 {
		t.Errorf("mean after the failed Start: %d, want 4096", got)
	}
	if samplingstate.Current().MeanBytes != 0 {
		t.Error("a failed Start left sampling on")
	}
	s, err = arenaprof.Start(arenaprof.Config{})
	if err != nil {
		t.Fatalf("Start after a failed one: %v", err)
	}
	s.Stop(context.Background())
}

// handleOnly is an *http.ServeMux seen only through Handle, as a router
// Start cannot ask what it holds.
type handleOnly struct{ mux *http.ServeMux }

func (r handleOnly) Handle(path string, h http.Handler) { r.mux.Handle(path, h) }

// TestStartMuxConflictMessage: ServeMux's panic on a path registered twice
// spans two lines, the first ending in ":"; Start's error reads as one
// sentence, without ":;".
func TestStartMuxConflictMessage(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle(peakPath, http.NotFoundHandler())
	s, err := arenaprof.Start(arenaprof.Config{Mux: handleOnly{mux}})
	if err == nil {
		s.Stop(context.Background())
		t.Fatal("no error")
	}
	msg := err.Error()
	if strings.Contains(msg, ":;") || strings.ContainsAny(msg, "\n\r") || !strings.Contains(msg, "conflicts with pattern") || !strings.Contains(msg, "): "+peakPath) {
		t.Errorf("error %q", msg)
	}
}
