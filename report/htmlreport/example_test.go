package htmlreport_test

import (
	"bytes"
	"fmt"
	"regexp"

	"github.com/arenaprof/arenaprof/internal/testkit/exampleprof"
	"github.com/arenaprof/arenaprof/report"
	"github.com/arenaprof/arenaprof/report/htmlreport"
)

// A page of a profile of this process: the table by type with its
// intervals, and a flame graph. Write it to a file and open it in a
// browser; here the example reads the row of [64]uint8 back from it.
func ExampleTop() {
	prof := exampleprof.Run(1, 100000)

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
