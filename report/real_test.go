package report_test

import (
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/profiler"
	"github.com/arenaprof/arenaprof/report"
)

type tblRecord struct {
	id   int64
	name [40]byte
}

type tblEntry struct {
	key   string // a pointer field: typed slab
	value int64
}

//go:noinline
func tblAllocRecords(a *arena.Arena, n int) {
	for i := range n {
		arena.New[tblRecord](a).id = int64(i)
	}
}

//go:noinline
func tblAllocEntries(a *arena.Arena, n int) {
	for i := range n {
		arena.New[tblEntry](a).value = int64(i)
	}
}

// TestTableCoversTruth profiles a known workload in two labelled arenas and
// checks every row of every grouping against the true bytes. Each check is
// at confidence 1-1e-7 and there are 8 intervals, so a sound interval makes
// the test fail with probability below 1e-6.
func TestTableCoversTruth(t *testing.T) {
	const nRec, nEnt = 30000, 20000 // 48 B and 24 B: 1.44 MB and 0.48 MB
	setMeanBytes(t, 4096)
	p, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	a := arena.NewArena(arena.WithLabels(hooks.NewLabels("endpoint", "/records")))
	b := arena.NewArena(arena.WithLabels(hooks.NewLabels("endpoint", "/entries")))
	tblAllocRecords(a, nRec)
	tblAllocEntries(b, nEnt)
	a.Reset()
	p.Stop()
	prof, err := export.Build(p.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	recBytes, entBytes := float64(nRec*48), float64(nEnt*24)
	want := map[string]map[string]float64{
		"type":           {"report_test.tblRecord": recBytes, "report_test.tblEntry": entBytes},
		"func":           {pkg + "tblAllocRecords": recBytes, pkg + "tblAllocEntries": entBytes},
		"label=endpoint": {"/records": recBytes, "/entries": entBytes},
	}
	for by, truth := range want {
		r, err := report.Table(prof, report.TableOptions{By: by, Confidence: 1 - 1e-7})
		if err != nil {
			t.Fatal(err)
		}
		if r.Window != "end" || len(r.Rows) != 2 {
			t.Fatalf("-by %s: window %v, rows %+v", by, r.Window, r.Rows)
		}
		for _, row := range r.Rows {
			v, ok := truth[row.Key]
			if !ok {
				t.Errorf("-by %s: unexpected row %q", by, row.Key)
				continue
			}
			if row.Samples == 0 || !(row.Lo <= v && v <= row.Hi) {
				t.Errorf("-by %s %q: true %v outside [%v, %v] (%d events)", by, row.Key, v, row.Lo, row.Hi, row.Samples)
			}
		}
		if tot := recBytes + entBytes; by == "type" && !(r.Total.Lo <= tot && tot <= r.Total.Hi) {
			t.Errorf("total %v outside [%v, %v]", tot, r.Total.Lo, r.Total.Hi)
		}
	}
	// In use: the entries' arena was not reset, the records' was.
	r, err := report.Table(prof, report.TableOptions{InUse: true, Confidence: 1 - 1e-7})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 1 || r.Rows[0].Key != "report_test.tblEntry" || !(r.Rows[0].Lo <= entBytes && entBytes <= r.Rows[0].Hi) {
		t.Errorf("in use: %+v", r.Rows)
	}
	b.Free()
}

const pkg = "github.com/arenaprof/arenaprof/report_test."

// TestTableInuseOverflow: an in-use table of a profile with overflow
// samples (mixed sizes, no size label) works, and its total interval
// covers the true in-use bytes. One interval at confidence 1-1e-7: a sound
// interval fails falsely with probability below 1e-7.
func TestTableInuseOverflow(t *testing.T) {
	setMeanBytes(t, 512)
	p, err := profiler.Start(profiler.WithMaxBuckets(1))
	if err != nil {
		t.Fatal(err)
	}
	a := arena.NewArena()
	var truth int64
	for i := range 20000 {
		n := 8 * (1 + i%37) // multiples of 8: the arena's rounding is exact
		arena.MakeSlice[byte](a, n, n)
		truth += int64(n)
	}
	p.Stop()
	if p.Stats().OverflowEvents == 0 {
		t.Fatal("no overflow events; the test needs them")
	}
	prof, err := export.Build(p.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.Table(prof, report.TableOptions{InUse: true, Confidence: 1 - 1e-7})
	if err != nil {
		t.Fatal(err)
	}
	if tot := float64(truth); !(r.Total.Lo <= tot && tot <= r.Total.Hi) || r.Total.SamplesMax < r.Total.Samples {
		t.Errorf("in-use %v outside [%v, %v] (events in [%d, %d])", tot, r.Total.Lo, r.Total.Hi, r.Total.Samples, r.Total.SamplesMax)
	}
	a.Free()
}

// TestTableMergedProfilesAccepted: merging profiles adds rounding to the
// weighted values; the check of values against sampling_mean allows it.
func TestTableMergedProfilesAccepted(t *testing.T) {
	setMeanBytes(t, 64)
	p, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	a := arena.NewArena()
	var profs []*profile.Profile
	for range 5 {
		tblAllocRecords(a, 3000)
		tblAllocEntries(a, 3000)
		prof, err := export.Build(p.Snapshot())
		if err != nil {
			t.Fatal(err)
		}
		profs = append(profs, prof)
	}
	p.Stop()
	a.Free()
	m, err := profile.Merge(profs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := report.Table(m, report.TableOptions{}); err != nil {
		t.Errorf("merged profile refused: %v", err)
	}
}
