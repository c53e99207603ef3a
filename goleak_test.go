package arenaprof_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"testing"

	"github.com/arenaprof/arenaprof"
)

// TestStartGoroutineLeakPath: Start mounts /debug/pprof/goroutineleak
// exactly when the runtime has the profile (the real runtime under Go 1.27
// is checked by cmd/arenaprof's TestGoroutineLeaksRealRuntime), beside a
// net/http/pprof-like prefix; a handler already at the exact path is kept,
// and Start does not fail for it.
func TestStartGoroutineLeakPath(t *testing.T) {
	const path = "/debug/pprof/goroutineleak"
	has := pprof.Lookup("goroutineleak") != nil
	index := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("index")) })
	for _, tc := range []struct {
		name    string
		exact   bool // a handler of the service's own at path
		mounted bool // Start's at path
	}{
		{"beside an index", false, has},
		{"exact path taken", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.Handle("/debug/pprof/", index)
			if tc.exact {
				mux.Handle(path, index)
			}
			s, err := arenaprof.Start(arenaprof.Config{Mux: mux})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Stop(context.Background())
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
			if got := rec.Body.String() != "index"; got != tc.mounted {
				t.Errorf("runtime has the profile: %v; Start's handler answered: %v (%d %q)", has, got, rec.Code, rec.Body.String())
			}
		})
	}
}
