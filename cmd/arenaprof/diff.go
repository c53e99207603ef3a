package main

import (
	"github.com/arenaprof/arenaprof/internal/pprofmt"

	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/arenaprof/arenaprof/internal/tabfmt"
	"github.com/arenaprof/arenaprof/report"
)

const diffUsage = `usage: arenaprof diff [flags] BASE NEW
       arenaprof diff [flags] -base BASE [-base BASE...] NEW...
       arenaprof diff -pyroscope URL [-from T] [-to T] [flags] BASE_SELECTOR NEW_SELECTOR

Compares two memory profiles group by group: the estimated bytes in BASE
and in NEW, their ratio NEW/BASE with an interval that holds with
probability at least C, and the difference. BASE and NEW are both
arenaprof profiles (arena or combined memory profiles, agent uploads) or
both heap or allocs profiles of the Go runtime. A row is significant
(marked *) when the group's true bytes differ with confidence C over all
rows together: each row's p-value (the one its interval inverts) is
adjusted by Holm's step-down method over the rows with a ratio and the
total, so two runs of an unchanged workload flag any row with probability
at most 1-C however many rows there are. Each interval stays marginal (it
covers its own ratio with probability C), so a row whose interval just
excludes 1 may be left unmarked; -per-row marks every row whose interval
excludes 1, as before. Rows are sorted by the size of the change, largest
first; groups present in one profile only have no ratio. BASE and NEW are
profile files (gzipped or not), http(s) URLs of the arenaprof handler or
of net/http/pprof, or - (one of them) for standard input; each may be a
directory or a quoted glob, whose profiles are merged (diff before/
after/ compares two Config.Dir directories). With -base, BASE's inputs
are the -base flags and NEW's the arguments.
` + inputsUsage + `

The interval is the exact conditional test for two counts (given their
sum, one is binomial), extended to groups that mix object sizes and
sampling means; see ACCURACY.md, "Comparing two profiles". It measures
sampling error only: a program that allocates differently from one run to
the next (map growth, scheduling, caches) differs by more than sampling
explains, and that variation is yours to control. Compare two runs of the
same version first to see it, and gate by function rather than by stack.

Two captures of one steady load differ by how much load each window
served: a window twice as long, or serving twice the requests, doubles
every group. -per second divides each side by its window's length,
-per request by the arenas arena.Pool.Get handed out in its window (the
count an arenaprof profile records; a Go heap profile or an arenaprof
profile written before it was recorded is refused per request); both
divisors are exact, so each ratio and its interval are the captured ones
times BASE's divisor over NEW's, and a row is marked when its bytes per
second or per request differ.

The table follows a heading that names what is compared (BASE and NEW,
the sample and the grouping), each profile's window marking ("Go heap
profile" for a runtime profile, which has none) and the confidence, the
normalisation in force with each side's divisor, and a legend of its
marks: * after the interval marks a significant change
(Holm-adjusted over the rows, or the interval excludes 1 with -per-row);
- in RATIO and INTERVAL marks a group present in one profile only.

flags:
  -by type|func|stack|size|label=KEY
        group by Go type, leaf function, whole stack (leaf first), object
        size class, or the value of a string label (default type, func for
        a profile holding Go heap memory, which records no types); an
        unsymbolized profile (a legacy text heap profile) is refused by
        func and stack: symbolize it with
        go tool pprof -proto BINARY PROFILE > out.pb.gz
  -sample alloc|inuse
        allocated bytes, or bytes of objects still in use (default alloc);
        alloc_space and inuse_space are accepted too
  -n N  show the N largest changes, 0 for all (default 10); the total row
        and -fail-above always cover every group
  -confidence C
        confidence of the ratio intervals, strictly between 0 and 1
        (default 0.95); the marks and -fail-above hold it over all rows
  -base INPUT
        an input of BASE, repeated for each (a file, URL, directory or
        glob); the arguments are then NEW's inputs
  -per second|request|none
        normalise each side before comparing: by its window's length in
        seconds (BASE/s, NEW/s, DIFF/s are bytes per second), by the
        arenas arena.Pool.Get handed out in its window (BASE/req ...), or
        not at all (default none: bytes as captured); the heading names
        the normalisation and each side's divisor
  -per-row
        test each row alone: mark every row whose interval excludes 1 and
        fail -fail-above on any material row whose ratio_lo exceeds R
        (with many rows, an unchanged workload then trips on noise)
` + fullUsage + `` + filterUsage + heapUsage + readLimitsUsage + pyroscopeUsage + `  -fail-above R
        exit with status 3 when some material group grew by more than R
        (R > 0), e.g. 1.2: fail when a group grew by at least 20% with
        confidence C over all material groups: its ratio_lo exceeds R and
        its one-sided p-value of a ratio at most R, Holm-adjusted over the
        material groups, is below (1-C)/2 (the level of ratio_lo alone), so
        an unchanged workload fails with probability at most (1-C)/2; with
        -per-row, any material ratio_lo above R fails; groups present in
        NEW only have no ratio and do not trip the gate; two live-arenas
        profiles (exact counts, no intervals) refuse it
  -min-share S
        a group is material for -fail-above when its NEW bytes are at
        least S times NEW's total, 0 <= S <= 1 (default 0.005, as pprof's
        -nodefraction)
  -min-bytes N
        and at least N bytes in NEW (default 0)
  -json print JSON instead of a table: {"sample", "by", "confidence",
        "per_row", "normalisation": {"per", "base_divisor",
        "new_divisor"} (window seconds, arenas handed out, or 1 and 1 with
        none), "family", "base_inputs" and "new_inputs" (a side of
        merged inputs: as top's "inputs"), "groups", "rows": [{"key", "base_bytes",
        "new_bytes", "base_samples", "new_samples", "diff_bytes", "ratio",
        "ratio_lo", "ratio_hi", "p", "p_adjusted", "significant",
        "conservative", and with -per second or request "base_norm",
        "new_norm", "diff_norm": the normalised bytes}], "total": {...}};
        base_bytes, new_bytes and diff_bytes stay as captured, the ratio
        fields are normalised; the ratio fields are null when
        a side has no samples; ratio_hi is null when unbounded; p is the
        row's two-sided p-value (its interval excludes 1 when p < 1-C),
        p_adjusted is p Holm-adjusted over the family's rows (p with
        -per-row), significant is p_adjusted < 1-C, and conservative
        (marked ~ in the table) says the interval rests on samples of
        mixed sizes without their variance sums, read at the worst
        variance: Pyroscope uploads made before arenaprof sent the sums

exit status: 0 success, 1 unreadable profile, 2 bad flags or arguments,
3 the -fail-above gate failed.
`

// diffOptions are the parsed flags of arenaprof diff.
type diffOptions struct {
	commonOptions
	failAbove  float64 // 0: no gate
	minShare   float64 // materiality of a group for the gate: share of NEW's total
	minBytes   int64   // and bytes in NEW
	perRow     bool    // -per-row: no adjustment for the number of rows
	per        string  // -per: second, request or none
	base, next string  // the inputs of each side as messages name them
	// bases and nexts are the inputs of each side: merged when several
	// (see loadInputs).
	bases, nexts []string
	pyro         pyroscopeOptions // -pyroscope: base and next are label selectors
}

// defaultMinShare is the default -min-share: pprof's default -nodefraction.
const defaultMinShare = 0.005

// diffGateCode is the exit status when the -fail-above gate fails.
const diffGateCode = 3

func runDiff(args []string, stdout, stderr io.Writer) int {
	opts, err := parseDiffArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stderr, diffUsage)
		return 0
	}
	var res *report.DiffResult
	if err == nil {
		res, err = diff(opts, stdout)
	}
	if err != nil {
		return exitWith(stderr, "arenaprof diff", err)
	}
	if opts.failAbove > 0 && res != nil { // res is nil for live-arenas profiles, which refuse -fail-above
		if bad := diffGate(res, opts); len(bad) > 0 {
			over := " over all material groups"
			if opts.perRow {
				over = " (each group alone)"
			}
			fmt.Fprintf(stderr, "arenaprof diff: %d group(s) grew by more than %s with confidence %g%s: %s\n",
				len(bad), strconv.FormatFloat(opts.failAbove, 'g', -1, 64), opts.confidence, over, strings.Join(bad, ", "))
			return diffGateCode
		}
	}
	return 0
}

// diffGate returns the material groups whose ratio_lo exceeds the
// -fail-above ratio, each with its bound.
func diffGate(res *report.DiffResult, opts diffOptions) []string {
	var bad []string
	for _, r := range opts.gate().Failing(res) {
		bad = append(bad, fmt.Sprintf("%s (ratio >= %s)", r.Display, strconv.FormatFloat(r.RatioLo, 'g', 3, 64)))
	}
	return bad
}

// gate is the -fail-above gate of the flags.
func (o diffOptions) gate() report.Gate {
	return report.Gate{FailAbove: o.failAbove, MinShare: o.minShare, MinBytes: o.minBytes}
}

// parseDiffArgs parses the flags and the BASE and NEW arguments. Flags may
// come before, between or after them.
func parseDiffArgs(args []string) (diffOptions, error) {
	fs := flag.NewFlagSet("arenaprof diff", flag.ContinueOnError)
	df := addDiffFlags(fs)
	pos, err := parseAnywhere(fs, args)
	if err != nil {
		return diffOptions{}, err
	}
	return df.options(pos)
}

// diffFlags are the flags of arenaprof diff: top's and the gate's.
type diffFlags struct {
	g                        groupFlags
	pf                       pyroscopeFlags
	fail, minShare, minBytes *string
	perRow                   *bool
	per                      *string
	base                     *listFlag // -base, repeated: BASE's inputs
}

// listFlag is a flag that may be repeated: each use adds one value.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, " ") }

// Set adds one value.
func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// addDiffFlags defines diff's flags on fs.
func addDiffFlags(fs *flag.FlagSet) diffFlags {
	return diffFlags{
		g:        addGroupFlags(fs),
		pf:       addPyroscopeFlags(fs),
		fail:     fs.String("fail-above", "", ""),
		minShare: fs.String("min-share", strconv.FormatFloat(defaultMinShare, 'g', -1, 64), ""),
		minBytes: fs.String("min-bytes", "0", ""),
		perRow:   fs.Bool("per-row", false, ""),
		per:      fs.String("per", "none", ""),
		base:     func() *listFlag { l := new(listFlag); fs.Var(l, "base", ""); return l }(),
	}
}

// options checks the parsed flags and the positional arguments pos.
func (df diffFlags) options(pos []string) (opts diffOptions, err error) {
	fail, minShare, minBytes := df.fail, df.minShare, df.minBytes
	if opts.commonOptions, err = df.g.values(); err != nil {
		return opts, err
	}
	if opts.pyro, err = df.pf.values(opts.limits()); err != nil {
		return opts, err
	}
	if *fail != "" {
		fv, err := strconv.ParseFloat(strings.TrimSpace(*fail), 64)
		if err != nil || !(fv > 0) || math.IsInf(fv, 1) {
			return opts, topUsageErr("bad -fail-above %q; use a ratio above 0, e.g. 1.2 to fail on growth of at least 20%%", *fail)
		}
		opts.failAbove = fv
	}
	ms, err := strconv.ParseFloat(strings.TrimSpace(*minShare), 64)
	if err != nil || !(ms >= 0 && ms <= 1) {
		return opts, topUsageErr("bad -min-share %q; use a fraction of NEW's total between 0 and 1, e.g. 0.01", *minShare)
	}
	opts.minShare = ms
	mb, err := strconv.ParseInt(strings.TrimSpace(*minBytes), 10, 64)
	if err != nil || mb < 0 {
		return opts, topUsageErr("bad -min-bytes %q; use a number of bytes, 0 or more", *minBytes)
	}
	opts.minBytes = mb
	opts.perRow = *df.perRow
	switch opts.per = strings.TrimSpace(*df.per); opts.per {
	case "second", "request", "none":
	default:
		return opts, topUsageErr("bad -per %q; use second (divide each side by its window's length), request (by the arenas arena.Pool.Get handed out in its window) or none", *df.per)
	}
	if len(*df.base) > 0 {
		if opts.pyro.on() {
			return opts, topUsageErr("-base lists profile inputs: with -pyroscope give the BASE and NEW label selectors as arguments")
		}
		if len(pos) == 0 {
			return opts, topUsageErr("missing NEW: with -base, the arguments are NEW's inputs, e.g. arenaprof diff -base before1.pb.gz -base before2.pb.gz after1.pb.gz after2.pb.gz")
		}
		opts.bases, opts.nexts = *df.base, pos
	} else {
		if len(pos) != 2 && opts.pyro.on() {
			return opts, topUsageErr("%d arguments where BASE and NEW label selectors were expected with -pyroscope, e.g. '{service_name=\"shop\",version=\"v1\"}' '{service_name=\"shop\",version=\"v2\"}'", len(pos))
		}
		if len(pos) != 2 {
			return opts, topUsageErr("%d arguments where BASE and NEW were expected; give two profile files or URLs, e.g. arenaprof diff before.pb.gz after.pb.gz; to merge several profiles per side give a directory or a quoted glob per side (arenaprof diff before/ 'after/*.pb.gz'), or list BASE's with -base", len(pos))
		}
		opts.bases, opts.nexts = pos[:1], pos[1:]
	}
	opts.base, opts.next = inputsName(opts.bases), inputsName(opts.nexts)
	return opts, nil
}

// diff loads both profiles, compares them and writes the report; it
// returns the comparison of every group for the -fail-above gate.
func diff(opts diffOptions, stdout io.Writer) (*report.DiffResult, error) {
	base, next, err := loadDiff(opts)
	if err != nil {
		return nil, err
	}
	if base.facts.Kind == pprofmt.KindHoldings || next.facts.Kind == pprofmt.KindHoldings {
		return nil, diffHoldings(base, next, opts, stdout)
	}
	base, next, res, err := diffCompare(opts, base, next)
	if err != nil {
		return nil, err
	}
	shown := diffShown(res, opts)
	if opts.json {
		err = writeDiffJSON(stdout, opts, base, next, res, shown)
	} else {
		err = writeDiffTable(stdout, opts, base, next, res, shown)
	}
	return res, err
}

// loadDiff loads BASE and NEW.
func loadDiff(opts diffOptions) (base, next *arenaProfile, err error) {
	if slices.Contains(opts.bases, "-") && slices.Contains(opts.nexts, "-") {
		return nil, nil, topUsageErr("BASE and NEW cannot both be - (standard input)")
	}
	if opts.pyro.on() {
		if base, err = opts.pyro.load(opts.base, opts.commonOptions); err != nil {
			return nil, nil, err
		}
		if next, err = opts.pyro.load(opts.next, opts.commonOptions); err != nil {
			return nil, nil, err
		}
		return base, next, nil
	}
	if base, err = loadInputs(opts.bases, opts.limits()); err != nil {
		return nil, nil, err
	}
	if next, err = loadInputs(opts.nexts, opts.limits()); err != nil {
		return nil, nil, err
	}
	return base, next, nil
}

// diffCompare filters two loaded profiles (not live-arenas ones) and
// compares every group: what diff prints and what html draws. It returns
// the profiles compared (-pyroscope regroups them).
func diffCompare(opts diffOptions, base, next *arenaProfile) (_, _ *arenaProfile, _ *report.DiffResult, err error) {
	if opts.pyro.on() {
		if base, next, err = opts.pyro.regroup(opts.diffGrouping(base, next), opts, base, next); err != nil {
			return nil, nil, nil, err
		}
	}
	if err := opts.filter.applyBoth(opts.base, opts.next, base, next); err != nil {
		return nil, nil, nil, err
	}
	opts.goVersion = learnGoVersion(opts.goVersion, opts.limits(), loadedInput{opts.bases, base}, loadedInput{opts.nexts, next})
	by := opts.diffGrouping(base, next)
	for _, ap := range []struct {
		src string
		p   *arenaProfile
	}{{opts.base, base}, {opts.next, next}} {
		if err := checkGrouping(ap.src, ap.p.prof, by); err != nil {
			return nil, nil, nil, err
		}
	}
	res, err := report.Diff(base.prof, next.prof, report.DiffOptions{
		By: by, InUse: opts.sample == "inuse", Confidence: opts.confidence,
		GoVersion: opts.goVersion, AnyOrder: opts.anyOrder, PerRow: opts.perRow, Per: opts.per,
	})
	if err != nil {
		// Name the side a normalisation refuses by its inputs.
		msg := strings.NewReplacer("the base profile", "BASE "+opts.base, "the new profile", "NEW "+opts.next).Replace(strings.TrimPrefix(err.Error(), "report: "))
		return nil, nil, nil, topInputErr("%s vs %s: %s", opts.base, opts.next, msg)
	}
	return base, next, res, nil
}

// diffShown is the rows -n shows, largest changes first.
func diffShown(res *report.DiffResult, opts diffOptions) []report.DiffRow {
	shown := res.Rows
	if opts.n > 0 && len(shown) > opts.n {
		shown = shown[:opts.n]
	}
	return shown
}

// diffGrouping is the grouping of the -by flag or, when it was not given,
// by type, or by function when either profile holds Go heap memory.
func (o diffOptions) diffGrouping(base, next *arenaProfile) string {
	by := o.groupingFor(base)
	if holdsGoHeap(next.facts) && o.byDefault {
		by = o.groupingFor(next)
	}
	return by
}

// diffRowJSON is one row of the -json output.
type diffRowJSON struct {
	Key         string   `json:"key"`
	BaseBytes   int64    `json:"base_bytes"`
	NewBytes    int64    `json:"new_bytes"`
	BaseSamples int64    `json:"base_samples"`
	NewSamples  int64    `json:"new_samples"`
	DiffBytes   int64    `json:"diff_bytes"`
	Ratio       *float64 `json:"ratio"`
	RatioLo     *float64 `json:"ratio_lo"`
	RatioHi     *float64 `json:"ratio_hi"`
	P           float64  `json:"p"`
	PAdjusted   float64  `json:"p_adjusted"`
	Significant bool     `json:"significant"`
	// Conservative: the interval rests on samples of mixed sizes without
	// their variance sums (report.DiffRow.Conservative).
	Conservative bool `json:"conservative"`
	// BaseNorm, NewNorm and DiffNorm are the normalised bytes (per second
	// or per request), only under -per second or request.
	BaseNorm *float64 `json:"base_norm,omitempty"`
	NewNorm  *float64 `json:"new_norm,omitempty"`
	DiffNorm *float64 `json:"diff_norm,omitempty"`
}

// normJSON is the normalisation of the -json output: per and each side's
// divisor (window seconds or arenas handed out; 1 with none).
type normJSON struct {
	Per  string  `json:"per"`
	Base float64 `json:"base_divisor"`
	New  float64 `json:"new_divisor"`
}

// diffJSON is the -json output.
type diffJSON struct {
	Sample     string        `json:"sample"`
	By         string        `json:"by"`
	Confidence float64       `json:"confidence"`
	PerRow     bool          `json:"per_row"`
	Norm       normJSON      `json:"normalisation"`
	Family     int           `json:"family"`
	Sampler    *[2]string    `json:"heap_sampler,omitempty"`    // base, new
	GoVersion  *[2]string    `json:"heap_go_version,omitempty"` // base, new
	BaseInputs *inputsJSON   `json:"base_inputs,omitempty"`     // BASE merges several inputs
	NewInputs  *inputsJSON   `json:"new_inputs,omitempty"`      // NEW merges several inputs
	Groups     int           `json:"groups"`
	Rows       []diffRowJSON `json:"rows"`
	Total      diffRowJSON   `json:"total"`
}

func diffRowOut(r report.DiffRow, per string) diffRowJSON {
	out := diffRowJSON{
		Key: r.Key, BaseBytes: r.Base.Bytes, NewBytes: r.New.Bytes,
		BaseSamples: r.Base.Samples, NewSamples: r.New.Samples,
		DiffBytes: r.Delta, P: r.P, PAdjusted: r.PAdjusted, Significant: r.Significant,
		Conservative: r.Conservative,
	}
	if per != "none" {
		b, n, d := r.BaseNorm, r.NewNorm, r.NewNorm-r.BaseNorm
		out.BaseNorm, out.NewNorm, out.DiffNorm = &b, &n, &d
	}
	if r.HasRatio {
		ratio, lo := r.Ratio, r.RatioLo
		out.Ratio, out.RatioLo = &ratio, &lo
		if !math.IsInf(r.RatioHi, 1) {
			hi := r.RatioHi
			out.RatioHi = &hi
		}
	}
	return out
}

func writeDiffJSON(w io.Writer, opts diffOptions, base, next *arenaProfile, res *report.DiffResult, shown []report.DiffRow) error {
	out := diffJSON{
		Sample: opts.sample, By: res.By, Confidence: res.Confidence,
		PerRow: res.PerRow, Norm: normJSON{res.Per, res.Divisors[0], res.Divisors[1]}, Family: res.Family,
		BaseInputs: inputsOut(base.merged), NewInputs: inputsOut(next.merged),
		Groups: res.Groups, Rows: []diffRowJSON{}, Total: diffRowOut(res.Total, res.Per),
	}
	if res.HeapSampler != [2]string{} {
		out.Sampler, out.GoVersion = &res.HeapSampler, &res.HeapGoVersion
	}
	for _, r := range shown {
		out.Rows = append(out.Rows, diffRowOut(r, res.Per))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// writeDiffTable writes the heading, the legend, the rows shown and the
// total as a table; keys are cut to opts.width (0: whole).
func writeDiffTable(w io.Writer, opts diffOptions, base, next *arenaProfile, res *report.DiffResult, shown []report.DiffRow) error {
	rows := append(shown[:len(shown):len(shown)], res.Total)
	heading := diffHeading(opts, base, next, res)
	if slices.ContainsFunc(rows, func(r report.DiffRow) bool { return r.HasRatio && r.Conservative }) {
		heading = append(heading, tabfmt.ConservativeLegend)
	}
	if _, err := io.WriteString(w, strings.Join(heading, "\n")+"\n\n"); err != nil {
		return err
	}
	conf := strconv.FormatFloat(100*res.Confidence, 'g', -1, 64) + "%"
	cols := tabfmt.DiffColumns(res.Per)
	head := []string{cols[0], cols[1], cols[2], "RATIO", conf + " INTERVAL", ""}
	cells := [][]string{head}
	for _, r := range rows {
		ratio, iv, mark := "-", "-", ""
		if r.HasRatio {
			ratio = diffRatio(r.Ratio)
			iv = "[" + diffRatio(r.RatioLo) + ", " + diffRatio(r.RatioHi) + "]"
			if r.Significant {
				mark = "*"
			}
			if r.Conservative {
				mark += "~"
			}
		}
		cells = append(cells, []string{tabfmt.Bytes(r.BaseNorm), tabfmt.Bytes(r.NewNorm),
			tabfmt.SignedBytes(r.NewNorm - r.BaseNorm), ratio, iv, mark})
	}
	room := keyRoom(opts.width, cells)
	t := tabfmt.New(w)
	t.Row(head, tabfmt.Cut(tabfmt.KeyHeading(groupKind(res.By)), room, 0))
	for i, r := range rows {
		t.Row(cells[i+1], tabfmt.CutKey(r.Key, groupKindOnly(res.By), room))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	if hidden := res.Groups - len(shown); hidden > 0 {
		_, err := fmt.Fprintf(w, "(%d more groups; -n 0 shows all)\n", hidden)
		return err
	}
	return nil
}

// diffHeading is the heading of the table: what is compared, the
// windows, the filters, the Go heap sampler's rules and the legend.
func diffHeading(opts diffOptions, base, next *arenaProfile, res *report.DiffResult) []string {
	conf := strconv.FormatFloat(100*res.Confidence, 'g', -1, 64) + "%"
	what := "allocated bytes"
	if res.InUse {
		what = "in-use bytes"
	}
	lines := []string{
		fmt.Sprintf("%s by %s: BASE %s vs NEW %s", what, res.By, redactText(opts.base), redactText(opts.next)),
		fmt.Sprintf("windows: BASE %s, NEW %s; %s intervals on the ratio NEW/BASE", diffWindow(base), diffWindow(next), conf),
		diffNormLine(res),
	}
	for _, side := range []struct {
		name string
		ap   *arenaProfile
	}{{"BASE", base}, {"NEW", next}} {
		if side.ap.merged != nil {
			lines = append(lines, side.name+" inputs: "+side.ap.merged.describe())
		}
	}
	if d := opts.filter.describe(); d != "" {
		lines = append(lines, d)
	}
	if res.HeapSampler != [2]string{} {
		lines = append(lines, diffSamplerLine(res, opts.anyOrder))
	}
	mark := fmt.Sprintf("* marks a significant change: the ratio's %s interval excludes 1 (the group's true bytes differ)", conf)
	if !res.PerRow {
		mark = fmt.Sprintf("* marks a significant change at %s over all %d rows tested (Holm-adjusted p < %s; each interval alone is at %s)",
			conf, res.Family, strconv.FormatFloat(100*(1-res.Confidence), 'g', 4, 64)+"%", conf)
	}
	return append(lines, mark,
		"- in RATIO and INTERVAL: the group is in one profile only")
}

// diffNormLine says which normalisation is in force and each side's
// divisor.
func diffNormLine(res *report.DiffResult) string {
	b, n := res.Divisors[0], res.Divisors[1]
	switch res.Per {
	case "second":
		return fmt.Sprintf("per second of window: BASE %s s, NEW %s s; bytes per second, ratio and interval of the rates", diffNum(b), diffNum(n))
	case "request":
		return fmt.Sprintf("per request: BASE %s, NEW %s arenas handed out by arena.Pool.Get; bytes per request, ratio and interval of those", diffNum(b), diffNum(n))
	}
	return "not normalised: bytes as captured (-per second or -per request divides each side by its window's length or its requests)"
}

// diffNum formats a divisor: whole numbers as they are, others (window
// seconds) with six significant digits.
func diffNum(x float64) string {
	if x == math.Trunc(x) && x < 1e15 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'g', 6, 64)
}

// diffWindow describes the window marking of a profile for the heading.
func diffWindow(ap *arenaProfile) string {
	if ap.facts.Kind == pprofmt.KindGoHeap {
		return "Go heap profile"
	}
	return ap.facts.Window.String()
}

// diffRatio formats a ratio with three significant digits.
func diffRatio(x float64) string {
	if math.IsInf(x, 1) {
		return "inf"
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// diffSamplerLine says which Go heap sampler's rule each side's estimates
// assume (see report.TableResult.HeapSampler).
func diffSamplerLine(res *report.DiffResult, anyOrder bool) string {
	side := func(i int) string {
		if res.HeapSampler[i] == "" {
			return "no Go heap samples"
		}
		v := res.HeapGoVersion[i]
		if v == "" {
			v = "assumed"
		}
		return res.HeapSampler[i] + " rule (" + v + ")"
	}
	s := "Go heap sampler: BASE " + side(0) + ", NEW " + side(1)
	if anyOrder {
		s += "; intervals hold for any allocation order"
	}
	for i := range 2 {
		if res.HeapSampler[i] != "" && res.HeapGoVersion[i] == "" {
			return s + "; assumed where a profile names no Go release: pass -go-version if it ran Go 1.23 or older"
		}
	}
	return s
}
