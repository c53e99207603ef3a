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

// SnapshotReuse and DeltaReuse, rotating their memory as the agent's
// arena source does, give what Snapshot and Delta give, interval after
// interval, as the number of records grows and shrinks.
func TestSnapshotDeltaReuse(t *testing.T) {
	setMeanBytes(t, 1)
	p := startCollector(t)
	a := newCollectorTestArena(t, 5, hooks.Labels{})
	b := newCollectorTestArena(t, 6, hooks.Labels{})
	var spare, dOld *Snapshot
	prevFresh, prev := p.Snapshot(), p.SnapshotReuse(nil)
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
		cur := p.SnapshotReuse(spare)
		if got, want := contentOf(cur), contentOf(curFresh); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: SnapshotReuse\n got %+v\nwant %+v", tc.name, got, want)
		}
		dFresh, err := Delta(prevFresh, curFresh)
		if err != nil {
			t.Fatal(err)
		}
		d, err := DeltaReuse(dOld, prev, cur)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := contentOf(d), contentOf(dFresh); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: DeltaReuse\n got %+v\nwant %+v", tc.name, got, want)
		}
		if !d.Start.Equal(prev.End) || !d.End.Equal(cur.End) {
			t.Errorf("%s: delta window %v to %v, snapshots end %v and %v", tc.name, d.Start, d.End, prev.End, cur.End)
		}
		spare, prev, dOld = prev, cur, d
		prevFresh = curFresh
	}
	// A delta of nil is cur itself; old is not taken when it is prev or cur.
	if d, err := DeltaReuse(dOld, nil, prev); err != nil || d != prev {
		t.Errorf("DeltaReuse(old, nil, cur) = %v, %v", d, err)
	}
	n := len(prev.Records)
	if _, err := DeltaReuse(prev, spare, prev); err != nil || len(prev.Records) != n {
		t.Errorf("DeltaReuse(cur, prev, cur) took cur's memory: %v, %d records of %d", err, len(prev.Records), n)
	}
}
