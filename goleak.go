package arenaprof

import (
	"net/http"
	"runtime/pprof"
	"strconv"
)

// goroutineLeakPath is where Start mounts the runtime's goroutine leak
// profile on Config.Mux, where the runtime has one.
const goroutineLeakPath = "/debug/pprof/goroutineleak"

// withGoroutineLeak adds the goroutine leak profile's handler to the
// handlers Start mounts, when the runtime has the profile (Go 1.27 on, Go
// 1.26 built with GOEXPERIMENT=goroutineleakprofile) and mux has nothing
// at its exact path: net/http/pprof's Index at "/debug/pprof/" serves it
// too, but not on a Mux of the service's own unless mounted there, and an
// exact path takes precedence over that prefix.
func withGoroutineLeak(mux Router, handlers map[string]http.Handler) map[string]http.Handler {
	if pprof.Lookup("goroutineleak") == nil || taken(mux, goroutineLeakPath) {
		return handlers
	}
	handlers[goroutineLeakPath] = goroutineLeakHandler{}
	return handlers
}

// goroutineLeakHandler serves runtime/pprof's goroutineleak profile as
// net/http/pprof's Handler("goroutineleak") does (that package cannot be
// imported here: its init registers on http.DefaultServeMux): the pprof
// profile, or its text with ?debug=1 (?debug=2: every goroutine's stack).
// Each request runs a garbage collection cycle that finds the leaked
// goroutines; the runtime runs one at a time. There is no ?seconds: a
// leak count is a level, read it twice.
type goroutineLeakHandler struct{}

func (goroutineLeakHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	fail := func(status int, msg string) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Go-Pprof", "1")
		w.WriteHeader(status)
		w.Write([]byte(msg + "\n"))
	}
	if r.FormValue("seconds") != "" {
		fail(http.StatusBadRequest, `"seconds" is not supported for the goroutine leak profile: it is a count now; read it twice`)
		return
	}
	debug := 0
	if d := r.FormValue("debug"); d != "" {
		var err error
		if debug, err = strconv.Atoi(d); err != nil || debug < 0 || debug > 2 {
			fail(http.StatusBadRequest, `invalid value for "debug": want 0, 1 or 2`)
			return
		}
	}
	if debug != 0 {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="goroutineleak"`)
	}
	pprof.Lookup("goroutineleak").WriteTo(w, debug)
}
