package report

import (
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// FuzzWindowOf checks that reading a window marking never fails and falls
// back to "both" for anything it does not understand.
func FuzzWindowOf(f *testing.F) {
	for _, s := range []string{"arenaprof window=end", "arenaprof window=both|arenaprof window=aligned", "arenaprof window=", "x", "arenaprof window=start|arenaprof window=end"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		comments := strings.Split(s, "|")
		w := pprofmt.WindowOf(&profile.Profile{Comments: comments})
		if w > estimate.WindowBoth {
			t.Fatalf("window %d", w)
		}
		marked := false
		for _, c := range comments {
			if name, ok := strings.CutPrefix(c, pprofmt.WindowCommentPrefix); ok {
				marked = true
				x, err := estimate.ParseWindow(name)
				if err != nil || x.String() != name {
					if w != estimate.WindowBoth {
						t.Fatalf("bad marking %q gave %v", c, w)
					}
				} else if w&x != x {
					t.Fatalf("%q: %v lacks %v", s, w, x)
				}
			}
		}
		if !marked && w != estimate.WindowBoth {
			t.Fatalf("no marking gave %v", w)
		}
	})
}
