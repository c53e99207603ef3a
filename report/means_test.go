package report

import (
	"slices"
	"testing"

	"github.com/arenaprof/arenaprof/internal/testkit/fixture"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// TestTableMeansAllowance checks that every row gets the zero-event
// allowance of each mean in force under which it had no events, and that
// a malformed means comment is refused.
func TestTableMeansAllowance(t *testing.T) {
	p := fixture.Arena(t)
	before, err := Table(p, TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Comments = append(p.Comments, "arenaprof means=4096,102400,1048576")
	after, err := Table(p, TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range after.Rows {
		b := before.Rows[i]
		if row.Key != b.Key || row.Bytes != b.Bytes {
			t.Fatalf("rows differ: %+v vs %+v", row, b)
		}
		// Each row lacks events under 1 MiB: its upper bound grows by at
		// least the allowance of one event-free mean of 1 MiB at a split
		// confidence (more than 1 MiB at 95%).
		if row.Hi < b.Hi+1<<20 {
			t.Errorf("%s: Hi %.0f with the means listed, %.0f without: no allowance", row.Key, row.Hi, b.Hi)
		}
		if row.Lo > b.Lo {
			t.Errorf("%s: Lo grew from %.0f to %.0f", row.Key, b.Lo, row.Lo)
		}
	}
	zero, err := estimate.GroupInterval([]estimate.MeanSums{{MeanBytes: 1 << 20}}, 0.95, estimate.WindowEnd)
	if err != nil {
		t.Fatal(err)
	}
	if after.UnseenHi < zero.Hi {
		t.Errorf("UnseenHi %.0f below the allowance %.0f of one event-free mean of 1 MiB", after.UnseenHi, zero.Hi)
	}
	p.Comments = append(p.Comments, "arenaprof means=12,abc")
	if _, err := Table(p, TableOptions{}); err == nil {
		t.Error("malformed means comment accepted")
	}
}

// TestMergeKeepsMeans checks that a merged profile lists the means of all
// its parts, so that every row of it gets the allowances of both.
func TestMergeKeepsMeans(t *testing.T) {
	a, b := fixture.Arena(t), fixture.Arena(t)
	a.Comments = append(a.Comments, "arenaprof means=4096,102400")
	b.Comments = append(b.Comments, "arenaprof means=512")
	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := pprofmt.MeansOf(m, pprofmt.MeansCommentPrefix)
	if err != nil || !ok || !slices.Equal(got, []int64{512, 4096, 102400}) {
		t.Errorf("merged means %v, %v, %v; comments %q", got, ok, err, m.Comments)
	}
}
