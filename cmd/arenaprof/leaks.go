package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arenaprof/arenaprof/internal/leaks"
	"github.com/arenaprof/arenaprof/internal/tabfmt"
	"github.com/arenaprof/arenaprof/report"
)

const leaksUsage = `usage: arenaprof leaks [-json] [-by func|stack|type|label=KEY] [-confidence C] [-min-rate R] [-limit L] [-n N] [-fail] INPUTS...
       arenaprof leaks -seconds N [-every D] [flags] URL
       arenaprof leaks [-json] URL
       arenaprof leaks -pyroscope URL [-from T] [-to T] [flags] SELECTOR

Which groups' in-use bytes are still growing at the end of a series of
in-use snapshots, how fast (bytes per second, shown per hour), with an
interval that holds for all groups together: a leak, told apart from a
cache that filled earlier, a sawtooth, a steady state and garbage churn.
See docs/leaks.md for the method.

INPUTS are a directory Config.Dir writes (its arena and heap uploads;
an arena and a heap profile of one upload are one point in time), a
quoted glob, or several files, each an in-use snapshot: the agent's heap
and arena uploads, runtime/pprof heap profiles, arenaprof arena
profiles. Files of one directory or glob are read in time order; a
restart (time going back, windows that do not follow each other, a
runtime heap profile's cumulative allocations falling) splits the series
and the part after the last restart is read, as the heading says. At
least 8 snapshots are needed. Cumulative allocation profiles (the
runtime's allocs profile) are refused: in-use is needed.

URL is a running service's base URL (http://host:6060) whose Mux
arenaprof.Start serves. With -seconds N, leaks takes a snapshot of its
arenas and Go heap in use (/debug/arenaprof/memory) at once and every
-every D (1s by default) for N seconds, N/D+1 snapshots (at least 8:
fewer are refused before starting), saying on standard error how far
it is, and fits them as it fits files; a service without arenaprof's
handlers has its Go heap alone read from /debug/pprof/heap, as the
heading says. Without -limit, the limit is the
service's GOMEMLIMIT or its cgroup's memory.max, the lower (read from
/debug/arenaprof/rss), as the table says. With or without -seconds, the
service's leaked goroutines (/debug/pprof/goroutineleak, Go 1.27 or Go
1.26 with GOEXPERIMENT=goroutineleakprofile) are listed by stack after
the table, with the live arenas they hold, exact (docs/goroutine-leaks.md);
a service without that profile gets a note saying how to turn it on.
With -seconds, the leaked goroutine count is also read just before each
snapshot: each read runs one leak-finding garbage collection in the
service, which also brings the Go heap's in-use figures (as of the last
collection) to that moment. Each group's bytes per leaked goroutine are
then fitted as its rate is, against the count in place of the time, and
the groups whose lower bound is above 0 are listed last, as tracking the
leaked goroutines; a count that does not grow over the last half, or
falls, gives a note instead.

With -pyroscope, SELECTOR chooses the agents' heap and arena uploads on
a Pyroscope server over -from to -to, and each pod (a combination of
the labels every series carries, service_name, pod and the agent's
Config.Labels) is a series of its own: its uploads are its snapshots,
its groups are fitted apart, the rows name it, and the intervals hold
for all groups of all pods together. A pod whose uploads stop for more
than five intervals is read after the gap, as the heading says. The
queries: two per day of the range for the labels, two per in-use
profile type and day for each upload's bytes (by type or label=KEY,
that is all), and with -by func or stack at most 18 per pod and kind
for the stacks (one per batch of the fit, the first and the last
snapshot); docs/leaks.md says more.

The rate of each group (its kind, heap or arena, and its key) is the
least-squares slope over the last half of the span, of 16 batch means
at most; its interval adds the batch means' scatter and the snapshots'
sampling variance, at Student's t, with Bonferroni's correction over all
groups: with -confidence 0.95 all intervals hold together with
probability 0.95 or more, and a group that does not grow faster than
-min-rate is flagged with probability 0.025 or less, all groups
together. A group is flagged (LEAK) when its lower bound is above
-min-rate.

-min-rate and -limit take bytes with a unit (16KiB, 1.5GiB, 2MB;
-min-rate also 16KiB/s), -min-rate 0 by default. -limit adds the time
until the total in use of the last snapshot reaches the limit at each
flagged group's rate.

-json prints {"window_s": F, "snapshots": N, "rows": [{"key", "kind",
"rate", "lo", "hi", "flagged", "inuse_first", "inuse_last", "pod"}],
"goroutines": [{"stack", "count", "arena_bytes", "arenas"}],
"goroutines_note", "goroutine_sites": [{"key", "kind",
"bytes_per_goroutine", "lo", "hi", "beyond_time", "verdict"}],
"goroutine_sites_note", "beyond_time_note"}: window_s
is the span of the series analysed (after the last restart), snapshots
the points in time read in all, rate, lo and hi bytes per second,
inuse_first and inuse_last the group's estimated bytes at the first and
last snapshot analysed; goroutines is empty but for a service's URL,
goroutines_note what kept them from being read; goroutine_sites the
groups tracking the leaked goroutines (bytes_per_goroutine, lo and hi in
bytes, lo above 0), empty but for a service read with -seconds,
goroutine_sites_note why they were not fitted; beyond_time
{"bytes_per_goroutine", "lo", "hi"} the bytes per goroutine beyond the
growth in time, null where the count grew in step with the time
(beyond_time_note says why);
verdict "held" (beyond_time's lo above 0), "beside" (beyond_time's hi
below lo: a leak beside the goroutines) or "cannot tell". With -pyroscope, each
row's "pod" holds its pod's labels and "pods" lists each pod's labels,
window_s, snapshots and flagged rows; window_s is the longest pod's span
and snapshots the sum.

Exit status: 0 when the series was read; with -fail, 3 when a group is
flagged or a service's goroutine is leaked.

flags:
`

// leaksOptions are the flags of arenaprof leaks.
type leaksOptions struct {
	json    bool
	by      string
	conf    float64
	minRate float64 // bytes per second
	limit   int64   // 0: none
	n       int
	fail    bool
	inputs  []string
	lim     report.ParseOptions // -max-bytes, -max-memory

	service   string        // a service's base URL (leaks_service.go)
	seconds   time.Duration // -seconds: the span of its snapshots
	every     time.Duration // -every: between its snapshots
	limitFrom string        // where the limit came from, "" for -limit
	// leakCounts: read the service's leaked goroutine count with each
	// snapshot, for the goroutine sites (leaks_join.go).
	leakCounts bool

	pyro pyroscopeOptions // -pyroscope (leaks_pyroscope.go)
}

func runLeaks(args []string, stdout, stderr io.Writer) int {
	opts, err := parseLeaksArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var flagged bool
	if err == nil {
		flagged, err = leaksCommand(opts, stdout, stderr)
	}
	if err != nil {
		return exitWith(stderr, "arenaprof leaks", err)
	}
	if flagged && opts.fail {
		return 3
	}
	return 0
}

func parseLeaksArgs(args []string, stderr io.Writer) (leaksOptions, error) {
	var o leaksOptions
	var minRate, limit, secs, every string
	fs := flag.NewFlagSet("arenaprof leaks", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&o.json, "json", false, "print JSON")
	fs.StringVar(&o.by, "by", "func", "group by `func`, stack, type or label=KEY")
	fs.Float64Var(&o.conf, "confidence", 0.95, "family-wise confidence `level` of the intervals, strictly between 0 and 1")
	fs.StringVar(&minRate, "min-rate", "0", "flag groups growing faster than this many bytes per second (`rate`, e.g. 16KiB)")
	fs.StringVar(&limit, "limit", "", "a memory `limit` (e.g. 4GiB): show when the total in use reaches it")
	fs.IntVar(&o.n, "n", 0, "rows shown; 0 shows all")
	fs.BoolVar(&o.fail, "fail", false, "exit 3 when a group is flagged or a service's goroutine is leaked")
	fs.StringVar(&secs, "seconds", "", "with a service's base URL: take snapshots for `N` seconds")
	fs.StringVar(&every, "every", "", "with -seconds: the `interval` between snapshots (default 1s)")
	lf := addReadLimitFlags(fs)
	own := flag.NewFlagSet("arenaprof leaks", flag.ContinueOnError)
	fs.VisitAll(func(f *flag.Flag) { own.Var(f.Value, f.Name, f.Usage) })
	pf := addPyroscopeFlags(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), leaksUsage)
		own.SetOutput(fs.Output())
		own.PrintDefaults()
		fmt.Fprint(fs.Output(), leaksPyroscopeUsage)
	}
	pos, err := parseAnywhere(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return o, err
	}
	if err != nil {
		return o, topUsageErr("%v", err)
	}
	by, err := parseGroupBy(o.by)
	if err != nil {
		return o, err
	}
	o.by = by
	if o.lim, err = lf.values(); err != nil {
		return o, err
	}
	if o.pyro, err = pf.values(o.lim); err != nil {
		return o, err
	}
	switch {
	case len(pos) == 0 && o.pyro.on():
		return o, topUsageErr("no SELECTOR: give a label selector with -pyroscope, e.g. '{service_name=\"shop\"}'")
	case len(pos) == 0:
		return o, topUsageErr("no INPUTS: give a directory Config.Dir writes, a quoted glob or several in-use snapshots")
	case !(o.conf > 0 && o.conf < 1):
		return o, topUsageErr("-confidence %v: want a level strictly between 0 and 1, e.g. 0.95", o.conf)
	case o.n < 0:
		return o, topUsageErr("-n %d: want 0 (all) or more", o.n)
	}
	if o.minRate, err = parseRate(minRate); err != nil {
		return o, err
	}
	if limit != "" {
		n, ok := parseByteSize(limit)
		if !ok {
			return o, topUsageErr("-limit %q: want a positive size with a unit, e.g. 4GiB", limit)
		}
		o.limit = n
	}
	if o.pyro.on() {
		return o, checkLeaksPyroscope(&o, secs, every, pos)
	}
	for _, in := range pos {
		if in == "-" {
			return o, topUsageErr("standard input: leaks reads a series of snapshots (a Config.Dir directory, a glob, files, or a service's base URL), not one")
		}
	}
	if err := parseServiceArgs(&o, secs, every, pos); err != nil {
		return o, err
	}
	o.inputs = pos
	return o, nil
}

// parseRate reads -min-rate: 0, or a byte size parseByteSize reads,
// optionally followed by "/s", as bytes per second.
func parseRate(s string) (float64, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimSpace(strings.TrimSuffix(t, "/s"))
	if t == "0" || t == "0B" {
		return 0, nil
	}
	n, ok := parseByteSize(t)
	if !ok {
		return 0, topUsageErr("-min-rate %q: want 0 or bytes per second with a unit, e.g. 16KiB or 16KiB/s", s)
	}
	return float64(n), nil
}

// leakRow is one group's line of the table and of -json.
type leakRow struct {
	Key        string  `json:"key"`
	Kind       string  `json:"kind"`
	Rate       float64 `json:"rate"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Flagged    bool    `json:"flagged"`
	InUseFirst int64   `json:"inuse_first"`
	InUseLast  int64   `json:"inuse_last"`
	// Pod is the labels of the row's pod, read with -pyroscope.
	Pod map[string]string `json:"pod,omitempty"`
}

// leaksJSON is what -json prints.
type leaksJSON struct {
	WindowS   float64   `json:"window_s"`
	Snapshots int       `json:"snapshots"`
	Rows      []leakRow `json:"rows"`
	// Goroutines are the leaked goroutines of a service read by its URL
	// (leaks_service.go), GoroutinesNote what kept them from being read.
	Goroutines     []goroutineLeakRow `json:"goroutines"`
	GoroutinesNote string             `json:"goroutines_note,omitempty"`
	// GoroutineSites are the groups tracking the leaked goroutine count
	// (leaks_join.go), GoroutineSitesNote why they were not given.
	GoroutineSites     []goroutineSite `json:"goroutine_sites"`
	GoroutineSitesNote string          `json:"goroutine_sites_note,omitempty"`
	// BeyondTimeNote says why the sites' bytes beyond the growth in time
	// were not given (their beyond_time is null).
	BeyondTimeNote string `json:"beyond_time_note,omitempty"`
}

// leaksResult is the fit of every group of a series.
type leaksResult struct {
	s       *leakSeries
	rows    []leakRow
	fits    map[string]leaks.Fit // by kind, NUL, key, as s.groups
	flagged int
	from    int // the fit's first snapshot
}

// fitLeaks fits every group of s at family-wise confidence conf, flagging
// those whose lower bound is above minRate; the rows are sorted by lower
// bound, highest first, ties by kind and key.
func fitLeaks(s *leakSeries, conf, minRate float64) (*leaksResult, error) {
	if len(s.groups) == 0 {
		return nil, topInputErr("the %d snapshots hold no sample in use: nothing to fit", len(s.times))
	}
	e, err := leaks.New(s.seconds(), len(s.groups), conf)
	if err != nil {
		return nil, topInputErr("%v", err)
	}
	r := &leaksResult{s: s, from: e.From(), fits: make(map[string]leaks.Fit, len(s.groups))}
	for id, g := range s.groups {
		f, err := e.Fit(g.y, g.v)
		if err != nil {
			return nil, topInputErr("%s %s: %v", g.kind, g.key, err)
		}
		r.fits[id] = f
		row := leakRow{Key: g.key, Kind: g.kind, Rate: f.Rate, Lo: f.Lo, Hi: f.Hi, Flagged: f.Lo > minRate,
			InUseFirst: int64(math.Round(g.y[0])), InUseLast: int64(math.Round(g.y[len(g.y)-1]))}
		if row.Flagged {
			r.flagged++
		}
		r.rows = append(r.rows, row)
	}
	slices.SortFunc(r.rows, func(a, b leakRow) int {
		return cmp.Or(cmp.Compare(b.Lo, a.Lo), strings.Compare(a.Kind, b.Kind), strings.Compare(a.Key, b.Key))
	})
	return r, nil
}

// readLeaks reads the series o's inputs name (files, a directory, a glob,
// or a service's snapshots taken now, its countdown on stderr) and fits
// it: what arenaprof leaks and arenaprof html -leaks show. A service's
// limit, when -limit is not given, is set in o.
func readLeaks(o *leaksOptions, stderr io.Writer) (*leaksResult, error) {
	var s *leakSeries
	var err error
	if o.service != "" {
		if o.limit == 0 {
			o.limit, o.limitFrom = serviceLimit(o.service, o.lim)
		}
		if s, err = readServiceSeries(*o, stderr); err != nil {
			return nil, err
		}
		if o.limit == 0 {
			s.notes = append(s.notes, o.limitFrom)
		}
	} else {
		files, skipped, _, err := expandInputs(o.inputs)
		if err != nil {
			return nil, err
		}
		if err := oneProcess(files); err != nil {
			return nil, err
		}
		if s, err = readLeakSeries(files, o.by, withDefaults(o.lim)); err != nil {
			return nil, err
		}
		if len(skipped) > 0 {
			s.notes = append(s.notes, "not read: "+strings.Join(skipped, ", "))
		}
	}
	return fitLeaks(s, o.conf, o.minRate)
}

func leaksCommand(o leaksOptions, stdout, stderr io.Writer) (flagged bool, err error) {
	if o.pyro.on() {
		return leaksPyroscopeCommand(o, stdout)
	}
	if o.service != "" && o.seconds == 0 {
		return serviceGoroutinesOnly(o, stdout)
	}
	o.leakCounts = o.service != ""
	r, err := readLeaks(&o, stderr)
	if err != nil {
		return false, err
	}
	s := r.s
	rows := r.rows
	if o.n > 0 && len(rows) > o.n {
		rows = rows[:o.n]
	}
	out := leaksJSON{WindowS: s.span().Seconds(), Snapshots: s.read, Rows: rows, Goroutines: []goroutineLeakRow{}, GoroutineSites: []goroutineSite{}}
	var sites goroutineSites
	if o.service != "" {
		if out.Goroutines, out.GoroutinesNote, err = goroutineLeaks(o.service); err != nil {
			return false, err
		}
		sites = joinGoroutineSites(r, o.conf)
		out.GoroutineSites, out.GoroutineSitesNote, out.BeyondTimeNote = sites.rows, sites.note, sites.beyondNote
	}
	// A leaked goroutine fails the gate too (docs/leaks.md).
	flagged = r.flagged > 0 || leakedTotal(out.Goroutines) > 0
	if o.json {
		return flagged, writeLeaksJSON(stdout, out)
	}
	writeLeaksTable(stdout, r, rows, o)
	if o.service != "" {
		fmt.Fprintln(stdout)
		writeGoroutineLeaksTable(stdout, out.Goroutines, out.GoroutinesNote)
		fmt.Fprintln(stdout)
		writeGoroutineSitesTable(stdout, sites, o)
	}
	return flagged, nil
}

// writeLeaksJSON prints what -json prints.
func writeLeaksJSON(w io.Writer, out leaksJSON) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// perHour formats a rate in bytes per second as signed bytes per hour.
func perHour(rate float64) string { return tabfmt.SignedBytes(rate * 3600) }

// spanString formats a duration to the second (to the millisecond below
// a minute).
func spanString(d time.Duration) string {
	if d >= time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Millisecond).String()
}

// toLimit is the time until total bytes in use reach limit at rate
// bytes per second: "-" when not growing, "reached" when already there.
func toLimit(total float64, limit int64, rate float64) string {
	switch {
	case total >= float64(limit):
		return "reached"
	case !(rate > 0):
		return "-"
	}
	secs := (float64(limit) - total) / rate
	if secs > 100*365*24*3600 {
		return "> 100 years"
	}
	return spanString(time.Duration(secs * float64(time.Second)))
}

func writeLeaksTable(w io.Writer, r *leaksResult, rows []leakRow, o leaksOptions) {
	for _, l := range leaksHeading(r, rows, o) {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w)
	t := tabfmt.New(w)
	kind, label := groupKind(o.by)
	t.Row(append(leaksCols(o), ""), tabfmt.KeyHeading(kind, label))
	for _, row := range rows {
		cells, flag := leakCells(r, row, o)
		t.Row(append(cells, flag), displayKey(o.by, row.Key))
	}
	t.Flush()
}

// leaksCols are the heads of the table's columns before the flag's.
func leaksCols(o leaksOptions) []string {
	head := []string{"KIND", "GROWTH/h", leaksConf(o) + " INTERVAL/h", "IN USE FIRST", "IN USE LAST"}
	if o.limit > 0 {
		head = append(head, "TO LIMIT")
	}
	return head
}

// leakCells are a row's cells under leaksCols, and its flag: LEAK or "".
func leakCells(r *leaksResult, row leakRow, o leaksOptions) (cells []string, flag string) {
	cells = []string{row.Kind, perHour(row.Rate), "[" + perHour(row.Lo) + ", " + perHour(row.Hi) + "]",
		tabfmt.Bytes(float64(row.InUseFirst)), tabfmt.Bytes(float64(row.InUseLast))}
	if row.Flagged {
		flag = "LEAK"
	}
	if o.limit > 0 {
		lim := ""
		if row.Flagged {
			lim = toLimit(r.s.total[len(r.s.total)-1], o.limit, row.Rate)
		}
		cells = append(cells, lim)
	}
	return cells, flag
}

// leaksConf is the intervals' level as the table's heading names it.
func leaksConf(o leaksOptions) string { return strconv.FormatFloat(100*o.conf, 'f', -1, 64) + "%" }

// leaksHeading is the lines above the table (and the page's heading).
func leaksHeading(r *leaksResult, rows []leakRow, o leaksOptions) []string {
	s := r.s
	var h []string
	l := fmt.Sprintf("%d snapshots, %s", len(s.times), s.describeSpan())
	if s.read != len(s.times) {
		l += fmt.Sprintf("; %d read in all", s.read)
	}
	h = append(h, l)
	for _, note := range s.notes {
		h = append(h, "note: "+tabfmt.Printable(note))
	}
	h = append(h, fmt.Sprintf("growth over the last half: %d snapshots from %s on; %s intervals for the %d groups together (Bonferroni)",
		len(s.times)-r.from, spanString(s.times[r.from].Sub(s.times[0])), leaksConf(o), len(s.groups)))
	minRate := "0"
	if o.minRate > 0 {
		minRate = tabfmt.Bytes(o.minRate) + "/s"
	}
	l = fmt.Sprintf("flagged (LEAK) when the lower bound is above %s: %d of %d groups", minRate, r.flagged, len(s.groups))
	if len(rows) < len(r.rows) {
		l += fmt.Sprintf(", %d shown", len(rows))
	}
	h = append(h, l)
	if o.limit > 0 {
		h = append(h, limitHeading(o, s.total[len(s.total)-1]))
	}
	return h
}

// displayKey is a group's key as the table shows it: function names
// without their import path.
func displayKey(by, key string) string {
	switch groupKindOnly(by) {
	case "func":
		if strings.HasPrefix(key, "0x") {
			return key
		}
		return tabfmt.ShortFuncName(key)
	case "stack":
		frames := strings.Split(key, " < ")
		for i, f := range frames {
			frames[i] = tabfmt.ShortFuncName(f)
		}
		return strings.Join(frames, " < ")
	}
	return key
}
