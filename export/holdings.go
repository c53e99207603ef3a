package export

import (
	"fmt"
	"net/http"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/export/internal/profbuild"
)

// BuildArenas returns the live-arenas profile of the process: where arena
// memory is held now, read from package arena's registry of live arenas
// (empty when the program does not use package arena). Its sample types are
// reserved_space/bytes (the bytes of chunks and large buffers the arenas
// hold; the default), used_space/bytes (the bytes handed out since their
// last Reset) and arenas/count. Live arenas make one sample per
// creating stack (the caller of arena.NewArena, or of Pool.Get for a
// pooled arena), arena labels and age bucket (the string label "age":
// time since the arena was made or taken from its pool); the idle arenas
// of each pool make one sample of their own, labelled pool_idle=true and
// pool=N, with no age. The values are exact counts and bytes, not samples:
// they carry no interval.
//
// go tool pprof reads it: -sample_index=arenas counts arenas instead of
// bytes, -tagfocus=age=10m-1h keeps the arenas of one age.
func BuildArenas() (*profile.Profile, error) { return new(profbuild.Builder).Arenas() }

// ArenasHandler returns an HTTP handler that serves the live-arenas
// profile of the process (see [BuildArenas]), with the conventions of
// [Handler]; it takes no parameters. Mount it where you like, e.g.
//
//	mux.Handle("/debug/arenaprof/arenas", export.ArenasHandler())
//
// It needs no profiler: the registry of live arenas is always kept. It
// serves the file arenas.pb.gz; the options, which bound what it does not
// serve (seconds=N windows), are ignored.
func ArenasHandler(opts ...HandlerOption) http.Handler {
	return &arenasHandler{cfg: newConfig("arenas.pb.gz", opts)}
}

type arenasHandler struct{ cfg handlerConfig }

func (h *arenasHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for k := range r.URL.Query() {
		serveError(w, http.StatusBadRequest, fmt.Sprintf("arenaprof: the live-arenas profile takes no parameter, got %q", k))
		return
	}
	release, ok := startBuild(h.cfg.limiter, w, r, buildWait)
	if !ok {
		return
	}
	defer release()
	prof, err := BuildArenas()
	if err != nil {
		serveError(w, http.StatusInternalServerError, "arenaprof: "+err.Error())
		return
	}
	serveProfile(w, h.cfg.filename, prof)
}
