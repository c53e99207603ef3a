package browsertest

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/pprof/profile"
)

// leakSeries writes n heap profiles a second apart to dir, as
// runtime/pprof writes them with every byte recorded (MemProfileRate 1),
// of four sites with scatter from a fixed seed: main.leak grows by
// 40 KiB/s, main.cache fills over the first third and stays, main.batch
// is a sawtooth, main.steady stays about level.
func leakSeries(t testing.TB, dir string, n int) {
	t.Helper()
	r := rand.New(rand.NewPCG(46, 4))
	t0 := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	const size = 1024
	for i := range n {
		noise := func(sd float64) int64 { return int64(r.NormFloat64() * sd) }
		inuse := map[string]int64{
			"main.leak":   4<<20 + int64(i)*40<<10 + noise(48<<10),
			"main.cache":  int64(min(i, n/3)) * 256 << 10,
			"main.batch":  int64(i%4) * 512 << 10,
			"main.steady": 2<<20 + noise(32<<10),
		}
		p := &profile.Profile{
			SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
				{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
			PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
			Period:     1,
			TimeNanos:  t0.Add(time.Duration(i) * time.Second).UnixNano(),
		}
		id := uint64(1)
		for _, fn := range []string{"main.leak", "main.cache", "main.batch", "main.steady"} {
			b := max(inuse[fn]/size*size, 0)
			f := &profile.Function{ID: id, Name: fn, SystemName: fn, Filename: "main.go"}
			loc := &profile.Location{ID: id, Address: 0x1000 + id, Line: []profile.Line{{Function: f, Line: 1}}}
			p.Function, p.Location = append(p.Function, f), append(p.Location, loc)
			id++
			alloc := int64(i+1) << 22
			p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc},
				Value:    []int64{alloc / size, alloc, b / size, b},
				NumLabel: map[string][]int64{"bytes": {size}}, NumUnit: map[string][]string{"bytes": {"bytes"}}})
		}
		writeProfile(t, dir, fmt.Sprintf("heap-%03d.pb.gz", i), p)
	}
}

// leaksPage checks the page of arenaprof html -leaks of a series of 40
// snapshots: its rows' data attributes are leaks -json's fields, in
// order; main.leak alone is flagged and plotted, its plot drawn across
// the figure with a point per snapshot, the fitted line and the
// interval's wedge inside the shaded window of the fit.
func (b *browser) leaksPage(t *testing.T, dir string) {
	series := filepath.Join(dir, "leaks")
	if err := os.MkdirAll(series, 0o755); err != nil {
		t.Fatal(err)
	}
	leakSeries(t, series, 40)
	page := filepath.Join(dir, "leaks.html")
	arenaprofOut(t, dir, "html", "-leaks", "-o", page, "leaks")
	var out struct {
		Rows []map[string]any `json:"rows"`
	}
	d := json.NewDecoder(strings.NewReader(arenaprofOut(t, dir, "leaks", "-json", "leaks")))
	d.UseNumber()
	if err := d.Decode(&out); err != nil {
		t.Fatal(err)
	}
	fields := []string{"key", "kind", "rate", "lo", "hi", "flagged", "inuse_first", "inuse_last"}
	var want [][]string
	flagged := 0
	for _, r := range out.Rows {
		row := make([]string, len(fields))
		for i, f := range fields {
			row[i] = fmt.Sprint(r[f])
		}
		if r["flagged"] == true {
			flagged++
		}
		want = append(want, row)
	}
	b.do(t, chromedp.Navigate(fileURL(page)))
	eval[bool](t, b, settled)
	dom := eval[[][]string](t, b, `Array.from(document.querySelectorAll(".rows tbody tr")).map(r => ["data-key", "data-kind", "data-rate", "data-lo", "data-hi", "data-flagged", "data-inuse-first", "data-inuse-last"].map(a => r.getAttribute(a)))`)
	if !slices.EqualFunc(dom, want, slices.Equal) {
		t.Fatalf("DOM rows %q, leaks -json %q", dom, want)
	}
	if flagged != 1 || want[0][0] != "main.leak" || want[0][5] != "true" {
		t.Fatalf("leaks -json flags %d groups, first %q; want main.leak alone", flagged, want[0])
	}
	got := eval[map[string]any](t, b, `(() => {
		const f = document.querySelectorAll("figure.leak");
		const svg = f[0].querySelector("svg"), box = svg.getBoundingClientRect();
		const line = svg.querySelector("polyline.inuse").getBBox(), band = svg.querySelector("polygon.band").getBBox(), win = svg.querySelector("rect.win").getBBox(), fit = svg.querySelector("line.fit").getBBox();
		return {figures: f.length, key: f[0].dataset.key, points: svg.querySelector("polyline.inuse").points.numberOfItems,
			width: box.width, height: box.height, lineW: line.width, lineH: line.height,
			bandIn: band.x >= win.x - 0.5 && band.x + band.width <= win.x + win.width + 0.5, bandH: band.height,
			fitIn: fit.x >= win.x - 0.5 && fit.x + fit.width <= win.x + win.width + 0.5, fitW: fit.width,
			stroke: getComputedStyle(svg.querySelector("polyline.inuse")).stroke, fill: getComputedStyle(svg.querySelector("polyline.inuse")).fill,
			flaggedRow: getComputedStyle(document.querySelector(".rows tbody tr")).color}
	})()`)
	if got["figures"] != 1.0 || got["key"] != "main.leak" || got["points"] != 40.0 {
		t.Errorf("plots: %v; want main.leak's alone, with 40 points", got)
	}
	if w := got["width"].(float64); w < 600 || got["height"].(float64) < 100 || got["lineW"].(float64) < 600 || got["lineH"].(float64) < 50 {
		t.Errorf("the plot is not drawn across its figure: %v", got)
	}
	if got["bandIn"] != true || got["fitIn"] != true || got["bandH"].(float64) < 1 || math.Abs(got["fitW"].(float64)) < 100 {
		t.Errorf("the fitted line and its wedge are not within the fit's window: %v", got)
	}
	if got["fill"] != "none" || got["stroke"] == "none" {
		t.Errorf("the style sheet did not apply (CSP?): %v", got)
	}
	b.do(t, chromedp.EmulateViewport(1100, 760))
	defer b.do(t, chromedp.EmulateViewport(1280, 800))
	b.screenshot(t, "leaks", "html-leaks.png")
}
