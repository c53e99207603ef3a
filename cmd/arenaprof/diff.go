package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/arenaprof/arenaprof/report"
)

const diffUsage = `usage: arenaprof diff [flags] BASE NEW

Compares two arenaprof profiles group by group: the estimated bytes in
BASE and in NEW, their ratio NEW/BASE with an interval that holds with
probability at least C, and the difference. A row is significant (marked
*) when its interval excludes 1. Rows are sorted by the size of the
change, largest first; groups present in one profile only have no ratio.
BASE and NEW are profile files (gzipped or not), http(s) URLs of the
arenaprof handler, or - (one of them) for standard input.

The interval combines each profile's exact per-group interval, taken at
confidence sqrt(C): the profiles are sampled independently, so both hold
together with probability at least C. It is conservative, never
anti-conservative, for any sampling means and windows.

flags:
  -by type|func|stack|size|label=KEY
        group by Go type, leaf function, whole stack (leaf first), object
        size class, or the value of a string label (default type)
  -sample alloc|inuse
        allocated bytes, or bytes of objects still in use (default alloc);
        alloc_space and inuse_space are accepted too
  -n N  show the N largest changes, 0 for all (default 10); the total row
        and -fail-above always cover every group
  -confidence C
        confidence of the ratio intervals, strictly between 0 and 1
        (default 0.95)
  -full print group keys whole instead of shortening them to 40 columns
  -max-bytes N
        refuse a profile larger than N bytes, compressed or decompressed
        (default 1GiB); N is a number of bytes or takes a unit: 4GiB, 500MB
  -max-memory N
        refuse a profile that would take more than N bytes of memory to
        read and decode, judged from its records before decoding them
        (default 512MiB: a Go heap profile of about 300,000 samples, an
        arenaprof profile of about 145,000 buckets)
  -fail-above R
        exit with status 3 when some group's ratio_lo exceeds R (R > 0),
        e.g. 1.2: fail when a group grew by at least 20% with confidence C;
        groups present in NEW only have no ratio and do not trip the gate
  -json print JSON instead of a table: {"sample", "by", "confidence",
        "groups", "rows": [{"key", "base_bytes", "new_bytes", "base_samples",
        "new_samples", "diff_bytes", "ratio", "ratio_lo", "ratio_hi",
        "significant"}], "total": {...}}; the ratio fields are null when a
        side has no samples; ratio_hi is null when unbounded

exit status: 0 success, 1 unreadable profile, 2 bad flags or arguments,
3 the -fail-above gate failed.
`

// diffOptions are the parsed flags of arenaprof diff.
type diffOptions struct {
	commonOptions
	failAbove  float64 // 0: no gate
	base, next string
}

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
		code := 1
		var te *topError
		if errors.As(err, &te) {
			code = te.code
		}
		fmt.Fprintln(stderr, topOneLine("arenaprof diff: "+err.Error()))
		return code
	}
	if opts.failAbove > 0 {
		var bad []string
		for _, r := range res.Rows {
			if r.HasRatio && r.RatioLo > opts.failAbove {
				bad = append(bad, fmt.Sprintf("%s (ratio >= %s)", r.Display, strconv.FormatFloat(r.RatioLo, 'g', 3, 64)))
			}
		}
		if len(bad) > 0 {
			fmt.Fprintf(stderr, "arenaprof diff: %d group(s) grew by more than %s with confidence %g: %s\n",
				len(bad), strconv.FormatFloat(opts.failAbove, 'g', -1, 64), opts.confidence, strings.Join(bad, ", "))
			return diffGateCode
		}
	}
	return 0
}

// parseDiffArgs parses the flags and the BASE and NEW arguments. Flags may
// come before, between or after them.
func parseDiffArgs(args []string) (diffOptions, error) {
	fs := flag.NewFlagSet("arenaprof diff", flag.ContinueOnError)
	g := addGroupFlags(fs)
	fail := fs.String("fail-above", "", "")
	pos, err := parseAnywhere(fs, args)
	if err != nil {
		return diffOptions{}, err
	}
	var opts diffOptions
	if opts.commonOptions, err = g.values(); err != nil {
		return opts, err
	}
	if *fail != "" {
		fv, err := strconv.ParseFloat(strings.TrimSpace(*fail), 64)
		if err != nil || !(fv > 0) || math.IsInf(fv, 1) {
			return opts, topUsageErr("bad -fail-above %q; use a ratio above 0, e.g. 1.2 to fail on growth of at least 20%%", *fail)
		}
		opts.failAbove = fv
	}
	if len(pos) != 2 {
		return opts, topUsageErr("%d arguments where BASE and NEW were expected; give two profile files or URLs, e.g. arenaprof diff before.pb.gz after.pb.gz", len(pos))
	}
	opts.base, opts.next = pos[0], pos[1]
	return opts, nil
}

// diff loads both profiles, compares them and writes the report; it
// returns the comparison of every group for the -fail-above gate.
func diff(opts diffOptions, stdout io.Writer) (*report.DiffResult, error) {
	if opts.base == "-" && opts.next == "-" {
		return nil, topUsageErr("BASE and NEW cannot both be - (standard input)")
	}
	base, err := loadArenaProfile(opts.base, opts.limits())
	if err != nil {
		return nil, err
	}
	next, err := loadArenaProfile(opts.next, opts.limits())
	if err != nil {
		return nil, err
	}
	res, err := report.Diff(base.prof, next.prof, report.DiffOptions{
		By: opts.groupingFor(base.prof), InUse: opts.sample == "inuse", Confidence: opts.confidence,
	})
	if err != nil {
		return nil, topInputErr("%s vs %s: %s", opts.base, opts.next, strings.TrimPrefix(err.Error(), "report: "))
	}
	shown := res.Rows
	if opts.n > 0 && len(shown) > opts.n {
		shown = shown[:opts.n]
	}
	if opts.json {
		err = writeDiffJSON(stdout, opts, res, shown)
	} else {
		err = writeDiffTable(stdout, res, shown, opts.full)
	}
	return res, err
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
	Significant bool     `json:"significant"`
}

// diffJSON is the -json output.
type diffJSON struct {
	Sample     string        `json:"sample"`
	By         string        `json:"by"`
	Confidence float64       `json:"confidence"`
	Groups     int           `json:"groups"`
	Rows       []diffRowJSON `json:"rows"`
	Total      diffRowJSON   `json:"total"`
}

func diffRowOut(r report.DiffRow) diffRowJSON {
	out := diffRowJSON{
		Key: r.Key, BaseBytes: r.Base.Bytes, NewBytes: r.New.Bytes,
		BaseSamples: r.Base.Samples, NewSamples: r.New.Samples,
		DiffBytes: r.Delta, Significant: r.Significant,
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

func writeDiffJSON(w io.Writer, opts diffOptions, res *report.DiffResult, shown []report.DiffRow) error {
	out := diffJSON{
		Sample: opts.sample, By: res.By.String(), Confidence: res.Confidence,
		Groups: res.Groups, Rows: []diffRowJSON{}, Total: diffRowOut(res.Total),
	}
	for _, r := range shown {
		out.Rows = append(out.Rows, diffRowOut(r))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// diffKeyWidth bounds the width of the key column.
const diffKeyWidth = 40

// writeDiffTable writes the rows shown and the total as a table; keys longer
// than diffKeyWidth are shortened unless full is set.
func writeDiffTable(w io.Writer, res *report.DiffResult, shown []report.DiffRow, full bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	conf := strconv.FormatFloat(100*res.Confidence, 'g', -1, 64) + "%"
	fmt.Fprintf(tw, "BASE\tNEW\tDIFF\tRATIO\t%s INTERVAL\t\t GROUP\n", conf)
	line := func(r report.DiffRow) {
		ratio, iv, mark := "-", "-", ""
		if r.HasRatio {
			ratio = diffRatio(r.Ratio)
			iv = "[" + diffRatio(r.RatioLo) + ", " + diffRatio(r.RatioHi) + "]"
			if r.Significant {
				mark = "*"
			}
		}
		key := r.Display
		if !full && len([]rune(key)) > diffKeyWidth {
			rs := []rune(key)
			key = string(rs[:diffKeyWidth-3]) + "..."
		}
		delta := report.HumanBytes(math.Abs(float64(r.Delta)))
		switch {
		case r.Delta > 0:
			delta = "+" + delta
		case r.Delta < 0:
			delta = "-" + delta
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t %s\n", report.HumanBytes(float64(r.Base.Bytes)),
			report.HumanBytes(float64(r.New.Bytes)), delta, ratio, iv, mark, diffPrintable(key))
	}
	for _, r := range shown {
		line(r)
	}
	line(res.Total)
	if err := tw.Flush(); err != nil {
		return err
	}
	if hidden := res.Groups - len(shown); hidden > 0 {
		_, err := fmt.Fprintf(w, "(%d more groups; -n 0 shows all)\n", hidden)
		return err
	}
	return nil
}

// diffRatio formats a ratio with three significant digits.
func diffRatio(x float64) string {
	if math.IsInf(x, 1) {
		return "inf"
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// diffPrintable replaces control characters so that a key cannot break the
// table's layout.
func diffPrintable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '\t' {
			return '?'
		}
		return r
	}, s)
}
