package export

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/profiler"
)

// TestBuildComments checks the comments that record the means in force and
// the events lost or dropped past the bounds.
func TestBuildComments(t *testing.T) {
	now := time.Unix(1700000000, 0)
	s := &profiler.Snapshot{Start: now, End: now.Add(time.Minute), MeanBytes: 4096, Window: estimate.WindowBoth,
		Means: []int64{4096, 102400}, InUseMeans: []int64{512, 4096, 102400},
		Stats: profiler.Stats{Lost: 3, Dropped: 5}}
	p, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"arenaprof means=4096,102400", "arenaprof inuse_means=512,4096,102400", "arenaprof lost: 3 events", "arenaprof dropped: 2 events"} {
		if !slices.ContainsFunc(p.Comments, func(c string) bool { return strings.HasPrefix(c, want) }) {
			t.Errorf("no comment %q in %q", want, p.Comments)
		}
	}
	m, ok, err := pprofmt.MeansOf(p, pprofmt.MeansCommentPrefix)
	if err != nil || !ok || !slices.Equal(m, s.Means) {
		t.Errorf("MeansOf = %v, %v, %v", m, ok, err)
	}
}
