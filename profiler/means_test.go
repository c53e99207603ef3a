package profiler

import (
	"slices"
	"testing"

	"github.com/arenaprof/arenaprof/hooks"
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

// TestDeltaMeansLiveObjects checks that objects still live from before a
// delta's window do not add their mean to the window's means, but do to
// its in-use means.
func TestDeltaMeansLiveObjects(t *testing.T) {
	setMeanBytes(t, 1)
	p, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	a := newCollectorTestArena(t, 1, hooks.Labels{})
	for range 10 {
		a.Alloc(16, "main.old") // sampled at mean 1, and kept live
	}
	setMeanBytes(t, 2)
	prev := p.Snapshot()
	for range 10 {
		a.Alloc(16, "main.new")
	}
	d, err := Delta(prev, p.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Means, []int64{2}) || !slices.Equal(d.InUseMeans, []int64{1, 2}) {
		t.Errorf("delta Means %v, InUseMeans %v; want [2] and [1 2]", d.Means, d.InUseMeans)
	}
}
