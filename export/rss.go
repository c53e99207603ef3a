package export

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/rss"
)

// RSSHandler returns an HTTP handler that serves the resident-memory
// profile of the process: every byte of its RSS in one class, the sum of
// the samples' resident/bytes values (the default sample type) being the
// RSS read from /proc/self/smaps. The root frames name the class path
// (go, go/heap, go/heap/live); below go/heap/live come the Go heap's
// allocation sites, estimated from the runtime's heap profile (the
// sample type heap_samples/count holds each site's raw count of sampled
// objects, for intervals), and below arena/used and arena/free the sites
// and labels of the arenas holding them, exact. The classes:
//
//	go/heap/live  heap objects live at the last GC, by allocation site
//	go/heap/dead  heap objects allocated or unreachable since, not yet swept
//	go/heap/free  resident heap memory that holds no object
//	go/stacks     goroutine stacks
//	go/runtime    the runtime's own memory (metadata, profiling buckets, other)
//	arena/used    bytes arenas have handed out and not reset
//	arena/free    the rest of the heap memory arenas hold
//	binary        the executable's resident file pages
//	files         other file-backed and shared mappings
//	nongo         anonymous memory not from the Go runtime (cgo, C malloc, mmap)
//	unattributed  what none of the above explains
//
// Its comments give the RSS, the time of the read, the cgroup's
// memory.current and memory.max, and what a reader should know (see
// docs/rss.md). Where smaps cannot be read (not Linux, hidepid) the
// profile says so and holds the Go classes only, as runtime/metrics maps
// them. go tool pprof reads it (go tool pprof -sample_index=resident -top
// URL); arenaprof rss prints the class tree with intervals. It follows
// [Handler]'s conventions and offers the file rss.pb.gz.
//
// peak=1 serves the profile at the highest RSS since the session started
// (a session of arenaprof.Start watches the RSS every 250 ms and reads
// every source when it makes a new high by 3%, or 1 MiB: a peak held for
// a second is caught, and the profile is within that margin of it); with
// seconds=N, the highest within the next N seconds ([WithMaxSeconds] and
// [WithMaxDeltas] bound them). Without a running session there is no
// watch, and peak=1 gets 404.
//
//	mux.Handle("/debug/arenaprof/rss", export.RSSHandler())
func RSSHandler(opts ...HandlerOption) http.Handler {
	cfg := newConfig("rss.pb.gz", opts)
	return &rssHandler{cfg: cfg, windows: make(chan struct{}, cfg.maxDeltas)}
}

type rssHandler struct {
	cfg     handlerConfig
	windows chan struct{} // the seconds=N windows running
}

func (h *rssHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for k := range q {
		if k != "peak" && k != "seconds" {
			serveError(w, http.StatusBadRequest, fmt.Sprintf("arenaprof: the resident-memory profile takes peak=1 and seconds=N, got %q", k))
			return
		}
	}
	peak := q.Has("peak")
	if peak && q.Get("peak") != "1" {
		serveError(w, http.StatusBadRequest, fmt.Sprintf("arenaprof: peak=%q: use peak=1", q.Get("peak")))
		return
	}
	if q.Has("seconds") && !peak {
		serveError(w, http.StatusBadRequest, "arenaprof: seconds=N takes the peak of a window: give peak=1 with it")
		return
	}
	var pk *rss.Peak
	if peak {
		var ok bool
		if pk, ok = h.peak(w, r, q); !ok {
			return
		}
	}
	release, ok := startBuild(h.cfg.limiter, w, r, buildWait)
	if !ok {
		return
	}
	defer release()
	var prof *profile.Profile
	var err error
	if pk != nil {
		prof, err = rss.PeakProfile(pk)
	} else {
		rd := rss.Read()
		prof, err = rss.Profile(rd, rss.Classify(rd))
	}
	if err != nil {
		serveError(w, http.StatusInternalServerError, "arenaprof: "+err.Error())
		return
	}
	serveProfile(w, h.cfg.filename, prof)
}

// peak returns the peak the request asks for, or answers the error.
func (h *rssHandler) peak(w http.ResponseWriter, r *http.Request, q url.Values) (*rss.Peak, bool) {
	const noWatch = "arenaprof: no RSS watch runs: the peak is watched while an arenaprof.Start session runs"
	if !q.Has("seconds") {
		pk, running := rss.CurrentPeak()
		switch {
		case !running:
			serveError(w, http.StatusNotFound, noWatch)
		case pk == nil:
			serveError(w, http.StatusNotFound, "arenaprof: the RSS watch has taken no read yet: try again in a second")
		}
		return pk, pk != nil && running
	}
	n, err := parseSeconds(q.Get("seconds"), h.cfg.maxSeconds)
	if err != nil {
		serveError(w, http.StatusBadRequest, err.Error())
		return nil, false
	}
	select {
	case h.windows <- struct{}{}:
		defer func() { <-h.windows }()
	default:
		w.Header().Set("Retry-After", "1")
		serveError(w, http.StatusTooManyRequests, fmt.Sprintf("arenaprof: %d peak windows run already", cap(h.windows)))
		return nil, false
	}
	win := rss.OpenWindow()
	if win == nil {
		serveError(w, http.StatusNotFound, noWatch)
		return nil, false
	}
	t := time.NewTimer(time.Duration(n) * time.Second)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
		win.Close()
		return nil, false
	}
	pk := win.Close()
	if pk == nil {
		serveError(w, http.StatusNotFound, "arenaprof: the RSS watch took no read in the window")
	}
	return pk, pk != nil
}
