package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/arenaprof/arenaprof/cmd/arenaprof/internal/pyroread"
	"github.com/arenaprof/arenaprof/internal/leaks"
	"github.com/arenaprof/arenaprof/internal/tabfmt"
	"github.com/arenaprof/arenaprof/report"
)

// leaksPyroscopeUsage documents the flags of reading from Pyroscope.
const leaksPyroscopeUsage = `  -pyroscope URL
        read the agents' heap and arena uploads from a Pyroscope server
        (v1.19 or later), each pod a series; the argument is a label
        selector
  -from T, -to T
        the range read with -pyroscope: an RFC 3339 time, now, or a time
        relative to now (-1h, -30m, -7d); default the last hour
  -tenant ID, -token-env NAME, -parallel N, -max-requests N
        as for top (arenaprof top -h)
`

// checkLeaksPyroscope checks the arguments of leaks -pyroscope: one
// SELECTOR, a grouping the server can give, no service flags.
func checkLeaksPyroscope(o *leaksOptions, secs, every string, pos []string) error {
	switch {
	case secs != "" || every != "":
		return topUsageErr("-seconds and -every take a service's base URL; with -pyroscope the range is -from to -to")
	case len(pos) != 1:
		return topUsageErr("%d arguments where one SELECTOR was expected with -pyroscope, e.g. '{service_name=\"shop\"}'", len(pos))
	case o.by != "func" && o.by != "stack" && o.by != "type" && !strings.HasPrefix(o.by, "label="):
		return topUsageErr("-by %s with -pyroscope: the fleet's groups are by func, stack, type or label=KEY", o.by)
	}
	if _, err := pyroread.ParseSelector(pos[0]); err != nil {
		return topUsageErr("bad label selector %s: %v", pos[0], err)
	}
	o.inputs = pos
	return nil
}

// leaksPod is one pod of a fleet read, as -json prints it.
type leaksPod struct {
	Labels    map[string]string `json:"labels"`
	WindowS   float64           `json:"window_s"`
	Snapshots int               `json:"snapshots"`
	Read      int               `json:"read"`
	Flagged   int               `json:"flagged"`
	Notes     []string          `json:"notes,omitempty"`
}

// leaksFleetJSON is what leaks -pyroscope -json prints: leaks -json's
// fields, the pods and the queries sent.
type leaksFleetJSON struct {
	leaksJSON
	Pods    []leaksPod `json:"pods"`
	Notes   []string   `json:"notes,omitempty"`
	Queries int        `json:"queries"`
}

// leaksFleet is the fit of every group of every pod.
type leaksFleet struct {
	rd      *pyroread.LeaksRead
	rows    []leakRow
	pods    []leaksPod
	groups  int
	flagged int
	last    map[string]float64 // each pod's in use at its last snapshot, by showSeries
}

// fitLeaksFleet fits every group of every pod, the Bonferroni family
// being all groups of all pods.
func fitLeaksFleet(rd *pyroread.LeaksRead, conf, minRate float64) (*leaksFleet, error) {
	f := &leaksFleet{rd: rd, last: map[string]float64{}}
	for _, p := range rd.Pods {
		f.groups += len(p.Groups)
	}
	if f.groups == 0 {
		return nil, topInputErr("the pods' snapshots hold no sample in use: nothing to fit")
	}
	for _, p := range rd.Pods {
		secs := make([]float64, len(p.Times))
		for i, t := range p.Times {
			secs[i] = t.Sub(p.Times[0]).Seconds()
		}
		e, err := leaks.New(secs, f.groups, conf)
		if err != nil {
			return nil, topInputErr("pod %s: %v", showSeries(p.Labels), err)
		}
		if e.From() != p.From {
			return nil, fmt.Errorf("pod %s: the fit starts at snapshot %d, the stacks were read from %d", showSeries(p.Labels), e.From(), p.From)
		}
		pod := leaksPod{Labels: p.Labels, WindowS: p.Times[len(p.Times)-1].Sub(p.Times[0]).Seconds(), Snapshots: len(p.Times), Read: p.Read, Notes: p.Notes}
		for _, g := range p.Groups {
			fit, err := e.Fit(g.Y, g.V)
			if err != nil {
				return nil, topInputErr("pod %s, %s %s: %v", showSeries(p.Labels), g.Kind, g.Key, err)
			}
			row := leakRow{Key: g.Key, Kind: g.Kind, Rate: fit.Rate, Lo: fit.Lo, Hi: fit.Hi, Flagged: fit.Lo > minRate,
				InUseFirst: int64(math.Round(g.First)), InUseLast: int64(math.Round(g.Last)), Pod: p.Labels}
			if row.Flagged {
				pod.Flagged++
				f.flagged++
			}
			f.rows = append(f.rows, row)
		}
		f.pods = append(f.pods, pod)
		f.last[showSeries(p.Labels)] = p.Total[len(p.Total)-1]
	}
	slices.SortFunc(f.rows, func(a, b leakRow) int {
		return cmp.Or(cmp.Compare(b.Lo, a.Lo), strings.Compare(showSeries(a.Pod), showSeries(b.Pod)), strings.Compare(a.Kind, b.Kind), strings.Compare(a.Key, b.Key))
	})
	return f, nil
}

// leaksPyroscopeCommand reads the pods' in-use series from Pyroscope,
// fits them and prints the rows.
func leaksPyroscopeCommand(o leaksOptions, stdout io.Writer) (flagged bool, err error) {
	sel, err := pyroread.ParseSelector(o.inputs[0])
	if err != nil {
		return false, topUsageErr("bad label selector %s: %v", o.inputs[0], err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := o.pyro.client
	rd, err := c.ReadLeaks(ctx, pyroread.LeaksQuery{Selector: sel, From: o.pyro.from, To: o.pyro.to, By: o.by})
	if err != nil {
		var le *pyroread.LimitError
		switch {
		case errors.As(err, &le):
			return false, topInputErr("%v", err)
		case errors.Is(err, report.ErrTooLarge):
			return false, limitErr(c.Base(), err, withDefaults(o.lim))
		}
		return false, topInputErr("%s: %v", c.Base(), err)
	}
	f, err := fitLeaksFleet(rd, o.conf, o.minRate)
	if err != nil {
		return false, err
	}
	rows := f.rows
	if o.n > 0 && len(rows) > o.n {
		rows = rows[:o.n]
	}
	if o.json {
		out := leaksFleetJSON{leaksJSON: leaksJSON{Rows: rows, Goroutines: []goroutineLeakRow{}}, Pods: f.pods, Notes: rd.Notes, Queries: rd.Queries}
		for _, p := range f.pods {
			out.WindowS = max(out.WindowS, p.WindowS)
			out.Snapshots += p.Read
		}
		return f.flagged > 0, writeJSON(stdout, out)
	}
	writeLeaksFleet(stdout, f, rows, o, sel.String())
	return f.flagged > 0, nil
}

// podNames names each pod by the labels whose values differ between the
// pods (all its labels when there is one).
func podNames(pods []leaksPod) map[string]string {
	varying := map[string]bool{}
	for _, p := range pods {
		for k, v := range p.Labels {
			for _, q := range pods {
				if q.Labels[k] != v {
					varying[k] = true
				}
			}
		}
	}
	out := map[string]string{}
	for _, p := range pods {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(p.Labels)) {
			if varying[k] || len(varying) == 0 {
				parts = append(parts, k+"="+p.Labels[k])
			}
		}
		out[showSeries(p.Labels)] = strings.Join(parts, ",")
	}
	return out
}

// writeLeaksFleet prints the heading (the pods, which leak) and the rows.
func writeLeaksFleet(w io.Writer, f *leaksFleet, rows []leakRow, o leaksOptions, sel string) {
	names := podNames(f.pods)
	fmt.Fprintf(w, "%d pods of %s, %s to %s UTC; %d queries\n", len(f.pods), tabfmt.Printable(sel),
		o.pyro.from.UTC().Format("2006-01-02 15:04:05"), o.pyro.to.UTC().Format("2006-01-02 15:04:05"), f.rd.Queries)
	for _, p := range f.pods {
		state := "no group flagged"
		if p.Flagged > 0 {
			state = fmt.Sprintf("LEAKS: %d groups flagged", p.Flagged)
			if p.Flagged == 1 {
				state = "LEAKS: 1 group flagged"
			}
		}
		l := fmt.Sprintf("pod %s: %d snapshots over %s; %s", tabfmt.Printable(names[showSeries(p.Labels)]), p.Snapshots, spanString(time.Duration(p.WindowS*float64(time.Second))), state)
		if p.Read != p.Snapshots {
			l += fmt.Sprintf(" (%d read in all)", p.Read)
		}
		fmt.Fprintln(w, l)
		for _, n := range p.Notes {
			fmt.Fprintln(w, "note: "+tabfmt.Printable(n))
		}
	}
	for _, n := range f.rd.Notes {
		fmt.Fprintln(w, "note: "+tabfmt.Printable(n))
	}
	fmt.Fprintf(w, "growth over the last half of each pod's series; %s intervals for the %d groups of all pods together (Bonferroni)\n", leaksConf(o), f.groups)
	minRate := "0"
	if o.minRate > 0 {
		minRate = tabfmt.Bytes(o.minRate) + "/s"
	}
	l := fmt.Sprintf("flagged (LEAK) when the lower bound is above %s: %d of %d groups", minRate, f.flagged, f.groups)
	if len(rows) < len(f.rows) {
		l += fmt.Sprintf(", %d shown", len(rows))
	}
	fmt.Fprintln(w, l)
	if o.limit > 0 {
		fmt.Fprintf(w, "limit %s: TO LIMIT from the row's pod's in use at its last snapshot, at the row's rate\n", tabfmt.Bytes(float64(o.limit)))
	}
	fmt.Fprintln(w)
	t := tabfmt.New(w)
	kind, label := groupKind(o.by)
	head := append(leaksCols(o), "POD", "")
	t.Row(head, tabfmt.KeyHeading(kind, label))
	for _, row := range rows {
		cells := []string{row.Kind, perHour(row.Rate), "[" + perHour(row.Lo) + ", " + perHour(row.Hi) + "]",
			tabfmt.Bytes(float64(row.InUseFirst)), tabfmt.Bytes(float64(row.InUseLast))}
		flag := ""
		if row.Flagged {
			flag = "LEAK"
		}
		if o.limit > 0 {
			lim := ""
			if row.Flagged {
				lim = toLimit(f.last[showSeries(row.Pod)], o.limit, row.Rate)
			}
			cells = append(cells, lim)
		}
		t.Row(append(cells, tabfmt.Printable(names[showSeries(row.Pod)]), flag), displayKey(o.by, row.Key))
	}
	t.Flush()
}
