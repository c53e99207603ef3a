package export

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/profiler"
	"github.com/arenaprof/arenaprof/report"
)

// DefaultMaxSeconds is the default bound on the seconds parameter of
// [Handler].
const DefaultMaxSeconds = 3600

// DefaultDebugRows is the number of allocation sites the ?debug=1 table of
// [Handler] shows.
const DefaultDebugRows = 50

// DefaultMaxDeltas is the default bound on the seconds=N requests
// [Handler] serves at once.
const DefaultMaxDeltas = 4

// DefaultMaxBuilds is the default bound of a [Limiter]: the profile
// builds that the handlers sharing it run at once. One build of a full
// collector (16384 sites, the default bound) takes 30-50 ms of one core
// and allocates about 7 MB (the arena profile) or 15 MB (the memory
// profile); one at a time leaves a service on two cores one core of its
// own however many clients ask, while a request that arrives during a
// build waits for it (see [Limiter]).
const DefaultMaxBuilds = 1

// buildWait is how long a request waits for a build slot before it is
// refused: long enough for a few builds of a full collector to end.
const buildWait = time.Second

// A Limiter bounds the profile builds that run at once in the handlers that
// share it (see [WithLimiter]): each request takes a slot of it from the
// moment it reads the profiler until its profile is written to the client,
// so the handlers hold the memory of at most that many profiles, whatever
// the number of clients. A request that finds every slot taken waits up to
// one second for one (less if its client goes away), then gets 429 Too
// Many Requests with Retry-After: 1. The build at the end of a seconds=N
// window waits for a slot as long as its client stays: the number of
// windows is bounded already (see [WithMaxDeltas]).
//
// A client that reads its profile slowly holds its slot while the profile
// streams to it: the server's WriteTimeout bounds how long, or, if the
// server has none, a deadline of one minute that the handler sets on its
// response (http.ResponseController.SetWriteDeadline).
type Limiter struct {
	slots chan struct{}
}

// NewLimiter returns a Limiter that lets n builds run at once; n below 1
// selects [DefaultMaxBuilds].
func NewLimiter(n int) *Limiter {
	if n < 1 {
		n = DefaultMaxBuilds
	}
	return &Limiter{slots: make(chan struct{}, n)}
}

// Max returns the number of builds l lets run at once.
func (l *Limiter) Max() int { return cap(l.slots) }

// acquire takes a slot, waiting at most wait (wait < 0: without a bound)
// and not after ctx is done. It reports whether it got one; release it
// with release.
func (l *Limiter) acquire(ctx context.Context, wait time.Duration) bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
	}
	var timeout <-chan time.Time
	if wait >= 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case l.slots <- struct{}{}:
		return true
	case <-timeout:
		return false
	case <-ctx.Done():
		return false
	}
}

func (l *Limiter) release() { <-l.slots }

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
	rows       int
	filename   string
	limiter    *Limiter
}

// WithLimiter makes the handler take its build slots from l, shared with
// every other handler given l; without it, each handler has a Limiter of
// its own of [DefaultMaxBuilds] slots. Give the handlers of one service
// one Limiter (arenaprof.Start does) so that together they build at most
// l.Max() profiles at once. A nil l keeps the default.
func WithLimiter(l *Limiter) HandlerOption {
	return func(c *handlerConfig) {
		if l != nil {
			c.limiter = l
		}
	}
}

// WithMaxDeltas bounds the seconds=N requests served at once (default
// [DefaultMaxDeltas]). Each holds a snapshot of the profiler (memory that
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
// (default [DefaultMaxSeconds]); values below 1 keep the default.
func WithMaxSeconds(n int64) HandlerOption {
	return func(c *handlerConfig) {
		if n >= 1 {
			c.maxSeconds = n
		}
	}
}

// WithDebugRows sets how many sites the ?debug=1 table lists (default
// [DefaultDebugRows]); values below 1 keep the default.
func WithDebugRows(n int) HandlerOption {
	return func(c *handlerConfig) {
		if n >= 1 {
			c.rows = n
		}
	}
}

// WithFilename sets the file name offered in the Content-Disposition header
// (default "arenaprof.pb.gz").
func WithFilename(name string) HandlerOption {
	return func(c *handlerConfig) {
		if name != "" {
			c.filename = name
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
//     positive integer up to [DefaultMaxSeconds] (see [WithMaxSeconds]) and
//     below the server's WriteTimeout. If the client goes away, the handler
//     stops waiting and drops the window's snapshot. At most
//     [DefaultMaxDeltas] such requests run at once (see [WithMaxDeltas]);
//     past that bound the handler answers 429 with Retry-After.
//   - debug=1: plain-text tables of the top allocation sites by leaf
//     function and by type (the same rows as arenaprof top) with estimated bytes and
//     objects and 95% confidence intervals, for the whole run or for the
//     seconds=N window.
//
// Every request that builds a profile (all but those refused for their
// parameters) takes a slot of the handler's [Limiter] first, so that many
// clients cannot make the service hold many profiles at once: by default
// one build at a time per handler, shared by all handlers given one
// Limiter ([WithLimiter]). A request that cannot get a slot within one
// second gets 429 Too Many Requests with Retry-After.
//
// Errors are 4xx/5xx text/plain responses with the header X-Go-Pprof: 1, so
// that go tool pprof prints their message.
func Handler(p *profiler.Profiler, opts ...HandlerOption) http.Handler {
	cfg := handlerConfig{maxSeconds: DefaultMaxSeconds, maxDeltas: DefaultMaxDeltas, rows: DefaultDebugRows, filename: "arenaprof.pb.gz"}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.limiter == nil {
		cfg.limiter = NewLimiter(0)
	}
	return &handler{p: p, cfg: cfg, windows: make(map[*time.Time]struct{})}
}

// MemoryHandler returns an HTTP handler that serves the profile of all of
// the service's memory, arenas and Go heap (see [BuildMemory]), with the
// conventions of [Handler]: debug=1 gives tables with intervals for both
// parts; seconds=N is refused, since the Go heap part covers the life of
// the process. Mount it beside the arena profile's handler, e.g.
//
//	mux.Handle("/debug/arenaprof/memory", export.MemoryHandler(p))
func MemoryHandler(p *profiler.Profiler, opts ...HandlerOption) http.Handler {
	h := Handler(p, append([]HandlerOption{WithFilename("memory.pb.gz")}, opts...)...).(*handler)
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

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.p == nil {
		serveError(w, http.StatusServiceUnavailable, "arenaprof: no profiler")
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
	if !h.cfg.limiter.acquireFor(w, r, wait) {
		return
	}
	defer h.cfg.limiter.release()
	limitWrite(w, r)
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
		if err := writeTable(&buf, snap, h.cfg.rows, h.memory); err != nil {
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
// holding the whole profile.
func serveProfile(w http.ResponseWriter, filename string, prof *profile.Profile) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", filename))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	writeProfile(w, prof)
}

// acquireFor takes a build slot for the request r, as acquire does; when
// it cannot, it answers 429 (unless the client is gone) and returns false.
func (l *Limiter) acquireFor(w http.ResponseWriter, r *http.Request, wait time.Duration) bool {
	if l.acquire(r.Context(), wait) {
		return true
	}
	if r.Context().Err() != nil {
		return false // the client is gone
	}
	w.Header().Set("Retry-After", "1")
	serveError(w, http.StatusTooManyRequests, fmt.Sprintf(
		"arenaprof: %d profile builds are already running (the bound of this handler's Limiter); retry in 1 s", l.Max()))
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
	for _, by := range []report.GroupBy{"func", "type"} {
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
