package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/arenaprof/arenaprof/internal/goleak"
	"github.com/arenaprof/arenaprof/internal/leaks"
	"github.com/arenaprof/arenaprof/internal/pprofread"
	"github.com/arenaprof/arenaprof/internal/tabfmt"
	"github.com/arenaprof/arenaprof/report"
)

// The heap and arena groups whose in-use bytes track a service's leaked
// goroutine count: bytes per leaked goroutine, with an interval
// (leaks.PerNew), from the count read with each snapshot of leaks URL
// -seconds N.

// leakCounter reads a service's leaked goroutine count before each
// snapshot. The count's read runs the runtime's leak-finding garbage
// collection, which also brings the Go heap profile's in-use figures (as
// of the last collection) up to that moment: the snapshot read right
// after holds the heap as it was when the count was taken. A service
// without the profile, or a read that fails, stops the counting with a
// note.
type leakCounter struct {
	base string
	n    int    // counts read
	note string // why the counting stopped
	off  bool
}

// read returns the leaked goroutine count, or -1 when it is not read
// (c nil, or the counting stopped).
func (c *leakCounter) read(lim report.ParseOptions) int64 {
	if c == nil || c.off {
		return -1
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, ok, err := goleak.Count(ctx, c.base, goleak.Options{Read: pprofread.Options(lim)})
	switch {
	case err != nil:
		c.off, c.note = true, fmt.Sprintf("the leaked goroutine count could not be read with snapshot %d (%v): bytes per leaked goroutine not given", c.n+1, redactText(err.Error()))
		return -1
	case !ok:
		c.off, c.note = true, "the service serves no "+goleak.LeakPath+": bytes per leaked goroutine not given"
		return -1
	}
	c.n++
	return n
}

// goroutineSite is one row of "goroutine_sites" in leaks -json: a group
// whose in-use bytes track the leaked goroutine count, its bytes per
// leaked goroutine and their family-wise interval, the same beyond the
// growth in time (nil where it cannot be told) and the verdict.
type goroutineSite struct {
	Key               string      `json:"key"`
	Kind              string      `json:"kind"`
	BytesPerGoroutine float64     `json:"bytes_per_goroutine"`
	Lo                float64     `json:"lo"`
	Hi                float64     `json:"hi"`
	BeyondTime        *beyondTime `json:"beyond_time"`
	Verdict           string      `json:"verdict"`
}

// beyondTime is a group's bytes per leaked goroutine beyond the growth
// in time (leaks.PartialNew) and their family-wise interval.
type beyondTime struct {
	BytesPerGoroutine float64 `json:"bytes_per_goroutine"`
	Lo                float64 `json:"lo"`
	Hi                float64 `json:"hi"`
}

// The verdicts on a group tracking the leaked goroutines (docs/leaks.md,
// "What tracks means"): held when its bytes per goroutine beyond the
// growth in time are above 0 (lower bound); beside when they are clearly
// fewer than its bytes per goroutine (the partial upper bound below the
// marginal lower bound: part or all of its growth is the time's, a leak
// beside the goroutines); cannot tell otherwise, or where the count grew
// in step with the time. A group the goroutines alone hold at b bytes
// each has both intervals covering b, so it is called beside with
// probability at most 1-C, all groups together; a group growing on its
// own at a steady pace is called held with probability at most (1-C)/2.
const (
	verdictHeld   = "held"
	verdictBeside = "beside"
	verdictCannot = "cannot tell"
)

// verdict is the verdict on a group of marginal fit m and partial fit p
// (nil where the partial fit was refused).
func verdict(m leaks.Fit, p *beyondTime) string {
	switch {
	case p == nil:
		return verdictCannot
	case p.Lo > 0:
		return verdictHeld
	case p.Hi < m.Lo:
		return verdictBeside
	}
	return verdictCannot
}

// goroutineSites is the join of a service's series with its leaked
// goroutine count.
type goroutineSites struct {
	rows []goroutineSite
	// note says why the join was not made ("" when it was).
	note string
	// first and last are the count at the fit's first and last snapshot,
	// groups the groups fitted (the family of the intervals).
	first, last float64
	groups      int
	// beyondNote says why bytes beyond the growth in time were not
	// fitted ("" when they were).
	beyondNote string
}

// joinGoroutineSites fits every group of r's series against the leaked
// goroutine count read with each snapshot, over the rate's window, at
// family-wise confidence conf (Bonferroni over all groups, as for the
// rate), and keeps the groups whose lower bound is above 0, highest
// first.
func joinGoroutineSites(r *leaksResult, conf float64) goroutineSites {
	s := r.s
	out := goroutineSites{rows: []goroutineSite{}, groups: len(s.groups)}
	if s.leaked == nil {
		out.note = s.leakedNote
		if out.note == "" {
			out.note = "the leaked goroutine count was not read: bytes per leaked goroutine not given"
		}
		return out
	}
	e, err := leaks.PerNew(s.seconds(), s.leaked, len(s.groups), conf)
	var ce *leaks.CountError
	switch {
	case errors.As(err, &ce) && ce.Falls:
		out.note = fmt.Sprintf("the leaked goroutine count falls from %.0f to %.0f at snapshot %d: leaked goroutines are never collected, so these counts are not of one process; bytes per leaked goroutine not given", ce.Before, ce.After, ce.At+1)
		return out
	case errors.As(err, &ce):
		out.note = fmt.Sprintf("the leaked goroutine count is %.0f at every snapshot of the last half: bytes per leaked goroutine needs it to grow there; read longer, while goroutines leak", ce.Before)
		return out
	case err != nil:
		out.note = "bytes per leaked goroutine not given: " + err.Error()
		return out
	}
	out.first, out.last = s.leaked[e.From()], s.leaked[len(s.leaked)-1]
	p, err := leaks.PartialNew(s.seconds(), s.leaked, len(s.groups), conf)
	var coll *leaks.CollinearError
	switch {
	case errors.As(err, &coll) && coll.Batches < 5:
		out.beyondNote = fmt.Sprintf("the last half has %d snapshots; bytes beyond the growth in time need 5 at least: read longer", coll.Batches)
	case errors.As(err, &coll):
		out.beyondNote = fmt.Sprintf("the count grew in step with the time over the last half (the time explains all but %.2g%% of its variance, %.2g%% at least must be left): which group the goroutines hold and which grows beside them cannot be told; goroutines leaking in bursts tell them apart", 100*coll.Unexplained, 100*leaks.MinBeyondTime)
	case err != nil:
		out.beyondNote = "bytes beyond the growth in time not given: " + err.Error()
	}
	for _, g := range s.groups {
		f, err := e.Fit(g.y, g.v)
		if err != nil {
			out.note = fmt.Sprintf("bytes per leaked goroutine not given: %s %s: %v", g.kind, g.key, err)
			out.rows = []goroutineSite{}
			return out
		}
		if !(f.Lo > 0) {
			continue
		}
		row := goroutineSite{Key: g.key, Kind: g.kind, BytesPerGoroutine: f.Rate, Lo: f.Lo, Hi: f.Hi}
		if p != nil {
			pf, err := p.Fit(g.y, g.v)
			if err != nil {
				out.note = fmt.Sprintf("bytes per leaked goroutine not given: %s %s: %v", g.kind, g.key, err)
				out.rows = []goroutineSite{}
				return out
			}
			row.BeyondTime = &beyondTime{BytesPerGoroutine: pf.Rate, Lo: pf.Lo, Hi: pf.Hi}
		}
		row.Verdict = verdict(f, row.BeyondTime)
		out.rows = append(out.rows, row)
	}
	slices.SortFunc(out.rows, func(a, b goroutineSite) int {
		return cmp.Or(cmp.Compare(b.Lo, a.Lo), strings.Compare(a.Kind, b.Kind), strings.Compare(a.Key, b.Key))
	})
	return out
}

// writeGoroutineSitesTable prints the groups that track the leaked
// goroutines, or the note saying why none are given.
func writeGoroutineSitesTable(w io.Writer, j goroutineSites, o leaksOptions) {
	if j.note != "" {
		fmt.Fprintln(w, "note: "+tabfmt.Printable(j.note))
		return
	}
	fmt.Fprintf(w, "bytes per leaked goroutine over the last half (the count from %.0f to %.0f); %s intervals for the %d groups together (Bonferroni)\n",
		j.first, j.last, leaksConf(o), j.groups)
	fmt.Fprintf(w, "tracking the leaked goroutines when the lower bound is above 0: %d of %d groups\n", len(j.rows), j.groups)
	if len(j.rows) == 0 {
		return
	}
	fmt.Fprintln(w, "BEYOND TIME: bytes per goroutine beyond the growth in time; held when above 0, beside when below PER GOROUTINE (a leak beside the goroutines)")
	if j.beyondNote != "" {
		fmt.Fprintln(w, "note: "+tabfmt.Printable(j.beyondNote))
	}
	fmt.Fprintln(w)
	t := tabfmt.New(w)
	kind, label := groupKind(o.by)
	t.Row([]string{"KIND", "PER GOROUTINE", leaksConf(o) + " INTERVAL", "BEYOND TIME", "VERDICT"}, tabfmt.KeyHeading(kind, label))
	for _, r := range j.rows {
		beyond := "-"
		if b := r.BeyondTime; b != nil {
			beyond = maybeNegBytes(b.BytesPerGoroutine) + " [" + maybeNegBytes(b.Lo) + ", " + maybeNegBytes(b.Hi) + "]"
		}
		t.Row([]string{r.Kind, tabfmt.Bytes(r.BytesPerGoroutine), "[" + tabfmt.Bytes(r.Lo) + ", " + tabfmt.Bytes(r.Hi) + "]", beyond, r.Verdict}, displayKey(o.by, r.Key))
	}
	_ = t.Flush()
}

// maybeNegBytes formats bytes that may be below 0 (beyond the growth in
// time): -35.8KiB, 64.0KiB.
func maybeNegBytes(x float64) string {
	if x < 0 {
		return tabfmt.SignedBytes(x)
	}
	return tabfmt.Bytes(x)
}

// leakedTotal is the number of leaked goroutines in rows.
func leakedTotal(rows []goroutineLeakRow) int64 {
	var n int64
	for _, r := range rows {
		n += r.Count
	}
	return n
}
