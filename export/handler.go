package export

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/buildlimit"
	"github.com/arenaprof/arenaprof/internal/pprofenc"
	"github.com/arenaprof/arenaprof/profiler"
	"github.com/arenaprof/arenaprof/report"
)

// defaultMaxSeconds is the default bound on the seconds parameter of
// [Handler].
const defaultMaxSeconds = 3600

// defaultDebugRows is the number of rows of each ?debug=1 table of
// [Handler] without a rows parameter; maxDebugRows bounds the parameter.
const (
	defaultDebugRows = 50
	maxDebugRows     = 10000
)

// defaultMaxDeltas is the default bound on the seconds=N requests
// [Handler] serves at once.
const defaultMaxDeltas = 4

// buildWait is how long a request waits for a build slot before it is
// refused: long enough for a few builds of a full collector to end.
const buildWait = time.Second

// writeLimit is the time a client gets to read its profile when the
// server sets no WriteTimeout: a client that reads slowly holds a build
// slot meanwhile.
var writeLimit = time.Minute

// limitWrite sets a write deadline of writeLimit on the response to r,
// unless the server that received r has a WriteTimeout of its own (a
// deadline set here would replace the server's, and could extend it). A
// ResponseWriter that cannot take a deadline is left as it is.
func limitWrite(w http.ResponseWriter, r *http.Request) {
	if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok && srv.WriteTimeout > 0 {
		return
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(writeLimit))
}

// HandlerOption configures [Handler].
type HandlerOption func(*handlerConfig)

type handlerConfig struct {
	maxSeconds int64
	maxDeltas  int
	filename   string              // offered in the Content-Disposition header
	limiter    *buildlimit.Limiter // the handler's own; see buildlimit.Share
}

// WithMaxDeltas bounds the seconds=N requests served at once (default 4). Each holds a snapshot of the profiler (memory that
// grows with the number of allocation sites) for up to N seconds, so
// without a bound clients could make the service hold any number of them.
// A request past the bound gets 429 Too Many Requests with a Retry-After
// header giving the seconds until the first running window ends. Values
// below 1 keep the default.
func WithMaxDeltas(n int) HandlerOption {
	return func(c *handlerConfig) {
		if n >= 1 {
			c.maxDeltas = n
		}
	}
}

// WithMaxSeconds sets the largest accepted value of the seconds parameter
// (default 3600); values below 1 keep the default.
func WithMaxSeconds(n int64) HandlerOption {
	return func(c *handlerConfig) {
		if n >= 1 {
			c.maxSeconds = n
		}
	}
}

// Handler returns an HTTP handler that serves p's profile, following
// net/http/pprof's conventions. Mount it where you like, e.g.
//
//	mux.Handle("/debug/arenaprof", export.Handler(p))
//
// Importing package export registers nothing on http.DefaultServeMux.
//
// Query parameters:
//   - none: the profile since the profiler started (binary pprof).
//   - seconds=N: wait N seconds and serve the delta profile of that window
//     (alloc values over the window, in-use values at its end). N is a
//     positive integer up to 3600 (see [WithMaxSeconds]) and
//     below the server's WriteTimeout. If the client goes away, the handler
//     stops waiting and drops the window's snapshot. At most
//     4 such requests run at once (see [WithMaxDeltas]);
//     past that bound the handler answers 429 with Retry-After.
//   - debug=1: plain-text tables of the top allocation sites by leaf
//     function and by type (the same rows as arenaprof top) with estimated bytes and
//     objects and 95% confidence intervals, for the whole run or for the
//     seconds=N window.
//   - rows=N, with debug=1: the rows of each table, a positive integer up
//     to 10000 (default 50).
//
// The profile is offered as the file arenaprof.pb.gz (Content-Disposition).
//
// Every request that builds a profile (all but those refused for their
// parameters) waits for its turn first, so that many clients cannot make
// the service hold many profiles at once: one build at a time per handler
// (the handlers arenaprof.Start mounts share one bound, set by its
// Config.MaxConcurrentBuilds). One build of a full collector takes 30-50 ms
// of one core and about 7 MB. A request that cannot start within one
// second gets 429 Too Many Requests with Retry-After; one whose client
// reads slowly holds its turn while the profile streams, up to the
// server's WriteTimeout or, without one, a minute.
//
// Errors are 4xx/5xx text/plain responses with the header X-Go-Pprof: 1, so
// that go tool pprof prints their message.
func Handler(p *profiler.Profiler, opts ...HandlerOption) http.Handler {
	return newHandler(p, "arenaprof.pb.gz", opts)
}

// newHandler returns the handler of [Handler] with opts, offering its
// profiles as the file filename.
func newHandler(p *profiler.Profiler, filename string, opts []HandlerOption) *handler {
	return &handler{p: p, cfg: newConfig(filename, opts), windows: make(map[*time.Time]struct{})}
}

// newConfig returns the configuration of a handler serving the file
// filename, with opts and a limiter of its own.
func newConfig(filename string, opts []HandlerOption) handlerConfig {
	cfg := handlerConfig{maxSeconds: defaultMaxSeconds, maxDeltas: defaultMaxDeltas, filename: filename}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	cfg.limiter = buildlimit.New(0)
	return cfg
}

// MemoryHandler returns an HTTP handler that serves the profile of all of
// the service's memory, arenas and Go heap (see [BuildMemory]), with the
// conventions of [Handler]: debug=1 gives tables with intervals for both
// parts; seconds=N is refused, since the Go heap part covers the life of
// the process. Its profile is offered as the file memory.pb.gz. Mount it
// beside the arena profile's handler, e.g.
//
//	mux.Handle("/debug/arenaprof/memory", export.MemoryHandler(p))
func MemoryHandler(p *profiler.Profiler, opts ...HandlerOption) http.Handler {
	h := newHandler(p, "memory.pb.gz", opts)
	h.memory = true
	return h
}

type handler struct {
	p      *profiler.Profiler
	cfg    handlerConfig
	memory bool // serve BuildMemory's profile

	mu      sync.Mutex
	windows map[*time.Time]struct{} // end times of the running seconds=N windows
}

// acquire reserves a slot for a window ending at end. It returns false and
// the seconds until the first running window ends if all slots are taken.
func (h *handler) acquire(end *time.Time) (ok bool, retryAfter int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.windows) < h.cfg.maxDeltas {
		h.windows[end] = struct{}{}
		return true, 0
	}
	first := time.Time{}
	for e := range h.windows {
		if first.IsZero() || e.Before(first) {
			first = *e
		}
	}
	return false, max(1, int64(math.Ceil(time.Until(first).Seconds())))
}

// release frees the slot of the window ending at end.
func (h *handler) release(end *time.Time) {
	h.mu.Lock()
	delete(h.windows, end)
	h.mu.Unlock()
}

func serveError(w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	h.Del("Content-Disposition")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Go-Pprof", "1")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	fmt.Fprintln(w, msg)
}

// parseRows validates the rows parameter of the debug=1 tables: a positive
// decimal integer not above maxDebugRows.
func parseRows(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad rows parameter %q: want a positive integer", s)
	}
	if n > maxDebugRows {
		return 0, fmt.Errorf("rows=%d is above the limit of %d", n, maxDebugRows)
	}
	return n, nil
}

// parseSeconds validates the seconds parameter: a positive decimal integer
// not above max.
func parseSeconds(s string, max int64) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad seconds parameter %q: want a positive integer", s)
	}
	if n > max {
		return 0, fmt.Errorf("seconds=%d is above the limit of %d", n, max)
	}
	return n, nil
}

// hasProfiler reports whether h has a profiler to build from; when it has
// none, it answers 503.
func (h *handler) hasProfiler(w http.ResponseWriter) bool {
	if h.p == nil {
		serveError(w, http.StatusServiceUnavailable, "arenaprof: no profiler")
		return false
	}
	return true
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.hasProfiler(w) {
		return
	}
	q := r.URL.Query()
	debug := false
	if q.Has("debug") {
		switch q.Get("debug") {
		case "0":
		case "1":
			debug = true
		default:
			serveError(w, http.StatusBadRequest, fmt.Sprintf("bad debug parameter %q: want 0 or 1", q.Get("debug")))
			return
		}
	}
	rows := defaultDebugRows
	if q.Has("rows") {
		if !debug {
			serveError(w, http.StatusBadRequest, "the rows parameter applies to the debug=1 tables only")
			return
		}
		n, err := parseRows(q.Get("rows"))
		if err != nil {
			serveError(w, http.StatusBadRequest, err.Error())
			return
		}
		rows = n
	}
	var seconds int64
	if q.Has("seconds") {
		n, err := parseSeconds(q.Get("seconds"), h.cfg.maxSeconds)
		if err != nil {
			serveError(w, http.StatusBadRequest, err.Error())
			return
		}
		if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok &&
			srv.WriteTimeout > 0 && srv.WriteTimeout < time.Duration(n)*time.Second {
			serveError(w, http.StatusBadRequest, "profile duration exceeds server's WriteTimeout")
			return
		}
		if h.memory {
			serveError(w, http.StatusBadRequest, "the memory profile has no seconds=N window: its Go heap part covers the life of the process; use the arena profile's handler for a window")
			return
		}
		seconds = n
	}

	var prev *profiler.Snapshot
	if seconds > 0 {
		release, ok := h.startWindow(w, seconds)
		if !ok {
			return
		}
		defer release()
		prev = h.p.Snapshot()
		t := time.NewTimer(time.Duration(seconds) * time.Second)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return // the client is gone: nobody to answer
		}
	}
	// The build slot is held from the snapshot to the last byte written:
	// the snapshot, the profile and the encoder's state are the memory it
	// bounds. A window's build waits for its slot as long as its client
	// stays (windows are bounded by maxDeltas); other requests wait at most
	// buildWait.
	wait := buildWait
	if prev != nil {
		wait = -1
	}
	release, ok := startBuild(h.cfg.limiter, w, r, wait)
	if !ok {
		return
	}
	defer release()
	snap := h.p.Snapshot()
	if prev != nil {
		d, err := profiler.Delta(prev, snap)
		if err != nil {
			serveError(w, http.StatusInternalServerError, "arenaprof: "+err.Error())
			return
		}
		snap = d
	}

	if debug {
		var buf bytes.Buffer
		if err := writeTable(&buf, snap, rows, h.memory); err != nil {
			serveError(w, http.StatusInternalServerError, "arenaprof: "+err.Error())
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Write(buf.Bytes())
		return
	}
	build := Build
	if h.memory {
		build = BuildMemory
	}
	prof, err := build(snap)
	if err != nil {
		serveError(w, http.StatusInternalServerError, "arenaprof: "+err.Error())
		return
	}
	serveProfile(w, h.cfg.filename, prof)
}

// serveProfile writes a built profile as the response. Encoding it cannot
// fail, so it streams straight to the client instead of through a buffer
// holding the whole profile. It leaves out the label trace_id (otelarena's,
// a request's trace ID): a profile scraped into Pyroscope (Grafana Alloy's
// pyroscope.scrape) would make it a series label per request on v1.19,
// and Pyroscope joins profiles to traces by span_id alone.
func serveProfile(w http.ResponseWriter, filename string, prof *profile.Profile) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", filename))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	pprofenc.WriteGzip(w, prof, &servedOptions)
}

// servedOptions are the encoding options of the profiles served.
var servedOptions = pprofenc.Options{DropLabels: []string{"trace_id"}}

// startBuild takes a build slot for the request r from the Limiter
// buildlimit.Share gave it, or own, waiting as acquireFor does, and sets
// the response's write deadline (limitWrite). Call release when the
// profile is written.
func startBuild(own *buildlimit.Limiter, w http.ResponseWriter, r *http.Request, wait time.Duration) (release func(), ok bool) {
	l := buildlimit.For(r, own)
	if !acquireFor(l, w, r, wait) {
		return nil, false
	}
	limitWrite(w, r)
	return l.Release, true
}

// acquireFor takes a build slot of l for the request r, waiting at most
// wait (wait < 0: as long as the client stays); when it cannot, it answers
// 429 (unless the client is gone) and returns false.
func acquireFor(l *buildlimit.Limiter, w http.ResponseWriter, r *http.Request, wait time.Duration) bool {
	if l.Acquire(r.Context(), wait) {
		return true
	}
	if r.Context().Err() != nil {
		return false // the client is gone
	}
	w.Header().Set("Retry-After", "1")
	serveError(w, http.StatusTooManyRequests, fmt.Sprintf(
		"arenaprof: %d profile builds are already running (the bound on concurrent builds); retry in 1 s", l.Max()))
	return false
}

// startWindow reserves a slot for a seconds=N window starting now; when
// all are taken, it answers 429 and returns false. Call release when the
// window is over.
func (h *handler) startWindow(w http.ResponseWriter, seconds int64) (release func(), ok bool) {
	end := time.Now().Add(time.Duration(seconds) * time.Second)
	ok, retry := h.acquire(&end)
	if !ok {
		w.Header().Set("Retry-After", strconv.FormatInt(retry, 10))
		serveError(w, http.StatusTooManyRequests, fmt.Sprintf(
			"arenaprof: %d seconds=N requests are already running (the bound of this handler); retry in %d s", h.cfg.maxDeltas, retry))
		return nil, false
	}
	return func() { h.release(&end) }, true
}

// writeTable writes a human-readable summary of s: a heading with the
// window, then the top rows allocation sites by leaf function and the top
// rows types (rows <= 0 means all), each with estimated bytes, the 95%
// interval computed from the raw sums at the snapshot's window, estimated
// objects and share, as report.Table and report.FormatTable compute them.
func writeTable(out io.Writer, s *profiler.Snapshot, rows int, memory bool) error {
	build := Build
	if memory {
		build = BuildMemory
	}
	prof, err := build(s)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "arenaprof: allocations from %s to %s (%s), window=%s, mean=%d bytes\n",
		s.Start.Format(time.RFC3339), s.End.Format(time.RFC3339), s.End.Sub(s.Start).Round(time.Millisecond),
		s.Window.String(), s.MeanBytes)
	if s.Stats.OverflowEvents > 0 {
		fmt.Fprintf(out, "%d events past the bucket bound of %d aggregated without stacks\n", s.Stats.OverflowEvents, s.Stats.MaxBuckets)
	}
	for _, by := range []string{"func", "type"} {
		res, err := report.Table(prof, report.TableOptions{By: by, N: max(rows, 0)})
		if err != nil {
			return err
		}
		fmt.Fprintln(out)
		if err := report.FormatTable(out, res, report.FormatOptions{Width: 100}); err != nil {
			return err
		}
	}
	return nil
}
