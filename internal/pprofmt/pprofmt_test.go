package pprofmt

import (
	"slices"
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
