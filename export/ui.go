package export

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/arenaprof/arenaprof/internal/buildlimit"
	"github.com/arenaprof/arenaprof/profiler"
	"github.com/arenaprof/arenaprof/report"
	"github.com/arenaprof/arenaprof/report/htmlreport"
)

// uiMinFrame is the share of the total below which the live page's flame
// graph leaves a frame out (arenaprof html's default -min-frame).
const uiMinFrame = 0.001

// uiRows is the number of groups the live page lists, largest first (the
// total covers them all): about 1 MB of page, built in the service.
const uiRows = 1000

// UIHandler returns an HTTP handler that serves the live page of p: the
// profile since p started as arenaprof html draws it (package
// htmlreport), the table of the 1000 largest groups with their intervals
// and a flame graph, with a Refresh link. Mount it beside the profile handlers, e.g.
//
//	mux.Handle("/debug/arenaprof/ui", export.UIHandler(p))
//
// Query parameters: by (type, func, stack, size or label=KEY; default
// type) and sample (alloc or inuse; default alloc). Each request builds
// the profile within [Handler]'s bound on concurrent builds (shared with
// the other handlers where arenaprof.Start mounts them) and answers 429
// with Retry-After past it. The page is sent with a
// Content-Security-Policy that lets only its own script and style run
// and nothing load.
func UIHandler(p *profiler.Profiler, opts ...HandlerOption) http.Handler {
	h := Handler(p, opts...).(*handler)
	return &uiHandler{h: h}
}

type uiHandler struct{ h *handler }

func (u *uiHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	by := r.URL.Query().Get("by")
	if by == "" {
		by = "type"
	}
	inuse := false
	switch s := r.URL.Query().Get("sample"); s {
	case "", "alloc", "alloc_space":
	case "inuse", "inuse_space":
		inuse = true
	default:
		serveError(w, http.StatusBadRequest, fmt.Sprintf("bad sample parameter %q: want alloc or inuse", s))
		return
	}
	h := u.h
	if !h.hasProfiler(w) {
		return
	}
	release, ok := startBuild(h.cfg.limiter, w, r, buildWait)
	if !ok {
		return
	}
	defer release()
	snap := h.p.Snapshot()
	prof, err := Build(snap)
	if err != nil {
		serveError(w, http.StatusInternalServerError, "arenaprof: "+err.Error())
		return
	}
	res, err := report.Table(prof, report.TableOptions{By: by, InUse: inuse, N: uiRows})
	if err != nil {
		serveError(w, http.StatusBadRequest, strings.Replace(err.Error(), "report:", "arenaprof:", 1))
		return
	}
	flame, err := report.Flame(prof, report.FlameOptions{InUse: inuse, MinShare: uiMinFrame})
	if err != nil {
		serveError(w, http.StatusInternalServerError, "arenaprof: "+err.Error())
		return
	}
	heading := append([]string{fmt.Sprintf("allocations from %s to %s (%s), window=%s, mean=%d bytes",
		snap.Start.Format(time.RFC3339), snap.End.Format(time.RFC3339), snap.End.Sub(snap.Start).Round(time.Millisecond),
		snap.Window.String(), snap.MeanBytes)}, res.Heading...)
	var buf bytes.Buffer
	err = htmlreport.Top(&buf, res, htmlreport.Options{
		Title: "arenaprof: the running profile", Heading: heading, Flame: flame,
		Refresh: "?" + r.URL.RawQuery, Taken: snap.End.Format(time.RFC3339),
	})
	if err != nil {
		serveError(w, http.StatusInternalServerError, "arenaprof: "+err.Error())
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", htmlreport.ContentSecurityPolicy())
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Referrer-Policy", "no-referrer")
	w.Write(buf.Bytes())
}

// Handlers returns the handler set of p, keyed by the path each is meant
// for: the profile ([Handler]) at /debug/arenaprof, and [MemoryHandler],
// [ArenasHandler], [PeakHandler], [RSSHandler] and the live page ([UIHandler]) beside
// it. They share one bound on concurrent builds (one at a time). Mount
// them all, e.g.
//
//	for path, h := range export.Handlers(p) {
//		mux.Handle(path, h)
//	}
func Handlers(p *profiler.Profiler, opts ...HandlerOption) map[string]http.Handler {
	l := buildlimit.New(0)
	share := func(h http.Handler) http.Handler { return buildlimit.Share(l, h) }
	return map[string]http.Handler{
		"/debug/arenaprof":        share(Handler(p, opts...)),
		"/debug/arenaprof/memory": share(MemoryHandler(p, opts...)),
		"/debug/arenaprof/arenas": share(ArenasHandler(opts...)),
		"/debug/arenaprof/peak":   share(PeakHandler(p, opts...)),
		"/debug/arenaprof/rss":    share(RSSHandler(opts...)),
		"/debug/arenaprof/ui":     share(UIHandler(p, opts...)),
	}
}
