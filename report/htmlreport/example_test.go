package htmlreport_test

import (
	"bytes"
	"fmt"
	"regexp"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/profiler"
	"github.com/arenaprof/arenaprof/report"
	"github.com/arenaprof/arenaprof/report/htmlreport"
)

// A page of a profile of this process: the table by type with its
// intervals, and a flame graph. Write it to a file and open it in a
// browser; here the example reads the row of [64]uint8 back from it.
func ExampleTop() {
	defer hooks.SetMeanBytes(hooks.MeanBytes())
	if err := hooks.SetMeanBytes(4096); err != nil {
		panic(err)
	}
	p, err := profiler.Start()
	if err != nil {
		panic(err)
	}
	a := arena.NewArena(arena.WithSeed(1, 1))
	for range 100000 {
		_ = arena.New[[64]byte](a)
	}
	p.Stop()
	var buf bytes.Buffer
	if err := export.Write(&buf, p.Snapshot()); err != nil {
		panic(err)
	}
	prof, err := profile.Parse(&buf)
	if err != nil {
		panic(err)
	}

	t, err := report.Table(prof, report.TableOptions{By: "type"})
	if err != nil {
		panic(err)
	}
	flame, err := report.Flame(prof, report.FlameOptions{MinShare: 0.001})
	if err != nil {
		panic(err)
	}
	var page bytes.Buffer
	if err := htmlreport.Top(&page, t, htmlreport.Options{Flame: flame}); err != nil {
		panic(err)
	}
	row := regexp.MustCompile(`<tr data-key="([^"]*)" data-est="(\d+)"`).FindStringSubmatch(page.String())
	fmt.Println(row[1], row[2] == fmt.Sprint(t.Rows[0].Bytes))
	// Output:
	// [64]uint8 true
}
