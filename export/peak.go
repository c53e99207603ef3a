package export

import (
	"fmt"
	"net/http"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/profiler"
)

// BuildPeak returns the profile of a peak (see [profiler.Profiler.Peak] and [profiler.Profiler.WatchPeak]): the
// profile of its snapshot, [Build]'s format, timed at the peak, whose
// in-use values are those at the peak and whose alloc values are
// cumulative from the profiler's start up to it. Its
// intervals (arenaprof top -sample inuse) are the in-use intervals at that
// moment. A comment gives the peak's estimated live bytes and time. It
// returns nil if no object was live during the peak's span.
func BuildPeak(pk profiler.Peak) (*profile.Profile, error) { return new(Builder).BuildPeak(pk) }

// BuildPeak returns what [BuildPeak] returns for pk, in the Builder's
// memory.
func (r *Builder) BuildPeak(pk profiler.Peak) (*profile.Profile, error) {
	if pk.Snapshot == nil {
		return nil, nil
	}
	prof, err := r.Build(pk.Snapshot)
	if err != nil {
		return nil, err
	}
	prof.DefaultSampleType = "inuse_space"
	// A profile of one moment, the peak: a series of peaks (the agent's
	// uploads) is placed at their moments.
	prof.TimeNanos, prof.DurationNanos = pk.Snapshot.End.UnixNano(), 0
	prof.Comments = append(prof.Comments, fmt.Sprintf("%s%.0f bytes at %s (the highest since %s)",
		pprofmt.PeakCommentPrefix, pk.Bytes, pk.Snapshot.End.Format(time.RFC3339Nano), pk.Start.Format(time.RFC3339Nano)))
	return prof, nil
}

// PeakHandler returns an HTTP handler that serves the peak profile of p
// (see [BuildPeak]): the in-use profile at the highest estimated live
// arena bytes since p started. With seconds=N it waits N seconds and
// serves the peak within that window. It follows [Handler]'s conventions
// and options; a span in which no sampled object was live gets 404.
//
//	mux.Handle("/debug/arenaprof/peak", export.PeakHandler(p))
func PeakHandler(p *profiler.Profiler, opts ...HandlerOption) http.Handler {
	h := Handler(p, append([]HandlerOption{WithFilename("peak.pb.gz")}, opts...)...).(*handler)
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
	prof, err := BuildPeak(pk)
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
