package main

import (
	"github.com/arenaprof/arenaprof/internal/goheap"
	"github.com/arenaprof/arenaprof/internal/pprofmt"

	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/arenaprof/arenaprof/report"
)

// readLimitsUsage documents the flags that bound reading a profile, for
// every command that reads one.
const readLimitsUsage = `  -max-bytes N
        refuse a profile larger than N bytes, compressed or decompressed
        (default 1GiB); N is a number of bytes or takes a unit: 4GiB, 500MB
  -max-memory N
        refuse a profile that would take more than N bytes of memory to
        read and decode, judged from its records before decoding them
        (default 512MiB: a Go heap profile of about 300,000 samples, an
        arenaprof profile of about 145,000 buckets); merged inputs count
        together, by what their merged profile keeps (it grows with their
        distinct stacks and labels, not with their number), counted twice
        (it and the merge that extends it), plus what the next one needs;
        a refusal at either bound reads on, keeping none of the data, to
        say what the whole profile needs and a value of the flag that
        reads it
`

const topUsage = `usage: arenaprof top [flags] PROFILE...
       arenaprof top -pyroscope URL [-from T] [-to T] [flags] SELECTOR

Prints the estimated bytes of each group of a profile with a confidence
interval, largest first. The profile is an arenaprof profile, or a heap
or allocs profile of the Go runtime (runtime/pprof, or net/http/pprof's
/debug/pprof/heap and /debug/pprof/allocs). PROFILE is a file (gzipped or
not), an http(s) URL (add ?seconds=N for the delta of an N-second
window), or - for standard input.
` + inputsUsage + `

A live-arenas profile (/debug/arenaprof/arenas) holds exact counts, not
samples: top prints its reserved bytes, used bytes and arenas by leaf
function (the caller of NewArena or Pool.Get), stack or label, largest
reserved first, without intervals, and marks with ! the groups holding
arenas 10 minutes old or more (-old changes the age). -sample and
-confidence do not apply to it.

Go heap intervals are conservative: the runtime does not record where in
an object its sampling fired, so the upper bound allows for objects as
large as the largest sampled one, plus a few times MemProfileRate bytes of
larger objects that were never sampled (see ACCURACY.md, "The Go heap").

The intervals use the window marking the profile carries (see "window" in
the heading): a profile since the profiler started is "end", a delta
"both". arenaprof interval, which has no profile to read it from,
defaults to "both", the conservative choice.

flags:
  -by type|func|stack|size|label=KEY
        group by Go type, leaf function, whole stack (leaf first), object
        size class (powers of two: 1-8 B, 9-16 B, ...), or the value of a
        string label such as a pprof label of the arenas (default type,
        func for a profile holding Go heap memory: a Go heap profile, a
        combined memory profile, a heap upload of the agent; Go heap
        samples record no types); a label no sample carries is an error
        that lists those they carry. An unsymbolized profile (a legacy
        text heap profile such as the Go compiler's -memprofile writes)
        is refused by func and stack: symbolize it with
        go tool pprof -proto BINARY PROFILE > out.pb.gz
  -sample alloc|inuse
        allocated bytes, or bytes of objects still in use (default alloc);
        pprof's names alloc_space and inuse_space are accepted too;
        in-use intervals are conservative: the profile does not record the
        tail of in-use events, so the interval covers every possible tail
  -n N  show the N largest groups, 0 for all (default 10); the total row
        always covers every group
  -confidence C
        confidence of the intervals, strictly between 0 and 1 (default 0.95)
` + fullUsage + `  -old D
        live-arenas profiles: mark the groups holding arenas at least D
        old (default 10m); the profile's age buckets end at 1s, 10s, 1m,
        10m and 1h, so an arena counts as old when its whole bucket is
` + filterUsage + heapUsage + readLimitsUsage + pyroscopeUsage + `  -json print JSON instead of a table: {"sample", "by", "confidence",
        "window" (absent for a Go heap profile), "heap_sampler" and
        "heap_go_version" (with Go heap samples: the rule, and the release
        that chose it), "inputs" (merged inputs only: {"profiles", "from",
        "to", "skipped"}), "groups", "rows": [{"key", "samples", "tail", "bytes",
        "lo", "hi", "objects", "share"}], "total": {...}}; share is a
        fraction; for -sample inuse, tail is null and tail_min/tail_max
        bound it; keys are always whole
`

// inputsUsage documents several inputs per side, for top, diff and html.
const inputsUsage = `
Several inputs are merged into one profile, as go tool pprof merges the
profiles it is given: their values add up and their window markings
join. An input is a file, a URL, -, a directory or a glob: a directory
gives the arena and heap profiles that arenaprof's Config.Dir wrote there,
in time order (its cpu, wall, peak and arenas profiles, temporary and
hidden files are skipped; a directory of other files gives its .pb.gz and
.pb files; symbolic links to files are followed); a glob (quote it, e.g.
'dir/*-arena.pb.gz') gives the files it matches. The heading says how
many profiles were merged, the span of their times, and what a directory
or glob did not read: other profiles and hidden files counted, any other
entry named with why (a symbolic link loop, a subdirectory, ...). Merged
inputs are all arenaprof profiles (arena, heap or combined uploads) or
all Go runtime heap profiles; profiles under different sampling means
merge, Go heap samples of different MemProfileRates or of Go releases
whose heap samplers differ do not, nor do live-arenas and peak profiles
(states of one moment). -max-memory bounds the inputs of a side
together. A file given twice is refused. See docs/inputs.md.`

// commonOptions are the parsed flags top and diff share.
type commonOptions struct {
	by         string
	sample     string // "alloc" or "inuse"
	n          int
	confidence float64
	json       bool
	byDefault  bool          // -by not given: type, or func for a Go heap profile
	width      int           // keys are cut to fit this width; 0: whole
	maxBytes   int64         // bound on a profile's data, compressed or not
	maxMemory  int64         // bound on the memory reading a profile takes
	oldAge     time.Duration // live-arenas profiles: the age of old arenas
	filter     sampleFilter  // -focus, -ignore, -tagfocus, -tagignore
	goVersion  string        // -go-version: the Go release of a Go heap profile that names none
	anyOrder   bool          // -any-order: Go heap intervals for any allocation order
}

// heapUsage documents the flags on the Go heap sampler's rule.
const heapUsage = `  -go-version V
        the Go release whose runtime wrote a Go heap profile that does not
        name it (runtime/pprof's profiles; arenaprof's name it, and win),
        e.g. go1.23 or go1.26.8. Go 1.24 and later skip a byte after each
        sample; the estimates are weighted for it, and runtime/pprof's
        values (and go tool pprof's totals) are about one byte per sample
        short. Default: for a URL of a service's /debug/pprof/heap or
        /allocs, the release its /debug/arenaprof/memory names when it
        runs arenaprof; else the rule of Go 1.24 and later. The heading
        says which rule was used, and from what
  -any-order
        Go heap intervals that hold for any order of the process's
        allocations: the byte skipped after a sample lands on whatever
        is allocated next, so a site whose objects always follow a
        sampled one is undercounted by up to 1/size of its bytes (12% for
        8-byte objects); the total row always holds for any order
`

// limits are the bounds on reading a profile.
func (o commonOptions) limits() report.ParseOptions {
	return report.ParseOptions{MaxBytes: o.maxBytes, MaxMemory: o.maxMemory}
}

// topOptions are the parsed flags of arenaprof top.
type topOptions struct {
	commonOptions
	src  string           // the inputs as messages name them (inputsName)
	srcs []string         // the inputs: merged when several (see loadInputs)
	pyro pyroscopeOptions // -pyroscope: src is a label selector
}

func runTop(args []string, stdout, stderr io.Writer) int {
	opts, err := parseTopArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stderr, topUsage)
		return 0
	}
	if err == nil {
		err = top(opts, stdout)
	}
	if err != nil {
		return exitWith(stderr, "arenaprof top", err)
	}
	return 0
}

// parseTopArgs parses the flags and the PROFILE argument. Flags may come
// before or after PROFILE.
func parseTopArgs(args []string) (topOptions, error) {
	fs := flag.NewFlagSet("arenaprof top", flag.ContinueOnError)
	g := addGroupFlags(fs)
	pf := addPyroscopeFlags(fs)
	pos, err := parseAnywhere(fs, args)
	if err != nil {
		return topOptions{}, err
	}
	return topOptionsOf(g, pf, pos)
}

// topOptionsOf checks the parsed flags and the positional arguments pos.
func topOptionsOf(g groupFlags, pf pyroscopeFlags, pos []string) (opts topOptions, err error) {
	if opts.commonOptions, err = g.values(); err != nil {
		return opts, err
	}
	if opts.pyro, err = pf.values(opts.limits()); err != nil {
		return opts, err
	}
	if opts.pyro.on() && len(pos) != 1 {
		return opts, topUsageErr("%d arguments where one label selector was expected with -pyroscope, e.g. '{service_name=\"shop\"}'", len(pos))
	}
	if len(pos) == 0 {
		return opts, topUsageErr("missing PROFILE; give a profile file or the http(s) URL of the arenaprof handler, e.g. arenaprof top arena.pb.gz")
	}
	opts.src, opts.srcs = inputsName(pos), pos
	return opts, nil
}

// inputsName names the inputs of a side in messages and headings: each
// of one or two, else their count, the first and the last, so that a
// message about thousands of inputs stays one short line.
func inputsName(args []string) string {
	if len(args) <= 2 {
		return strings.Join(args, " ")
	}
	return fmt.Sprintf("%d inputs (%s ... %s)", len(args), args[0], args[len(args)-1])
}

// top loads the profile and writes the table or JSON.
func top(opts topOptions, stdout io.Writer) error {
	ap, err := loadTop(opts)
	if err != nil {
		return err
	}
	opts.goVersion = learnGoVersion(opts.goVersion, opts.limits(), loadedInput{opts.srcs, ap})
	return topReport(ap, opts, stdout)
}

// loadTop loads the profile of top's flags and applies their filters.
func loadTop(opts topOptions) (*arenaProfile, error) {
	var ap *arenaProfile
	var err error
	if opts.pyro.on() {
		ap, err = opts.pyro.load(opts.src, opts.commonOptions)
	} else {
		ap, err = loadInputs(opts.srcs, opts.limits())
	}
	if err != nil {
		return nil, err
	}
	if err := opts.filter.apply(opts.src, ap); err != nil {
		return nil, err
	}
	return ap, nil
}

// topReport groups an already loaded profile with [report.Table] and writes
// the report.
func topReport(ap *arenaProfile, opts topOptions, stdout io.Writer) error {
	if ap.facts.Kind == pprofmt.KindHoldings {
		return topHoldings(ap, opts, stdout)
	}
	res, err := topTable(ap, opts)
	if err != nil {
		return err
	}
	if opts.json {
		return writeTopJSON(stdout, opts, res, ap.merged)
	}
	if err := opts.filter.writeHeading(stdout); err != nil {
		return err
	}
	if ap.merged != nil {
		if _, err := fmt.Fprintln(stdout, "inputs: "+ap.merged.describe()); err != nil {
			return err
		}
	}
	return report.FormatTable(stdout, res, report.FormatOptions{Width: opts.width})
}

// topTable groups a loaded profile (not a live-arenas one) as top's flags
// say: what top prints and what html draws.
func topTable(ap *arenaProfile, opts topOptions) (*report.TableResult, error) {
	if err := checkGrouping(opts.src, ap.prof, opts.groupingFor(ap)); err != nil {
		return nil, err
	}
	res, err := report.Table(ap.prof, report.TableOptions{
		By: opts.groupingFor(ap), InUse: opts.sample == "inuse", N: opts.n, Confidence: opts.confidence,
		GoVersion: opts.goVersion, AnyOrder: opts.anyOrder,
	})
	if err != nil {
		return nil, topInputErr("%s: %s", opts.src, strings.TrimPrefix(err.Error(), "report: "))
	}
	return res, nil
}

// topRowJSON is one row of the -json output.
type topRowJSON struct {
	Key     string  `json:"key"`
	Samples int64   `json:"samples"`
	Tail    *int64  `json:"tail"`               // null for inuse: not recorded
	TailMin *int64  `json:"tail_min,omitempty"` // inuse only
	TailMax *int64  `json:"tail_max,omitempty"` // inuse only
	Bytes   int64   `json:"bytes"`
	Lo      float64 `json:"lo"`
	Hi      float64 `json:"hi"`
	Objects int64   `json:"objects"`
	Share   float64 `json:"share"`
}

// topJSON is the -json output.
type topJSON struct {
	Sample     string       `json:"sample"`
	By         string       `json:"by"`
	Confidence float64      `json:"confidence"`
	Window     string       `json:"window,omitempty"` // none for a Go heap profile
	Sampler    string       `json:"heap_sampler,omitempty"`
	GoVersion  string       `json:"heap_go_version,omitempty"`
	Inputs     *inputsJSON  `json:"inputs,omitempty"` // several inputs merged
	Groups     int          `json:"groups"`
	Rows       []topRowJSON `json:"rows"`
	Total      topRowJSON   `json:"total"`
}

// inputsJSON describes the profiles merged into one side in -json output.
type inputsJSON struct {
	Profiles int        `json:"profiles"`
	From     *time.Time `json:"from,omitempty"`
	To       *time.Time `json:"to,omitempty"`
	Skipped  []string   `json:"skipped,omitempty"`
}

// inputsOut is the -json description of m; nil for one input.
func inputsOut(m *mergedInputs) *inputsJSON {
	if m == nil {
		return nil
	}
	out := &inputsJSON{Profiles: m.n, Skipped: m.skipped}
	if !m.from.IsZero() {
		from, to := m.from, m.to
		out.From, out.To = &from, &to
	}
	return out
}

func writeTopJSON(w io.Writer, opts topOptions, res *report.TableResult, merged *mergedInputs) error {
	row := func(g report.TableRow) topRowJSON {
		r := topRowJSON{
			Key: g.Key, Samples: g.Samples, Bytes: g.Bytes,
			Lo: g.Lo, Hi: g.Hi, Objects: g.Objects, Share: g.Share,
		}
		if res.InUse {
			lo, hi := g.Tail, g.TailMax
			r.TailMin, r.TailMax = &lo, &hi
		} else {
			t := g.Tail
			r.Tail = &t
		}
		return r
	}
	out := topJSON{
		Sample: opts.sample, By: res.By, Confidence: res.Confidence,
		Window: topWindow(res), Sampler: res.HeapSampler, GoVersion: res.HeapGoVersion, Inputs: inputsOut(merged),
		Groups: res.Groups, Rows: []topRowJSON{}, Total: row(res.Total),
	}
	for _, g := range res.Rows {
		out.Rows = append(out.Rows, row(g))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// topWindow is the window marking -json reports: none for a Go heap
// profile, which has no window marking.
func topWindow(res *report.TableResult) string {
	if res.GoHeap {
		return ""
	}
	return res.Window
}

// groupFlags are the flags top and diff share: the grouping, the sample,
// the number of rows, the confidence, JSON output, whole keys and the size
// and memory bounds.
type groupFlags struct {
	by, sample, n, conf, maxBytes, maxMemory, old *string
	focus, ignore, tagFocus, tagIgnore            *string
	goVersion                                     *string
	json, full, anyOrder                          *bool
}

// addGroupFlags defines the shared flags on fs.
func addGroupFlags(fs *flag.FlagSet) groupFlags {
	fs.SetOutput(io.Discard)
	return groupFlags{
		by:        fs.String("by", "", ""),
		sample:    fs.String("sample", "alloc", ""),
		n:         fs.String("n", "10", ""),
		conf:      fs.String("confidence", "0.95", ""),
		maxBytes:  fs.String("max-bytes", strconv.Itoa(pprofmt.DefaultMaxBytes), ""),
		maxMemory: fs.String("max-memory", formatByteSize(pprofmt.DefaultMaxMemory), ""),
		json:      fs.Bool("json", false, ""),
		full:      fs.Bool("full", false, ""),
		old:       fs.String("old", "10m", ""),
		focus:     fs.String("focus", "", ""),
		ignore:    fs.String("ignore", "", ""),
		tagFocus:  fs.String("tagfocus", "", ""),
		tagIgnore: fs.String("tagignore", "", ""),
		goVersion: fs.String("go-version", "", ""),
		anyOrder:  fs.Bool("any-order", false, ""),
	}
}

// parseAnywhere parses args with the flags before, between or after the
// positional arguments, and returns those in order; "--" ends the flags,
// so a profile named "-n" is given as "-- -n". Go's flag package stops at
// the first positional argument, so the flags are moved before the
// positional arguments first (permute), then parsed. Libraries that
// intersperse flags (spf13/pflag) do so for GNU syntax, where -focus
// would read as -f -o -c -u -s: the commands keep Go's single-dash long
// flags, as go tool pprof has them.
func parseAnywhere(fs *flag.FlagSet, args []string) ([]string, error) {
	flags, pos := permute(fs, args)
	if err := fs.Parse(flags); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, topUsageErr("%v; run '%s -h' for the flags", err, fs.Name())
	}
	return append(pos, fs.Args()...), nil
}

// permute splits args into the flags of fs, with their values, and the
// positional arguments, each in order. A flag is an argument that starts
// with "-" and is not "-" (standard input); a flag of fs that is not
// boolean and has no "=" takes the next argument as its value, whatever
// it is. Everything after "--" is positional. Unknown flags stay with the
// flags, for fs.Parse to refuse.
func permute(fs *flag.FlagSet, args []string) (flags, pos []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return flags, append(pos, args[i+1:]...)
		case len(a) < 2 || a[0] != '-':
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil && !isBoolFlag(f) && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return flags, pos
}

// isBoolFlag reports whether f is a boolean flag, which takes no value
// argument.
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// values checks the shared flags and returns their values.
func (g groupFlags) values() (o commonOptions, err error) {
	if o.by, err = parseGroupBy(*g.by); err != nil {
		return
	}
	o.byDefault = *g.by == "" // the flag's default value is empty: see addGroupFlags
	if o.sample, err = parseSample(*g.sample); err != nil {
		return
	}
	if o.n, err = strconv.Atoi(strings.TrimSpace(*g.n)); err != nil || o.n < 0 {
		err = topUsageErr("bad -n %q; use a whole number of rows, 0 for all", *g.n)
		return
	}
	o.confidence, err = strconv.ParseFloat(strings.TrimSpace(*g.conf), 64)
	if err != nil || !(o.confidence > 0 && o.confidence < 1) {
		err = topUsageErr("bad -confidence %q; use a number strictly between 0 and 1, e.g. 0.95", *g.conf)
		return
	}
	var ok bool
	if o.maxBytes, ok = parseByteSize(*g.maxBytes); !ok {
		err = topUsageErr("bad -max-bytes %q; use a positive number of bytes, e.g. 4GiB or 4294967296", *g.maxBytes)
		return
	}
	if o.maxMemory, ok = parseByteSize(*g.maxMemory); !ok {
		err = topUsageErr("bad -max-memory %q; use a positive number of bytes, e.g. 2GiB or 2147483648", *g.maxMemory)
		return
	}
	if o.oldAge, err = time.ParseDuration(strings.TrimSpace(*g.old)); err != nil || o.oldAge <= 0 {
		err = topUsageErr("bad -old %q; use a positive duration, e.g. 10m or 1h", *g.old)
		return
	}
	if o.filter, err = parseFilters(*g.focus, *g.ignore, *g.tagFocus, *g.tagIgnore); err != nil {
		return
	}
	if o.goVersion = strings.TrimSpace(*g.goVersion); o.goVersion != "" {
		if _, err = goheap.RuleOf(o.goVersion); err != nil {
			err = topUsageErr("bad -go-version: %v", err)
			return
		}
	}
	o.anyOrder = *g.anyOrder
	o.json = *g.json
	if !*g.full {
		o.width = terminalWidth()
	}
	return o, nil
}

// parseSample reads -sample: alloc or inuse, or pprof's names of their
// byte sample types. The tables give bytes and objects together, so the
// object sample types are not choices of their own.
func parseSample(s string) (string, error) {
	switch s {
	case "alloc", "alloc_space":
		return "alloc", nil
	case "inuse", "inuse_space":
		return "inuse", nil
	case "alloc_objects", "inuse_objects":
		base, _, _ := strings.Cut(s, "_")
		return "", topUsageErr("-sample %s: the table gives objects beside bytes in every row; use -sample %s", s, base)
	}
	return "", topUsageErr("unknown -sample %q; use alloc (or alloc_space) or inuse (or inuse_space)", s)
}

// groupingFor returns the grouping of the -by flag, or when it was not
// given the default for ap: by type, or by function for a profile holding
// Go heap memory, which records no types.
func (o commonOptions) groupingFor(ap *arenaProfile) string {
	if o.byDefault {
		if holdsGoHeap(ap.facts) {
			return "func"
		}
		return "type"
	}
	return o.by
}
