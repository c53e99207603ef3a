package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/arenaprof/arenaprof/internal/leaks"
	"github.com/arenaprof/arenaprof/internal/rss"
	"github.com/arenaprof/arenaprof/internal/tabfmt"
	"github.com/arenaprof/arenaprof/report"
)

// The paths of a service that leaks URL reads (arenaprof.Start mounts
// them on Config.Mux): the in-use snapshot of its arenas and Go heap in
// one profile, and the resident-memory profile whose comments carry its
// GOMEMLIMIT and cgroup memory.max.
const (
	serviceMemoryPath = "/debug/arenaprof/memory"
	serviceHeapPath   = "/debug/pprof/heap" // net/http/pprof's, where the above is not served
	serviceRSSPath    = "/debug/arenaprof/rss"
)

// maxLeaksSeconds bounds -seconds: a day.
const maxLeaksSeconds = 24 * 3600

// parseServiceArgs checks the service form of leaks: one base URL,
// -seconds N and -every D (D at most N, N/D+1 snapshots, 8 at least).
// Without -seconds the goroutine leaks alone are read.
func parseServiceArgs(o *leaksOptions, secs, every string, pos []string) error {
	service := false
	for _, in := range pos {
		if isProfileURL(in) {
			service = true
		}
	}
	if !service {
		if secs != "" || every != "" {
			return topUsageErr("-seconds and -every take a service's base URL (e.g. http://host:6060), not saved snapshots")
		}
		return nil
	}
	if len(pos) != 1 {
		return topUsageErr("a service's base URL is read alone: %d inputs given", len(pos))
	}
	u, err := url.Parse(pos[0])
	if err != nil || u.Host == "" {
		return topUsageErr("not a valid URL; give a service's base URL, e.g. http://host:6060")
	}
	if strings.Contains(u.Path, "/debug/") {
		return topUsageErr("give the service's base URL (e.g. http://%s), not a profile's: leaks reads %s, %s and /debug/pprof/goroutineleak under it", u.Host, serviceMemoryPath, serviceRSSPath)
	}
	o.service = strings.TrimSuffix(pos[0], "/")
	if secs == "" {
		if every != "" {
			return topUsageErr("-every %s without -seconds: give -seconds N, the span of the snapshots", every)
		}
		return nil
	}
	x, err := strconv.ParseFloat(secs, 64)
	if err != nil || !(x > 0 && x <= maxLeaksSeconds) {
		return topUsageErr("-seconds %q: want a positive number of seconds up to %d, e.g. 600", secs, maxLeaksSeconds)
	}
	o.seconds = time.Duration(x * float64(time.Second))
	o.every = time.Second
	if every != "" {
		d, err := time.ParseDuration(every)
		if err != nil || d <= 0 {
			return topUsageErr("-every %q: want a positive duration, e.g. 1s or 500ms", every)
		}
		o.every = d
	}
	if n := int(o.seconds/o.every) + 1; n < leaks.MinSnapshots {
		return topUsageErr("-seconds %s -every %s takes %d snapshots (one at once, then one every %s): at least %d are needed; give -seconds %s or more, or -every %s or less",
			secs, o.every, n, o.every, leaks.MinSnapshots,
			strconv.FormatFloat(float64(leaks.MinSnapshots-1)*o.every.Seconds(), 'f', -1, 64),
			(o.seconds / time.Duration(leaks.MinSnapshots-1)).Truncate(time.Millisecond))
	}
	return nil
}

// readServiceSeries takes a snapshot of the service at base (its memory
// profile: arenas and Go heap in use) at once and every o.every for
// o.seconds, saying on stderr how far it is, and returns the series
// grouped by o.by. Each snapshot's time is the end its profile states.
// A snapshot whose profiler started at another time than the one before
// it (the service restarted) starts the series again, said in a note.
// With o.leakCounts, the service's leaked goroutine count is read just
// before each snapshot (leakCounter) into s.leaked.
func readServiceSeries(o leaksOptions, stderr io.Writer) (*leakSeries, error) {
	src := o.service + serviceMemoryPath
	n := int(o.seconds/o.every) + 1
	s := &leakSeries{groups: map[string]*leakGroup{}}
	lim := withDefaults(o.lim)
	var prev leakFile
	var counter *leakCounter
	if o.leakCounts {
		counter = &leakCounter{base: o.service}
	}
	start := time.Now()
	p := newProgress(stderr, n, o.every)
	for i := range n {
		if i > 0 {
			time.Sleep(time.Until(start.Add(time.Duration(i) * o.every)))
		}
		p.show(i)
		leaked := counter.read(lim)
		prof, shown, err := readLeakProfile(src, lim)
		if err != nil && i == 0 && strings.Contains(err.Error(), "server answered 404 ") {
			// A service without arenaprof's handlers: its Go heap
			// alone, if it serves net/http/pprof.
			src = o.service + serviceHeapPath
			if prof, shown, err = readLeakProfile(src, lim); err == nil {
				s.notes = append(s.notes, "the service serves no "+serviceMemoryPath+" (arenaprof.Start mounts it on Config.Mux): its Go heap alone is read, from "+serviceHeapPath)
			}
		}
		if err != nil && i == 0 {
			p.done()
			return nil, topInputErr("%v (leaks -seconds reads the service's arenas and Go heap in use at %s, which arenaprof.Start mounts on Config.Mux, or its Go heap alone at %s)", err, serviceMemoryPath, serviceHeapPath)
		}
		if err != nil {
			p.done()
			return nil, err
		}
		f, facts, err := leakFileOf(shown, prof)
		if err != nil {
			p.done()
			return nil, err
		}
		values, err := groupValues(prof, facts, shown, o.by)
		if err != nil {
			p.done()
			return nil, err
		}
		if len(s.times) > 0 {
			if why := serviceRestart(prev, f); why != "" {
				s.notes = append(s.notes, fmt.Sprintf("restart before snapshot %d (%s): the %d snapshots before it are not read", i+1, why, len(s.times)))
				s.times, s.total, s.groups, s.leaked = nil, nil, map[string]*leakGroup{}, nil
			}
		}
		if leaked >= 0 {
			s.leaked = append(s.leaked, float64(leaked))
		}
		s.times = append(s.times, f.at)
		s.total = append(s.total, 0)
		s.read++
		s.add(values, len(s.times)-1)
		prev = f
	}
	p.done()
	if len(s.times) < leaks.MinSnapshots {
		return nil, topInputErr("%d snapshots after the last restart: at least %d are needed; read again", len(s.times), leaks.MinSnapshots)
	}
	if counter != nil && len(s.leaked) != len(s.times) {
		s.leaked = nil
	}
	if counter != nil {
		s.leakedNote = counter.note
	}
	for _, g := range s.groups {
		for len(g.y) < len(s.times) {
			g.y, g.v = append(g.y, 0), append(g.v, 0)
		}
	}
	return s, nil
}

// serviceRestart says why snapshot f of a service cannot follow prev in
// one process ("" when it can): its profiler started at another time, its
// time goes back, or (a runtime heap profile) its cumulative allocations
// fell.
func serviceRestart(prev, f leakFile) string {
	switch {
	case !f.start.Equal(prev.start):
		return "the profiler's start moved from " + prev.start.UTC().Format(time.RFC3339) + " to " + f.start.UTC().Format(time.RFC3339)
	case f.at.Before(prev.at):
		return "time goes back"
	case f.cumulative >= 0 && prev.cumulative >= 0 && f.cumulative < prev.cumulative:
		return "the cumulative allocations fell"
	}
	return ""
}

// serviceLimit reads the memory limit of the service at base from its
// resident-memory profile's comments: the lower of GOMEMLIMIT and the
// cgroup's memory.max, with its name; 0 and a note saying why when there
// is none.
func serviceLimit(base string, lim report.ParseOptions) (limit int64, from string) {
	p, _, err := readLeakProfile(base+serviceRSSPath, withDefaults(lim))
	if err != nil {
		return 0, "no limit: the service's GOMEMLIMIT and memory.max could not be read (" + err.Error() + "); give -limit"
	}
	gml, cg := rss.Limits(p)
	switch {
	case gml > 0 && (cg == 0 || gml <= cg):
		return gml, "the service's GOMEMLIMIT"
	case cg > 0:
		return cg, "the service's cgroup memory.max"
	}
	return 0, "no limit: the service sets no GOMEMLIMIT and has no cgroup memory.max; give -limit"
}

// progress says on a terminal, in one line updated in place, which
// snapshot of n is being taken and how long is left; elsewhere a line at
// the start and one every tenth of the snapshots.
type progress struct {
	w       io.Writer
	cr      interface{ CarriageReturn() error }
	n       int
	every   time.Duration
	width   int
	inPlace bool
}

func newProgress(w io.Writer, n int, every time.Duration) *progress {
	cr, ok := w.(interface{ CarriageReturn() error })
	return &progress{w: w, cr: cr, n: n, every: every, inPlace: ok && stderrIsTerminal()}
}

func (p *progress) show(i int) {
	left := time.Duration(p.n-1-i) * p.every
	msg := fmt.Sprintf("arenaprof leaks: snapshot %d of %d, %s left", i+1, p.n, left.Round(time.Second/10))
	switch {
	case p.inPlace:
		_ = p.cr.CarriageReturn()
		fmt.Fprintf(p.w, "%-*s", p.width, msg) // spaces clear a longer line before it
		p.width = max(p.width, len(msg))
	case i == 0 || i == p.n-1 || i%max(p.n/10, 1) == 0:
		fmt.Fprintln(p.w, msg)
	}
}

func (p *progress) done() {
	if p.inPlace && p.width > 0 {
		_ = p.cr.CarriageReturn()
		fmt.Fprintf(p.w, "%-*s\r", p.width, "")
		p.width = 0
	}
}

// goroutineLeaks reads the leaked goroutines of the service at base
// within a minute.
func goroutineLeaks(base string) ([]goroutineLeakRow, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rows, note, err := readGoroutineLeaks(ctx, base)
	if err != nil {
		return nil, "", topInputErr("the goroutine leaks of %s: %v", redactText(base), err)
	}
	return rows, note, nil
}

// serviceGoroutinesOnly is leaks URL without -seconds: the goroutine
// leaks, no growth; leaked reports whether any goroutine is leaked (what
// -fail exits 3 on).
func serviceGoroutinesOnly(o leaksOptions, stdout io.Writer) (leaked bool, err error) {
	rows, note, err := goroutineLeaks(o.service)
	if err != nil {
		return false, err
	}
	leaked = leakedTotal(rows) > 0
	if o.json {
		return leaked, writeLeaksJSON(stdout, leaksJSON{Rows: []leakRow{}, Goroutines: rows, GoroutinesNote: note, GoroutineSites: []goroutineSite{},
			GoroutineSitesNote: "growth not read: bytes per leaked goroutine needs -seconds N"})
	}
	fmt.Fprintln(stdout, "growth not read: give -seconds N (and -every D) to take snapshots of the service")
	writeGoroutineLeaksTable(stdout, rows, note)
	return leaked, nil
}

// limitHeading is the table's line on the limit: its value and where it
// came from.
func limitHeading(o leaksOptions, last float64) string {
	from := ""
	if o.limitFrom != "" {
		from = " (" + o.limitFrom + ")"
	}
	return fmt.Sprintf("limit %s%s: %s in use at the last snapshot; TO LIMIT at each flagged group's rate", tabfmt.Bytes(float64(o.limit)), from, tabfmt.Bytes(last))
}
