package pprofmt

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

func TestMeansComments(t *testing.T) {
	for _, c := range []struct {
		name     string
		comments []string
		want     []int64
		found    bool
		bad      bool
	}{
		{"none", []string{"arenaprof window=end"}, []int64{}, false, false},
		{"one", []string{MeansComment(MeansCommentPrefix, []int64{4096, 102400})}, []int64{4096, 102400}, true, false},
		{"merged", []string{"arenaprof means=4096,102400", "arenaprof means=256,4096"}, []int64{256, 4096, 102400}, true, false},
		{"in-use kept apart", []string{"arenaprof inuse_means=8"}, []int64{}, false, false},
		{"not a number", []string{"arenaprof means=4096,x"}, nil, false, true},
		{"empty field", []string{"arenaprof means=4096,"}, nil, false, true},
		{"zero", []string{"arenaprof means=0"}, nil, false, true},
		{"too large", []string{"arenaprof means=1099511627777"}, nil, false, true},
	} {
		got, found, err := MeansOf(&profile.Profile{Comments: c.comments}, MeansCommentPrefix)
		if c.bad {
			if err == nil {
				t.Errorf("%s: no error", c.name)
			}
			continue
		}
		if err != nil || found != c.found || !slices.Equal(got, c.want) {
			t.Errorf("%s: MeansOf = %v, %v, %v; want %v, %v", c.name, got, found, err, c.want, c.found)
		}
	}
	if got := MeansComment(InUseMeansCommentPrefix, []int64{1, 2}); got != "arenaprof inuse_means=1,2" {
		t.Errorf("MeansComment = %q", got)
	}
	if got := MeansComment(MeansCommentPrefix, nil); got != "" {
		t.Errorf("MeansComment(nil) = %q", got)
	}
}

func FuzzMeansOf(f *testing.F) {
	f.Add("arenaprof means=4096,102400")
	f.Add("arenaprof means=")
	f.Add("arenaprof means=-1")
	f.Fuzz(func(t *testing.T, c string) {
		got, _, err := MeansOf(&profile.Profile{Comments: []string{c}}, MeansCommentPrefix)
		if err != nil {
			return
		}
		if !slices.IsSorted(got) {
			t.Fatalf("unsorted %v", got)
		}
		for _, m := range got {
			if m < 1 || m > 1<<40 {
				t.Fatalf("mean %d out of range", m)
			}
		}
	})
}

func TestPoolGetsComments(t *testing.T) {
	for _, c := range []struct {
		name      string
		comments  []string
		gets, ns  int64
		found     bool
		malformed bool
	}{
		{"none", []string{"arenaprof window=end"}, 0, 0, false, false},
		{"one", []string{PoolGetsComment(1500, 1700000000000000000, 1500000000)}, 1500, 1500000000, true, false},
		{"merged parts add up", []string{PoolGetsComment(1000, 1, 10), "arenaprof window=both", PoolGetsComment(500, 11, 5)}, 1500, 15, true, false},
		{"zero", []string{PoolGetsComment(0, -5, 0)}, 0, 0, true, false},
		{"negative count", []string{"arenaprof pool_gets=-1 window_ns=0+10"}, 0, 0, false, true},
		{"negative length", []string{"arenaprof pool_gets=1 window_ns=0+-10"}, 0, 0, false, true},
		{"sign", []string{"arenaprof pool_gets=+1 window_ns=0+10"}, 0, 0, false, true},
		{"no window", []string{"arenaprof pool_gets=12"}, 0, 0, false, true},
		{"trailing", []string{"arenaprof pool_gets=12 window_ns=0+10 more"}, 0, 0, false, true},
		{"overflow", []string{"arenaprof pool_gets=9223372036854775807 window_ns=0+1", "arenaprof pool_gets=1 window_ns=1+1"}, 0, 0, false, true},
	} {
		gets, ns, found, err := PoolGetsOf(&profile.Profile{Comments: c.comments})
		if c.malformed {
			if err == nil {
				t.Errorf("%s: no error", c.name)
			}
			continue
		}
		if err != nil || found != c.found || gets != c.gets || ns != c.ns {
			t.Errorf("%s: PoolGetsOf = %d, %d, %v, %v; want %d, %d, %v", c.name, gets, ns, found, err, c.gets, c.ns, c.found)
		}
	}
}

func FuzzPoolGetsOf(f *testing.F) {
	f.Add(PoolGetsComment(1500, 1700000000000000000, 1500000000))
	f.Add("arenaprof pool_gets=1 window_ns=-1+0")
	f.Add("arenaprof pool_gets= window_ns=+")
	f.Fuzz(func(t *testing.T, c string) {
		gets, ns, found, err := PoolGetsOf(&profile.Profile{Comments: []string{c}})
		if err != nil {
			return
		}
		if gets < 0 || ns < 0 || found != (len(c) >= len(PoolGetsCommentPrefix) && c[:len(PoolGetsCommentPrefix)] == PoolGetsCommentPrefix) {
			t.Fatalf("%q: %d, %d, %v", c, gets, ns, found)
		}
		if found {
			// What PoolGetsComment writes of the values reads back as them.
			_, w, _ := strings.Cut(c, "window_ns=")
			start, _ := strconv.ParseInt(w[:strings.LastIndex(w, "+")], 10, 64)
			again := PoolGetsComment(uint64(gets), start, ns)
			if g, n, ok, err := PoolGetsOf(&profile.Profile{Comments: []string{again}}); g != gets || n != ns || !ok || err != nil {
				t.Fatalf("%q read as %d, %d; written as %q, read back as %d, %d, %v", c, gets, ns, again, g, n, err)
			}
		}
	})
}
