package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"runtime"
	"strings"
	"testing"

	"github.com/arenaprof/arenaprof"
	"github.com/arenaprof/arenaprof/internal/goheap"
)

// TestServiceGoVersion: reading a service's /debug/pprof/heap, whose
// profile names no Go release, top and advise learn the release from the
// same service's arenaprof handler, and so does diff; without arenaprof they assume the
// current rule and say once how to set the version.
func TestServiceGoVersion(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/debug/pprof/heap", pprof.Handler("heap"))
	s, err := arenaprof.Start(arenaprof.Config{AppName: "goversion", Mux: mux})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(context.Background())
	with := httptest.NewServer(mux)
	defer with.Close()
	plain := http.NewServeMux()
	plain.Handle("/debug/pprof/heap", pprof.Handler("heap"))
	without := httptest.NewServer(plain)
	defer without.Close()

	rule, err := goheap.RuleOf(runtime.Version())
	if err != nil {
		t.Fatal(err)
	}
	learnt := "Go heap sampler: " + rule.String() + " rule (" + runtime.Version() + ")"
	assumed := "(assumed: the profile names no Go release; pass -go-version if it ran Go 1.23 or older)"
	for _, tc := range []struct {
		name string
		args []string
		run  func(...string) (int, string, string)
		want string
	}{
		{"top, arenaprof", []string{with.URL + "/debug/pprof/heap"}, runTopArgs, learnt},
		{"top, no arenaprof", []string{without.URL + "/debug/pprof/heap"}, runTopArgs, assumed},
		{"top, -go-version wins", []string{"-go-version", "go1.23", with.URL + "/debug/pprof/heap"}, runTopArgs, "go1.23 rule (go1.23)"},
		{"diff, arenaprof", []string{"-by", "func", with.URL + "/debug/pprof/heap", with.URL + "/debug/pprof/heap"}, runDiffArgs, "NEW " + rule.String() + " rule (" + runtime.Version() + ")"},
		{"diff, no arenaprof", []string{"-by", "func", without.URL + "/debug/pprof/heap", without.URL + "/debug/pprof/heap"}, runDiffArgs, "NEW go1.24 rule (assumed); assumed where a profile names no Go release: pass -go-version if it ran Go 1.23 or older"},
		{"advise, arenaprof", []string{"-seconds", "0.001", with.URL + "/debug/pprof/heap"}, runAdviseArgs, learnt},
		{"advise, none", []string{"-seconds", "0.001", without.URL + "/debug/pprof/heap"}, runAdviseArgs, assumed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := tc.run(append([]string{"-full"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("no %q in\n%s", tc.want, out)
			}
			if n := strings.Count(out, "Go heap sampler"); n != 1 {
				t.Errorf("%d sampler lines in\n%s", n, out)
			}
		})
	}
}
