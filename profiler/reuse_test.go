package profiler

import (
	"reflect"
	"testing"

	"github.com/arenaprof/arenaprof/hooks"
)

// snapshotContent is what a snapshot reports, but for its times.
type snapshotContent struct {
	MeanBytes       int64
	Window          any
	Means           []int64
	InUseMeans      []int64
	MeansIncomplete bool
	Records         []Record
	Stats           Stats
}

func contentOf(s *Snapshot) snapshotContent {
	return snapshotContent{s.MeanBytes, s.Window, s.Means, s.InUseMeans, s.MeansIncomplete, s.Records, s.Stats}
}

// Deltas, rotating the memory of its snapshots, gives what Snapshot and
// Delta give, interval after interval, as the number of records grows and
// shrinks; each result is checked before the next call reuses its memory.
func TestDeltas(t *testing.T) {
	setMeanBytes(t, 1)
	p := startCollector(t)
	a := newCollectorTestArena(t, 5, hooks.Labels{})
	b := newCollectorTestArena(t, 6, hooks.Labels{})
	prevFresh := p.Snapshot()
	next := p.Deltas()
	var last *Snapshot
	for _, tc := range []struct {
		name   string
		a, b   int
		resetB bool
	}{
		{"both sites", 40, 4, false},
		{"one site", 10, 0, false},
		{"released", 0, 0, true},
		{"nothing", 0, 0, false},
		{"both again", 3, 7, false},
		{"more", 50, 50, true},
	} {
		collectorSiteA(a, tc.a)
		collectorSiteB(b, tc.b)
		if tc.resetB {
			b.Reset()
		}
		curFresh := p.Snapshot()
		d := next()
		dFresh, err := Delta(prevFresh, curFresh)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := contentOf(d), contentOf(dFresh); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: Deltas\n got %+v\nwant %+v", tc.name, got, want)
		}
		if last != nil && !d.Start.Equal(last.End) {
			t.Errorf("%s: window starts %v, the last ended %v", tc.name, d.Start, last.End)
		}
		if !d.End.After(d.Start) && !d.End.Equal(d.Start) {
			t.Errorf("%s: window %v to %v", tc.name, d.Start, d.End)
		}
		last = &Snapshot{Start: d.Start, End: d.End}
		prevFresh = curFresh
	}
	// With the records settled, a call reuses the memory of the calls
	// before it: not one allocation per record (measured: 1 per call).
	collectorSiteA(a, 5)
	if n := testing.AllocsPerRun(20, func() { next() }); n > 2 {
		t.Errorf("%.0f allocations per call", n)
	}
}

// deltaReuse of a nil prev is cur itself; old is not taken when it is
// prev or cur.
func TestDeltaReuseAliases(t *testing.T) {
	setMeanBytes(t, 1)
	p := startCollector(t)
	a := newCollectorTestArena(t, 5, hooks.Labels{})
	collectorSiteA(a, 10)
	prev := p.snapshot(nil, false)
	collectorSiteA(a, 10)
	cur := p.snapshot(nil, false)
	old, err := deltaReuse(nil, prev, cur)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := deltaReuse(old, nil, cur); err != nil || d != cur {
		t.Errorf("deltaReuse(old, nil, cur) = %v, %v", d, err)
	}
	n := len(cur.Records)
	if _, err := deltaReuse(cur, prev, cur); err != nil || len(cur.Records) != n {
		t.Errorf("deltaReuse(cur, prev, cur) took cur's memory: %v, %d records of %d", err, len(cur.Records), n)
	}
}
