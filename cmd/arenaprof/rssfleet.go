package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arenaprof/arenaprof/cmd/arenaprof/internal/pyroread"
	"github.com/arenaprof/arenaprof/internal/rss"
	"github.com/arenaprof/arenaprof/internal/tabfmt"
	"github.com/arenaprof/arenaprof/report"
)

// rssFleet is the breakdown of resident memory over pods and time: per
// class the mean and the maximum over the snapshots (one pod's upload at
// one moment) read with smaps.
type rssFleet struct {
	Selector string    `json:"selector"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	// Per says what one figure is of: "pod snapshot".
	Per string `json:"per"`
	// Snapshots is the number of snapshots the means and maxima are
	// over (those read with smaps, or all when none was).
	Snapshots   int `json:"snapshots"`
	Series      int `json:"series"`
	SmapsUnread int `json:"smaps_unread"`
	// RSS is the RSS's mean and maximum; absent when no snapshot was
	// read with smaps.
	RSS     *rssFleetStat   `json:"rss_bytes,omitempty"`
	Classes []rssFleetClass `json:"classes"`
	Rows    []rssFleetRow   `json:"rows"`
	Notes   []string        `json:"notes,omitempty"`
	// List is every snapshot read: its series, time, RSS (the sum of its
	// classes, 0 when read without smaps) and classes.
	List []rssFleetSnapshot `json:"snapshot_list"`
}

type rssFleetStat struct {
	Mean      float64           `json:"mean"`
	Max       int64             `json:"max"`
	MaxTime   time.Time         `json:"max_time"`
	MaxSeries map[string]string `json:"max_series"`
}

// rssFleetClass is a class's mean and maximum over the snapshots: exact,
// as every class of a snapshot is.
type rssFleetClass struct {
	Class string  `json:"class"`
	Mean  float64 `json:"mean"`
	Max   int64   `json:"max"`
}

// rssFleetRow is a site's mean over every snapshot read: the sum of its
// uploaded bytes over the range divided by their number. Estimated
// (go/heap/live) rows carry no interval.
type rssFleetRow struct {
	Class     string  `json:"class"`
	Key       string  `json:"key"`
	Mean      float64 `json:"mean"`
	Estimated bool    `json:"estimated"`
}

type rssFleetSnapshot struct {
	Series      map[string]string `json:"series"`
	Time        time.Time         `json:"time"`
	RSSBytes    int64             `json:"rss_bytes"`
	SmapsUnread bool              `json:"smaps_unread,omitempty"`
	Classes     map[string]int64  `json:"classes"`
}

// rssFleetCommand reads the resident-memory uploads a selector matches
// and prints their breakdown.
func rssFleetCommand(o rssOptions, stdout io.Writer) error {
	sel, err := pyroread.ParseSelector(o.src)
	if err != nil {
		return topUsageErr("bad label selector %s: %v", o.src, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rd, err := o.pyro.client.ReadRSS(ctx, sel, o.pyro.from, o.pyro.to)
	if err != nil {
		var le *pyroread.LimitError
		switch {
		case errors.As(err, &le):
			return topInputErr("%v", err)
		case errors.Is(err, report.ErrTooLarge):
			return limitErr(o.pyro.client.Base(), err, withDefaults(o.lim))
		}
		return topInputErr("%s: %v", o.pyro.client.Base(), err)
	}
	f := summarizeRSS(rd, sel.String(), o.pyro.from, o.pyro.to)
	if o.n > 0 {
		f.Rows = firstFleetRows(f.Rows, o.n)
	}
	if o.json {
		return writeJSON(stdout, f)
	}
	return formatRSSFleet(stdout, f, o.pyro.client.Base())
}

// summarizeRSS computes the means and maxima of the snapshots read.
// Snapshots read without smaps hold the Go classes only, as mapped bytes:
// they are left out of the figures when any snapshot was read with
// smaps, and said; never averaged with the others.
func summarizeRSS(rd *pyroread.RSSRead, sel string, from, to time.Time) *rssFleet {
	f := &rssFleet{Selector: sel, From: from.UTC(), To: to.UTC(), Per: "pod snapshot"}
	series := map[string]bool{}
	var read, unread []pyroread.RSSSnapshot
	for _, s := range rd.Snapshots {
		series[showSeries(s.Series)] = true
		fs := rssFleetSnapshot{Series: s.Series, Time: s.Time, SmapsUnread: s.SmapsUnread, Classes: s.Classes}
		if s.SmapsUnread {
			unread = append(unread, s)
		} else {
			fs.RSSBytes = s.RSS()
			read = append(read, s)
		}
		f.List = append(f.List, fs)
	}
	f.Series, f.SmapsUnread = len(series), len(unread)
	use := read
	switch {
	case len(read) == 0:
		use = unread
		f.Notes = append(f.Notes, fmt.Sprintf("every snapshot (%d) was read without /proc/self/smaps: the Go classes only, as runtime/metrics maps them (mapped bytes, not resident); RSS unknown", len(unread)))
	case len(unread) > 0:
		f.Notes = append(f.Notes, fmt.Sprintf("%d of %d snapshots were read without /proc/self/smaps (%s): left out of the means and maxima, since their Go classes are mapped bytes and they hold no other class", len(unread), len(rd.Snapshots), seriesList(unread)))
	}
	f.Snapshots = len(use)
	if len(read) > 0 {
		st := &rssFleetStat{}
		var sum float64
		for i, s := range read {
			v := s.RSS()
			sum += float64(v)
			if i == 0 || v > st.Max {
				st.Max, st.MaxTime, st.MaxSeries = v, s.Time, s.Series
			}
		}
		st.Mean = sum / float64(len(read))
		f.RSS = st
	}
	for _, c := range rss.Classes {
		var sum float64
		var mx int64
		seen := false
		for _, s := range use {
			v, ok := s.Classes[c]
			seen = seen || ok
			sum += float64(v)
			mx = max(mx, v)
		}
		if !seen && len(read) == 0 {
			continue // a class smaps gives, or one no snapshot holds
		}
		f.Classes = append(f.Classes, rssFleetClass{Class: c, Mean: sum / float64(len(use)), Max: mx})
	}
	for _, s := range rd.Sites {
		f.Rows = append(f.Rows, rssFleetRow{Class: s.Class, Key: s.Key, Mean: float64(s.Sum) / float64(len(rd.Snapshots)), Estimated: s.Class == rss.GoHeapLive})
	}
	return f
}

// seriesList names the series of some snapshots, at most three.
func seriesList(ss []pyroread.RSSSnapshot) string {
	var names []string
	for _, s := range ss {
		n := showSeries(s.Series)
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) > 3 {
		return strings.Join(names[:3], ", ") + fmt.Sprintf(" and %d more series", len(names)-3)
	}
	return strings.Join(names, ", ")
}

// showSeries writes a series' labels as a selector does, sorted.
func showSeries(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+strconv.Quote(m[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// firstFleetRows keeps the first n rows of each class.
func firstFleetRows(rows []rssFleetRow, n int) []rssFleetRow {
	var out []rssFleetRow
	count := map[string]int{}
	for _, r := range rows {
		if count[r.Class] < n {
			out = append(out, r)
		}
		count[r.Class]++
	}
	return out
}

// formatRSSFleet writes the class tree of a fleet read: each class's mean
// and maximum, the rows' means under their class.
func formatRSSFleet(w io.Writer, f *rssFleet, base string) error {
	var head strings.Builder
	fmt.Fprintf(&head, "resident memory of %s on %s, %s to %s: %d snapshots of %d series\n", f.Selector, base,
		f.From.Format(time.DateTime), f.To.Format(time.DateTime+" UTC"), len(f.List), f.Series)
	if f.RSS != nil {
		fmt.Fprintf(&head, "RSS per pod snapshot: mean %s, max %s (%s at %s)\n", tabfmt.Bytes(f.RSS.Mean), tabfmt.Bytes(float64(f.RSS.Max)),
			showSeries(f.RSS.MaxSeries), f.RSS.MaxTime.Format(time.DateTime+" UTC"))
	} else {
		head.WriteString("RSS unknown: smaps was not read\n")
	}
	fmt.Fprintf(&head, "MEAN and MAX per pod snapshot over %d snapshots, each class exact; a class's MAX is its own highest, not necessarily of the snapshot of the highest RSS\n", f.Snapshots)
	head.WriteString("rows: the mean of each site's uploaded bytes over every snapshot; go/heap/live's are estimates, given without intervals (a sampled object recurs in consecutive snapshots: their counts are not independent)\n")
	for _, n := range f.Notes {
		head.WriteString("note: " + n + "\n")
	}
	if _, err := io.WriteString(w, head.String()+"\n"); err != nil {
		return err
	}
	var total float64
	for _, c := range f.Classes {
		total += c.Mean
	}
	share := func(v float64) string {
		if total == 0 {
			return "-"
		}
		return strconv.FormatFloat(100*v/total, 'f', 1, 64) + "%"
	}
	t := tabfmt.New(w)
	t.Row([]string{"MEAN", "MAX", "SHARE"}, "CLASS")
	paths := make([]string, len(f.Classes))
	for i, c := range f.Classes {
		paths[i] = c.Class
	}
	walkClasses(paths, func(_, name string, depth int, under []int) {
		var sum float64
		for _, j := range under {
			sum += f.Classes[j].Mean
		}
		t.Row([]string{tabfmt.Bytes(sum), "", share(sum)}, strings.Repeat("  ", depth)+name)
	}, func(i int, name string, depth int) {
		c := f.Classes[i]
		t.Row([]string{tabfmt.Bytes(c.Mean), tabfmt.Bytes(float64(c.Max)), share(c.Mean)}, strings.Repeat("  ", depth)+name)
		for _, r := range f.Rows {
			if r.Class == c.Class {
				t.Row([]string{tabfmt.Bytes(r.Mean), "", share(r.Mean)}, strings.Repeat("  ", depth+1)+tabfmt.Printable(r.Key))
			}
		}
	})
	return t.Flush()
}
