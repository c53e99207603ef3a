package export

import (
	"fmt"
	"net/http"

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
// URL); arenaprof rss prints the class tree with intervals. It takes no
// parameter, follows [Handler]'s conventions and offers the file
// rss.pb.gz; the options, which bound seconds=N windows, are ignored.
//
//	mux.Handle("/debug/arenaprof/rss", export.RSSHandler())
func RSSHandler(opts ...HandlerOption) http.Handler {
	return &rssHandler{cfg: newConfig("rss.pb.gz", opts)}
}

type rssHandler struct{ cfg handlerConfig }

func (h *rssHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for k := range r.URL.Query() {
		serveError(w, http.StatusBadRequest, fmt.Sprintf("arenaprof: the resident-memory profile takes no parameter, got %q", k))
		return
	}
	release, ok := startBuild(h.cfg.limiter, w, r, buildWait)
	if !ok {
		return
	}
	defer release()
	rd := rss.Read()
	prof, err := rss.Profile(rd, rss.Classify(rd))
	if err != nil {
		serveError(w, http.StatusInternalServerError, "arenaprof: "+err.Error())
		return
	}
	serveProfile(w, h.cfg.filename, prof)
}
