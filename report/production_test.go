package report_test

import (
	"testing"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/profiler"
	"github.com/arenaprof/arenaprof/report"
)

type prodBig struct{ x [48]byte }
type prodSmall struct{ x [24]byte }

// TestCoverageMeanChange measures, through real arenas, the coverage of the
// 95% intervals of types allocated under two means (4096 bytes, then 256
// after a mean change mid-workload): a large type with events under both
// means, and a rare type (24 objects) that often has events under one mean
// only, or none at all (then it has no row, and the table's UnseenHi bounds
// it). Over 400 seeded runs the count of covering runs is Binomial(400, c)
// with c >= 0.95 for a sound interval; the bound 0.95 -
// 6*sqrt(0.95*0.05/400) = 0.885 fails falsely with probability below 1e-9
// per type, 2e-9 for the test.
func TestCoverageMeanChange(t *testing.T) {
	const runs = 400
	defer hooks.SetMeanBytes(hooks.MeanBytes())
	hitBig, hitSmall, rowsSmall := 0, 0, 0
	for r := range runs {
		setMeanBytes(t, 4096)
		p, err := profiler.Start()
		if err != nil {
			t.Fatal(err)
		}
		a := arena.NewArena(arena.WithSeed(uint64(r), 77))
		for range 2000 {
			arena.New[prodBig](a)
		}
		for range 20 {
			arena.New[prodSmall](a)
		}
		if err := hooks.SetMeanBytes(256); err != nil {
			t.Fatal(err)
		}
		for range 200 {
			arena.New[prodBig](a)
		}
		for range 4 {
			arena.New[prodSmall](a)
		}
		p.Stop()
		a.Free()
		prof, err := export.Build(p.Snapshot())
		if err != nil {
			t.Fatal(err)
		}
		tab, err := report.Table(prof, report.TableOptions{Confidence: 0.95})
		if err != nil {
			t.Fatal(err)
		}
		big, small := float64(2200*48), float64(24*24)
		smallLo, smallHi := 0.0, tab.UnseenHi
		for _, row := range tab.Rows {
			switch row.Key {
			case "report_test.prodBig":
				if row.Lo <= big && big <= row.Hi {
					hitBig++
				}
			case "report_test.prodSmall":
				rowsSmall++
				smallLo, smallHi = row.Lo, row.Hi
			}
		}
		if smallLo <= small && small <= smallHi {
			hitSmall++
		}
	}
	t.Logf("%d runs: large type covered in %d; rare type has a row in %d runs, covered in %d of all runs", runs, hitBig, rowsSmall, hitSmall)
	if float64(hitBig) < 0.885*runs {
		t.Errorf("large type covered in %d of %d runs, below the bound %.0f", hitBig, runs, 0.885*runs)
	}
	if float64(hitSmall) < 0.885*runs {
		t.Errorf("rare type covered in %d of %d runs, below the bound %.0f", hitSmall, runs, 0.885*runs)
	}
}
