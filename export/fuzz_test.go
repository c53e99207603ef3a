package export

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/profiler"
)

// FuzzParseSeconds checks that the seconds parameter accepts exactly the
// positive decimal integers up to the bound.
func FuzzParseSeconds(f *testing.F) {
	for _, s := range []string{"1", "0", "-1", "3600", "3601", "", "abc", "1.5", "+5", "007", " 5", "9223372036854775808", "1e3"} {
		f.Add(s, int64(3600))
	}
	f.Fuzz(func(t *testing.T, s string, max int64) {
		n, err := parseSeconds(s, max)
		v, perr := strconv.ParseInt(s, 10, 64)
		valid := perr == nil && v > 0 && v <= max
		if (err == nil) != valid {
			t.Fatalf("parseSeconds(%q, %d) = %d, %v", s, max, n, err)
		}
		if err == nil && n != v {
			t.Fatalf("parseSeconds(%q) = %d", s, n)
		}
		if err != nil && err.Error() == "" {
			t.Fatal("empty error message")
		}
	})
}

// FuzzWindowOf checks that reading a window marking never fails and falls
// back to "both" for anything it does not understand.
func FuzzWindowOf(f *testing.F) {
	for _, s := range []string{"arenaprof window=end", "arenaprof window=both|arenaprof window=aligned", "arenaprof window=", "x", "arenaprof window=start|arenaprof window=end"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		comments := strings.Split(s, "|")
		w := WindowOf(&profile.Profile{Comments: comments})
		if w > profiler.WindowBoth {
			t.Fatalf("window %d", w)
		}
		marked := false
		for _, c := range comments {
			if name, ok := strings.CutPrefix(c, windowCommentPrefix); ok {
				marked = true
				x, err := profiler.ParseWindow(name)
				if err != nil || x.String() != name {
					if w != profiler.WindowBoth {
						t.Fatalf("bad marking %q gave %v", c, w)
					}
				} else if w&x != x {
					t.Fatalf("%q: %v lacks %v", s, w, x)
				}
			}
		}
		if !marked && w != profiler.WindowBoth {
			t.Fatalf("no marking gave %v", w)
		}
	})
}
