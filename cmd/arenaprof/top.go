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
	"unicode"
	"unicode/utf8"

	"github.com/arenaprof/arenaprof/profiler"
)

const topUsage = `usage: arenaprof top [flags] PROFILE

Prints the estimated bytes of each group of an arenaprof profile with a
confidence interval, largest first. PROFILE is a profile file (gzipped or
not) or the http(s) URL of the arenaprof handler.

flags:
  -by type|func|stack|label=KEY
        group by Go type, leaf function, whole stack (leaf first), or the
        value of a string label (default type)
  -sample alloc|inuse
        allocated bytes, or bytes of objects still in use (default alloc);
        in-use intervals are conservative: the profile does not record the
        tail of in-use events, so the interval covers every possible tail
  -n N  show the N largest groups, 0 for all (default 10); the total row
        always covers every group
  -confidence C
        confidence of the intervals, strictly between 0 and 1 (default 0.95)
  -json print JSON instead of a table: {"sample", "by", "confidence",
        "window", "groups", "rows": [{"key", "samples", "tail", "bytes",
        "lo", "hi", "objects", "share"}], "total": {...}}; share is a
        fraction; for -sample inuse, tail is null and tail_min/tail_max
        bound it
`

// topOptions are the parsed flags of arenaprof top.
type topOptions struct {
	by         groupBy
	sample     string // "alloc" or "inuse"
	n          int
	confidence float64
	json       bool
	src        string
}

// topWidth is the terminal width the table is laid out for.
const topWidth = 80

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
		code := 1
		var te *topError
		if errors.As(err, &te) {
			code = te.code
		}
		fmt.Fprintln(stderr, topOneLine("arenaprof top: "+err.Error()))
		return code
	}
	return 0
}

// parseTopArgs parses the flags and the PROFILE argument. Flags may come
// before or after PROFILE.
func parseTopArgs(args []string) (topOptions, error) {
	fs := flag.NewFlagSet("arenaprof top", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	by := fs.String("by", "type", "")
	sample := fs.String("sample", "alloc", "")
	n := fs.String("n", "10", "")
	conf := fs.String("confidence", "0.95", "")
	js := fs.Bool("json", false, "")
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return topOptions{}, err
			}
			return topOptions{}, topUsageErr("%v; run 'arenaprof top -h' for the flags", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	var opts topOptions
	var err error
	if opts.by, err = parseGroupBy(*by); err != nil {
		return opts, err
	}
	switch *sample {
	case "alloc", "inuse":
		opts.sample = *sample
	default:
		return opts, topUsageErr("unknown -sample %q; use alloc or inuse", *sample)
	}
	nv, err := strconv.Atoi(strings.TrimSpace(*n))
	if err != nil || nv < 0 {
		return opts, topUsageErr("bad -n %q; use a whole number of rows, 0 for all", *n)
	}
	opts.n = nv
	cv, err := strconv.ParseFloat(strings.TrimSpace(*conf), 64)
	if err != nil || !(cv > 0 && cv < 1) {
		return opts, topUsageErr("bad -confidence %q; use a number strictly between 0 and 1, e.g. 0.95", *conf)
	}
	opts.confidence = cv
	opts.json = *js
	switch len(pos) {
	case 0:
		return opts, topUsageErr("missing PROFILE; give a profile file or the http(s) URL of the arenaprof handler, e.g. arenaprof top arena.pb.gz")
	case 1:
		opts.src = pos[0]
	default:
		return opts, topUsageErr("%d arguments (%s) where one PROFILE was expected; give a single file or URL", len(pos), strings.Join(pos, " "))
	}
	return opts, nil
}

// top loads the profile and writes the table or JSON.
func top(opts topOptions, stdout io.Writer) error {
	ap, err := loadArenaProfile(opts.src)
	if err != nil {
		return err
	}
	return topReport(ap, opts, stdout)
}

// topReport groups an already loaded profile and writes the report.
func topReport(ap *arenaProfile, opts topOptions, stdout io.Writer) error {
	groups, total, err := groupSamples(ap, opts.by, opts.sample)
	if err != nil {
		return topInputErr("%s: %v", opts.src, err)
	}
	shown := groups
	if opts.n > 0 && len(shown) > opts.n {
		shown = shown[:opts.n]
	}
	if err := computeGroupIntervals(append(shown[:len(shown):len(shown)], total), opts.confidence, ap.window, ap.prof.Period); err != nil {
		return topInputErr("%s: %v", opts.src, err)
	}
	if opts.json {
		return writeTopJSON(stdout, opts, ap.window, len(groups), shown, total)
	}
	return writeTopTable(stdout, opts, ap.window, len(groups), shown, total)
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
	Window     string       `json:"window"`
	Groups     int          `json:"groups"`
	Rows       []topRowJSON `json:"rows"`
	Total      topRowJSON   `json:"total"`
}

func share(part, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return float64(part) / float64(total)
}

func writeTopJSON(w io.Writer, opts topOptions, win profiler.Window, ngroups int, shown []*topGroup, total *topGroup) error {
	row := func(g *topGroup) topRowJSON {
		r := topRowJSON{
			Key: g.key, Samples: g.samples, Bytes: g.bytes,
			Lo: g.lo, Hi: g.hi, Objects: g.objects, Share: share(g.bytes, total.bytes),
		}
		if opts.sample == "inuse" {
			lo, hi := g.tailLo, g.tailHi
			r.TailMin, r.TailMax = &lo, &hi
		} else {
			t := g.tailLo
			r.Tail = &t
		}
		return r
	}
	out := topJSON{
		Sample: opts.sample, By: opts.by.String(), Confidence: opts.confidence,
		Window: profWindowName(win), Groups: ngroups, Rows: []topRowJSON{}, Total: row(total),
	}
	for _, g := range shown {
		out.Rows = append(out.Rows, row(g))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// writeTopTable writes the human-readable table, laid out for 80 columns.
func writeTopTable(w io.Writer, opts topOptions, win profiler.Window, ngroups int, shown []*topGroup, total *topGroup) error {
	what := "allocated bytes"
	if opts.sample == "inuse" {
		what = "in-use bytes"
	}
	confPct := strconv.FormatFloat(opts.confidence*100, 'g', 6, 64) + "%"
	var b strings.Builder
	fmt.Fprintf(&b, "%s by %s, %s intervals, window %s\n", what, opts.by, confPct, profWindowName(win))
	if len(shown) < ngroups {
		fmt.Fprintf(&b, "showing %d of %d groups; the total covers all of them\n", len(shown), ngroups)
	} else {
		fmt.Fprintf(&b, "%d %s\n", ngroups, map[bool]string{true: "group", false: "groups"}[ngroups == 1])
	}
	if opts.sample == "inuse" {
		b.WriteString("in-use intervals are conservative: they allow for any tail of the events\n")
	}
	b.WriteString("\n")

	keyHead := map[string]string{"type": "TYPE", "func": "FUNCTION", "stack": "STACK (LEAF FIRST)"}[opts.by.kind]
	if opts.by.kind == "label" {
		keyHead = "LABEL " + opts.by.label
	}
	head := []string{keyHead, "SAMPLES", "BYTES", confPct + " INTERVAL", "OBJECTS", "SHARE"}
	cells := [][]string{}
	for _, g := range append(shown[:len(shown):len(shown)], total) {
		key := g.key
		if g.display != "" {
			key = g.display
		}
		cells = append(cells, []string{
			printableKey(key),
			strconv.FormatInt(g.samples, 10),
			humanBytes(float64(g.bytes)),
			"[" + humanBytes(g.lo) + ", " + humanBytes(g.hi) + "]",
			humanCount(float64(g.objects)),
			strconv.FormatFloat(100*share(g.bytes, total.bytes), 'f', 1, 64) + "%",
		})
	}
	widths := make([]int, len(head))
	for i, h := range head {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, row := range cells {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	const gap = 2
	rest := 0
	for _, wd := range widths[1:] {
		rest += gap + wd
	}
	widths[0] = min(widths[0], max(topWidth-rest, 12))
	fromLeft := opts.by.kind == "type" // type names end in the informative part
	writeRow := func(row []string, key string) {
		b.WriteString(padRight(key, widths[0]))
		for i := 1; i < len(row); i++ {
			b.WriteString(strings.Repeat(" ", gap))
			if i == 3 {
				b.WriteString(padRight(row[i], widths[i]))
			} else {
				b.WriteString(padLeft(row[i], widths[i]))
			}
		}
		b.WriteString("\n")
	}
	writeRow(head, truncateKey(head[0], widths[0], false))
	for _, row := range cells {
		writeRow(row, truncateKey(row[0], widths[0], fromLeft))
	}
	// Trailing spaces from padding the interval column are not wanted.
	lines := strings.Split(b.String(), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

// printableKey replaces characters that would break the table layout.
func printableKey(s string) string {
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, s)
}

// truncateKey shortens s to width runes with an ellipsis, keeping its end
// when fromLeft and its start otherwise (stacks begin at the leaf).
func truncateKey(s string, width int, fromLeft bool) string {
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	if width < 1 {
		return ""
	}
	if fromLeft {
		return "…" + string(r[len(r)-(width-1):])
	}
	return string(r[:width-1]) + "…"
}

func padRight(s string, w int) string {
	return s + strings.Repeat(" ", max(0, w-utf8.RuneCountInString(s)))
}

func padLeft(s string, w int) string {
	return strings.Repeat(" ", max(0, w-utf8.RuneCountInString(s))) + s
}

// threeDigits formats x (>= 0, < 1000) with three significant digits.
func threeDigits(x float64) string {
	switch {
	case x < 9.995:
		return strconv.FormatFloat(x, 'f', 2, 64)
	case x < 99.95:
		return strconv.FormatFloat(x, 'f', 1, 64)
	default:
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
}

// humanBytes formats a byte count with binary units and three significant
// digits: 512B, 1.23KiB, 45.6MiB, 789GiB.
func humanBytes(x float64) string {
	if math.IsNaN(x) || x < 0 {
		return "?"
	}
	if x < 999.5 {
		return strconv.FormatFloat(x, 'f', 0, 64) + "B"
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	for i, u := range units {
		x /= 1024
		if x < 999.5 || i == len(units)-1 {
			return threeDigits(x) + u
		}
	}
	panic("unreachable")
}

// humanCount formats an object count with SI suffixes: 999, 1.23k, 45.6M.
func humanCount(x float64) string {
	if math.IsNaN(x) || x < 0 {
		return "?"
	}
	if x < 999.5 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	units := []string{"k", "M", "G", "T", "P", "E"}
	for i, u := range units {
		x /= 1000
		if x < 999.5 || i == len(units)-1 {
			return threeDigits(x) + u
		}
	}
	panic("unreachable")
}
