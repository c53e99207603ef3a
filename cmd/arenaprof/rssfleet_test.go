package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/cmd/arenaprof/internal/pyroread"
	"github.com/arenaprof/arenaprof/internal/rss"
)

// TestSummarizeRSS checks the fleet's figures: the mean and maximum of
// each class over the snapshots read with smaps, the RSS's maximum with
// its series, the rows' means over every snapshot, and snapshots read
// without smaps left out of the figures and said, never averaged in.
func TestSummarizeRSS(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 7, 0, 0, 0, time.UTC)
	a, b := map[string]string{"pod": "a"}, map[string]string{"pod": "b"}
	snap := func(s map[string]string, sec int, unread bool, kv ...any) pyroread.RSSSnapshot {
		c := map[string]int64{}
		for i := 0; i < len(kv); i += 2 {
			c[kv[i].(string)] = int64(kv[i+1].(int))
		}
		return pyroread.RSSSnapshot{Series: s, Time: t0.Add(time.Duration(sec) * time.Second), Classes: c, SmapsUnread: unread}
	}
	tests := []struct {
		name      string
		snaps     []pyroread.RSSSnapshot
		snapshots int
		rss       *rssFleetStat
		classes   map[string][2]float64 // mean, max
		note      string
	}{
		{
			name: "two pods",
			snaps: []pyroread.RSSSnapshot{
				snap(a, 0, false, rss.GoHeapLive, 100, rss.Binary, 50),
				snap(a, 1, false, rss.GoHeapLive, 300, rss.Binary, 50),
				snap(b, 0, false, rss.GoHeapLive, 200, rss.Binary, 70),
			},
			snapshots: 3,
			rss:       &rssFleetStat{Mean: 770.0 / 3, Max: 350, MaxTime: t0.Add(time.Second), MaxSeries: a},
			classes:   map[string][2]float64{rss.GoHeapLive: {200, 300}, rss.Binary: {170.0 / 3, 70}, rss.NonGo: {0, 0}},
		},
		{
			name: "mixed smaps",
			snaps: []pyroread.RSSSnapshot{
				snap(a, 0, false, rss.GoHeapLive, 100, rss.Binary, 50),
				snap(b, 0, true, rss.GoHeapLive, 900),
			},
			snapshots: 1,
			rss:       &rssFleetStat{Mean: 150, Max: 150, MaxTime: t0, MaxSeries: a},
			classes:   map[string][2]float64{rss.GoHeapLive: {100, 100}, rss.Binary: {50, 50}},
			note:      `1 of 2 snapshots were read without /proc/self/smaps ({pod="b"})`,
		},
		{
			name:      "no smaps",
			snaps:     []pyroread.RSSSnapshot{snap(b, 0, true, rss.GoHeapLive, 900, rss.GoStacks, 10)},
			snapshots: 1,
			classes:   map[string][2]float64{rss.GoHeapLive: {900, 900}, rss.GoStacks: {10, 10}},
			note:      "RSS unknown",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd := &pyroread.RSSRead{Snapshots: tt.snaps, Sites: []pyroread.RSSSite{{Class: rss.GoHeapLive, Key: "main.f", Sum: 30}}}
			f := summarizeRSS(rd, `{service_name="x"}`, t0, t0.Add(time.Hour))
			if f.Snapshots != tt.snapshots {
				t.Errorf("%d snapshots in the figures, want %d", f.Snapshots, tt.snapshots)
			}
			if (f.RSS == nil) != (tt.rss == nil) || f.RSS != nil && (f.RSS.Mean != tt.rss.Mean || f.RSS.Max != tt.rss.Max || !f.RSS.MaxTime.Equal(tt.rss.MaxTime) || showSeries(f.RSS.MaxSeries) != showSeries(tt.rss.MaxSeries)) {
				t.Errorf("RSS %+v, want %+v", f.RSS, tt.rss)
			}
			got := map[string][2]float64{}
			for _, c := range f.Classes {
				got[c.Class] = [2]float64{c.Mean, float64(c.Max)}
			}
			for c, want := range tt.classes {
				if got[c] != want {
					t.Errorf("class %s: mean, max %v, want %v", c, got[c], want)
				}
			}
			if tt.rss == nil && len(f.Classes) != len(tt.classes) {
				t.Errorf("without smaps, classes %v: want the Go classes held only", got)
			}
			if want := 30 / float64(len(tt.snaps)); len(f.Rows) != 1 || f.Rows[0].Mean != want || !f.Rows[0].Estimated {
				t.Errorf("rows %+v, want main.f at %g, estimated", f.Rows, want)
			}
			var out bytes.Buffer
			if err := formatRSSFleet(&out, f, "http://pyroscope"); err != nil {
				t.Fatal(err)
			}
			// The class tree: go above heap above live, each a level in.
			if !regexp.MustCompile(`(?m) go\n.* {3}heap\n.* {5}live\n`).MatchString(out.String()) {
				t.Errorf("output lacks the tree go > heap > live:\n%s", out.String())
			}
			if tt.note != "" && !strings.Contains(out.String(), tt.note) {
				t.Errorf("output lacks %q:\n%s", tt.note, out.String())
			}
		})
	}
}
