package export

import (
	"net/http"
	"time"

	"github.com/arenaprof/arenaprof/export/internal/profbuild"
	"github.com/arenaprof/arenaprof/profiler"
)

// PeakHandler returns an HTTP handler that serves the peak profile of p:
// the in-use profile at the highest estimated live arena bytes since p
// started (see [profiler.Profiler.Peak]). With seconds=N it waits N
// seconds and serves the peak within that window (see
// [profiler.Profiler.WatchPeak]). The profile is that of the peak's
// snapshot, [Build]'s format, timed at the peak, whose in-use values are
// those at the peak and whose alloc values are cumulative from the
// profiler's start up to it; its intervals (arenaprof top -sample inuse)
// are the in-use intervals at that moment, and a comment gives the peak's
// estimated live bytes and time. It follows [Handler]'s conventions and
// options, offering the file peak.pb.gz; a span in which no sampled
// object was live gets 404.
//
//	mux.Handle("/debug/arenaprof/peak", export.PeakHandler(p))
func PeakHandler(p *profiler.Profiler, opts ...HandlerOption) http.Handler {
	h := newHandler(p, "peak.pb.gz", opts)
	return &peakHandler{h: h}
}

type peakHandler struct{ h *handler }

func (ph *peakHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := ph.h
	if !h.hasProfiler(w) {
		return
	}
	q := r.URL.Query()
	var pk profiler.Peak
	if q.Has("seconds") {
		n, err := parseSeconds(q.Get("seconds"), h.cfg.maxSeconds)
		if err != nil {
			serveError(w, http.StatusBadRequest, err.Error())
			return
		}
		release, ok := h.startWindow(w, n)
		if !ok {
			return
		}
		defer release()
		take, stop := h.p.WatchPeak()
		defer stop()
		t := time.NewTimer(time.Duration(n) * time.Second)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
		pk = take()
	} else {
		pk = h.p.Peak()
	}
	release, ok := startBuild(h.cfg.limiter, w, r, buildWait)
	if !ok {
		return
	}
	defer release()
	prof, err := profbuild.Peak(pk)
	if err != nil {
		serveError(w, http.StatusInternalServerError, "arenaprof: "+err.Error())
		return
	}
	if prof == nil {
		serveError(w, http.StatusNotFound, "arenaprof: no sampled arena object was live in this span: no peak")
		return
	}
	serveProfile(w, h.cfg.filename, prof)
}
