package profiler

import (
	"slices"
	"testing"
)

// TestSnapshotMeansInForce checks that snapshots and deltas list every mean
// in force during their window, including means that produced no event.
func TestSnapshotMeansInForce(t *testing.T) {
	setMeanBytes(t, 4096)
	p, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	first := p.Snapshot()
	setMeanBytes(t, 1<<30) // no event will be drawn under it
	setMeanBytes(t, 102400)
	mid := p.Snapshot()
	second := p.Snapshot()
	setMeanBytes(t, 512)
	last := p.Snapshot()
	d1, err := Delta(first, mid)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := Delta(mid, second)
	if err != nil {
		t.Fatal(err)
	}
	d3, err := Delta(second, last)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		s    *Snapshot
		want []int64
	}{
		{"first", first, []int64{4096}},
		{"cumulative", last, []int64{512, 4096, 102400, 1 << 30}},
		{"delta across two changes", d1, []int64{4096, 102400, 1 << 30}},
		{"delta without change", d2, []int64{102400}},
		{"delta across a change", d3, []int64{512, 102400}},
	} {
		if !slices.Equal(c.s.Means, c.want) {
			t.Errorf("%s: Means = %v, want %v", c.name, c.s.Means, c.want)
		}
		if c.s.MeansIncomplete {
			t.Errorf("%s: MeansIncomplete", c.name)
		}
	}
	if want := []int64{512, 4096, 102400, 1 << 30}; !slices.Equal(d3.InUseMeans, want) {
		t.Errorf("delta InUseMeans = %v, want %v (every mean since Start)", d3.InUseMeans, want)
	}
}
