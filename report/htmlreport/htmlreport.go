package htmlreport

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/arenaprof/arenaprof/internal/tabfmt"
	"github.com/arenaprof/arenaprof/report"
)

//go:embed page.tmpl
var pageTmpl string

//go:embed page.css
var pageCSS string

//go:embed page.js
var pageJS string

var page = template.Must(template.New("page").Parse(pageTmpl))

// csp is the Content-Security-Policy of every page: no request to
// anywhere, and only the page's own script and style, named by their
// SHA-256 hashes (they are the same on every page: the data is in the
// markup, not in the script).
var csp = func() string {
	h := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	return "default-src 'none'; script-src " + h(pageJS) + "; style-src " + h(pageCSS) +
		"; img-src 'none'; base-uri 'none'; form-action 'none'"
}()

// ContentSecurityPolicy returns the policy a server should send with a
// page (the page carries it in a meta element too): nothing may be
// loaded, and no script or style runs but the page's own. A server adds
// frame-ancestors, which a meta element cannot set.
func ContentSecurityPolicy() string { return csp + "; frame-ancestors 'none'" }

// Options configure [Top] and [Diff].
type Options struct {
	// Title is the page's title; "" means "arenaprof".
	Title string
	// Heading are the lines shown above the table, such as those
	// arenaprof top prints; nil means the result's own heading
	// ([report.TableResult.Heading]; none for a diff).
	Heading []string
	// Flame, when not nil, adds a flame graph of its frames to a [Top]
	// page.
	Flame *report.FlameNode
	// Gate, when not nil, shows the verdict of a -fail-above gate on a
	// [Diff] page, over every row of the result (see
	// [report.Gate.Failing]).
	Gate *report.Gate
	// N, when above 0, shows the first N rows of a [Diff] result, the
	// largest changes (arenaprof diff -n); the gate still reads them all.
	N int
	// Refresh, when not "", adds a Refresh link to this URL and the time
	// the page was taken (Taken): a live page.
	Refresh, Taken string
}

// pageData is what the template shows.
type pageData struct {
	Title      string
	CSP        string
	CSS        template.CSS
	JS         template.JS
	Heading    []string
	Live       bool
	Refresh    string
	Taken      string
	Gate       *gateData
	KeyHead    string
	Cols       []string   // the heads of a top table's columns before its bar
	AxisHead   string     // the head of its bar's column
	Exact      bool       // the figures are exact: no interval to sort by
	Tree       bool       // the rows are a tree (treePage): no sorting, no filter
	Chunks     [][]topRow // the rows, in tables of chunkRows
	Total      *topRow
	DiffChunks [][]diffRow
	DiffTotal  *diffRow
	Hidden     string
	Flame      *flameData
	Leaks      *leaksData // a leaks read's table and plots, in place of the others
}

type gateData struct {
	Failed bool
	Text   string
}

// topRow is one row of a top table: the data attributes carry the
// numbers of arenaprof top -json, formatted as encoding/json formats them.
// The row shows its key from data-key (the style sheet draws it), but
// where the key needs Text: see keyText.
type topRow struct {
	Key, Text, Class string
	Of               string // data-class: the class a tree page's row is, or is under
	Est, Lo, Hi      string
	Cells            []string // one per column of Cols
	Bar              template.HTML
}

// diffRow is one row of a diff table; the data attributes carry the
// numbers of arenaprof diff -json ("" where it has null), and on a
// comparison of live-arenas profiles the reserved bytes of each side
// (BaseReserved, NewReserved; "" on a sampled comparison).
type diffRow struct {
	Key, Text, Class          string
	RatioLo, RatioHi          string
	Significant               bool
	Conservative              bool // data-conservative="true": diff -json's conservative
	Delta                     string
	BaseReserved, NewReserved string
	Cells                     []string // one per column of Cols but the last, the mark's
	Mark                      string   // "*" (significant), "~" (conservative), both, or "+" (grew), or ""
	Bar                       template.HTML
}

type flameData struct {
	Height int
	Note   string
	Frames []frame
}

type frame struct {
	Name, Short, Title string
	X, W               string
	Y, Depth, Color    int
}

// keyText returns "" for a key the page shows as it is, from its
// data-key attribute (the style sheet draws attr(data-key) after the
// row's cells, so that a long stack is in the page once), and the text
// to show in a cell of its own for a key that holds control characters
// or bidirectional controls, which must not reach the screen.
func keyText(key string) string {
	if t := text(key); t != key {
		return t
	}
	return ""
}

// rowClass joins the classes of a row: cls, and "k" for a row that
// shows its key in a cell of its own (see keyText).
func rowClass(cls, keyText string) string {
	if keyText == "" {
		return cls
	}
	return strings.TrimSpace(cls + " k")
}

// pct formats a position on the 0..1000 axis as a percentage with one
// decimal, in its shortest form.
func pct(x float64) string {
	return strconv.FormatFloat(math.Round(x)/10, 'f', -1, 64) + "%"
}

// trimmed formats x with at most four decimals, without trailing zeros.
func trimmed(x float64) string {
	return strconv.FormatFloat(math.Round(x*1e4)/1e4, 'f', -1, 64)
}

// jsonNumber formats x as encoding/json does, so that a page's data
// attributes equal the CLI's -json output character for character.
func jsonNumber(x float64) string {
	b, err := json.Marshal(x)
	if err != nil { // NaN or an infinity: JSON has no such number
		return ""
	}
	return string(b)
}

// text makes a name from a profile safe to read: control characters
// (terminal escapes among them) and bidirectional overrides become '?'
// as in the CLI's tables; the template escapes the rest.
func text(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Bidi_Control, r) || unicode.Is(unicode.Join_Control, r) {
			return '?'
		}
		return r
	}, tabfmt.Printable(s))
}

// keyHead is the heading of the key column for a grouping.
func keyHead(by string) string {
	kind, label, _ := strings.Cut(by, "=")
	return tabfmt.KeyHeading(kind, label)
}

func confText(c float64) string {
	return strconv.FormatFloat(100*c, 'g', 6, 64) + "%"
}

func title(o Options, def string) string {
	if o.Title != "" {
		return text(o.Title)
	}
	return def
}

// linear maps x on the axis [0, hi] to 0..1000.
func linear(x, hi float64) float64 {
	if !(hi > 0) {
		return 0
	}
	return math.Max(0, math.Min(1000, 1000*x/hi))
}

// bar draws an interval [lo, hi] with its estimate est on a 0..1000 axis,
// in percentages of the cell's width; the style sheet sizes the rest (the
// estimate is the last rect). An exact figure (lo = est = hi) is the
// estimate's tick alone.
func bar(lo, est, hi float64, extra string) template.HTML {
	tick := `<rect x=` + pct(math.Min(est, 985)) + ` />`
	if lo == est && est == hi {
		return template.HTML(`<svg>` + extra + tick + `</svg>`)
	}
	w := math.Max(hi-lo, 1)
	return template.HTML(`<svg>` + extra + `<rect x=` + pct(lo) + ` width=` + pct(w) + ` />` + tick + `</svg>`)
}

// Top writes the page of a table: its heading, the table with an
// interval bar per row on a shared axis, and with opts.Flame a flame
// graph. Every row element carries data-key, data-est, data-lo and
// data-hi, equal to arenaprof top -json's key, bytes, lo and hi.
func Top(w io.Writer, t *report.TableResult, opts Options) error {
	if t == nil {
		return errors.New("htmlreport: nil table")
	}
	d := newPage(opts, "arenaprof top")
	if d.Heading == nil {
		d.Heading = textLines(t.Heading)
	}
	d.KeyHead = keyHead(t.By)
	d.Cols = []string{"SAMPLES", "BYTES", confText(t.Confidence) + " INTERVAL", "OBJECTS", "SHARE"}
	axis := 0.0
	for _, r := range t.Rows {
		axis = math.Max(axis, r.Hi)
	}
	d.AxisHead = "interval, shared axis 0 … " + tabfmt.Bytes(axis)
	row := func(r report.TableRow, withBar bool, cls string) topRow {
		tr := topRow{
			Key: r.Key, Text: keyText(r.Key), Class: rowClass(cls, keyText(r.Key)),
			Est: strconv.FormatInt(r.Bytes, 10), Lo: jsonNumber(r.Lo), Hi: jsonNumber(r.Hi),
			Cells: []string{strconv.FormatInt(r.Samples, 10), tabfmt.Bytes(float64(r.Bytes)),
				"[" + tabfmt.Bytes(r.Lo) + ", " + tabfmt.Bytes(r.Hi) + "]",
				tabfmt.Count(float64(r.Objects)), strconv.FormatFloat(100*r.Share, 'f', 1, 64) + "%"},
		}
		if withBar {
			tr.Bar = bar(linear(r.Lo, axis), linear(float64(r.Bytes), axis), linear(r.Hi, axis), "")
		}
		return tr
	}
	d.setTopRows(mapRows(t.Rows, t.Total, row), t.Groups)
	if opts.Flame != nil {
		d.Flame = flameOf(opts.Flame)
	}
	return execute(w, d)
}

// Holdings writes the page of a live-arenas profile ([report.Holdings]),
// the table arenaprof top prints for it: each group's reserved bytes,
// share, used bytes, arenas and old arenas (marked "!"), and a tick at its
// reserved bytes on a shared axis. The figures are exact counts, not
// estimates, and the heading should say so (opts.Heading; nil means a
// line that does). Every row element carries data-key, and data-est,
// data-lo and data-hi all equal to the group's reserved bytes (arenaprof
// top -json's key and reserved): an exact figure is its own interval.
func Holdings(w io.Writer, r *report.HoldingsResult, opts Options) error {
	if r == nil {
		return errors.New("htmlreport: nil live-arenas table")
	}
	d := newPage(opts, "arenaprof top")
	if d.Heading == nil {
		d.Heading = []string{"live arenas by " + text(r.By) + ": exact counts and bytes, not sampled (no intervals)"}
	}
	d.KeyHead, d.Exact = keyHead(r.By), true
	d.Cols = []string{"RESERVED", "SHARE", "USED", "ARENAS", "OLD"}
	axis := 0.0
	for _, x := range r.Rows {
		axis = math.Max(axis, float64(x.Reserved))
	}
	d.AxisHead = "reserved bytes (exact), shared axis 0 … " + tabfmt.Bytes(axis)
	row := func(x report.HoldingsRow, withBar bool, cls string) topRow {
		est := strconv.FormatInt(x.Reserved, 10)
		share := "-"
		if r.Total.Reserved > 0 {
			share = strconv.FormatFloat(100*float64(x.Reserved)/float64(r.Total.Reserved), 'f', 1, 64) + "%"
		}
		old := strconv.FormatInt(x.Old, 10)
		if x.Old > 0 {
			old += " !"
		}
		tr := topRow{
			Key: x.Key, Text: keyText(x.Key), Class: rowClass(cls, keyText(x.Key)), Est: est, Lo: est, Hi: est,
			Cells: []string{tabfmt.Bytes(float64(x.Reserved)), share, tabfmt.Bytes(float64(x.Used)), strconv.FormatInt(x.Arenas, 10), old},
		}
		if withBar {
			at := linear(float64(x.Reserved), axis)
			tr.Bar = bar(at, at, at, "")
		}
		return tr
	}
	d.setTopRows(mapRows(r.Rows, r.Total, row), r.Groups)
	return execute(w, d)
}

// Diff writes the page of a comparison: the ratio NEW/BASE of each group
// with its interval on a log axis, significant rows marked, and with
// opts.Gate the gate's verdict. Under a normalisation (r.Per) the byte
// columns are per second or per request (BASE/s, BASE/req). Every row element carries data-key,
// data-ratio-lo, data-ratio-hi (empty where arenaprof diff -json has
// null) and data-significant, equal to diff -json's values, and
// data-conservative="true" where diff -json's conservative is true (an
// interval wider than the sampling needs: the row is marked "~" and the
// heading explains the mark, as diff prints them).
func Diff(w io.Writer, r *report.DiffResult, opts Options) error {
	if r == nil {
		return errors.New("htmlreport: nil diff")
	}
	d := newPage(opts, "arenaprof diff")
	d.KeyHead = keyHead(r.By)
	heads := tabfmt.DiffColumns(r.Per)
	d.Cols = []string{heads[0], heads[1], heads[2], "RATIO", confText(r.Confidence) + " INTERVAL", ""}
	if opts.Gate != nil {
		d.Gate = gateOf(*opts.Gate, r)
	}
	// The log axis covers every finite bound, and 1.
	lo, hi := 1.0, 1.0
	for _, x := range append(r.Rows[:len(r.Rows):len(r.Rows)], r.Total) { // the axis of every row, shown or not
		if !x.HasRatio {
			continue
		}
		if x.RatioLo > 0 {
			lo = math.Min(lo, x.RatioLo)
		}
		if !math.IsInf(x.RatioHi, 1) {
			hi = math.Max(hi, x.RatioHi)
		}
	}
	ax := newLogAxis(lo, hi)
	d.AxisHead = "ratio NEW/BASE, " + ax.head
	row := func(x report.DiffRow, cls string) diffRow {
		dr := diffRow{
			Key: x.Key, Text: keyText(x.Key), Significant: x.Significant, Delta: strconv.FormatInt(x.Delta, 10),
			Cells: []string{tabfmt.Bytes(x.BaseNorm), tabfmt.Bytes(x.NewNorm),
				tabfmt.SignedBytes(x.NewNorm - x.BaseNorm), "-", "-"},
		}
		if x.Significant {
			cls = strings.TrimSpace(cls + " sig")
			dr.Mark = "*"
		}
		dr.Class = rowClass(cls, dr.Text)
		if x.HasRatio {
			if x.Conservative {
				dr.Conservative = true
				dr.Mark += "~"
			}
			dr.RatioLo = jsonNumber(x.RatioLo)
			if !math.IsInf(x.RatioHi, 1) {
				dr.RatioHi = jsonNumber(x.RatioHi)
			}
			dr.Cells[3] = ratioText(x.Ratio)
			dr.Cells[4] = "[" + ratioText(x.RatioLo) + ", " + ratioText(x.RatioHi) + "]"
			dr.Bar = bar(ax.at(x.RatioLo), ax.at(x.Ratio), ax.at(x.RatioHi), ax.one)
		} else {
			dr.Bar = ax.none()
		}
		return dr
	}
	if slices.ContainsFunc(append(r.Rows[:len(r.Rows):len(r.Rows)], r.Total), func(x report.DiffRow) bool { return x.HasRatio && x.Conservative }) {
		d.Heading = append(d.Heading, text(tabfmt.ConservativeLegend))
	}
	setDiffRows(d, r.Rows, r.Total, r.Groups, opts.N, row)
	return execute(w, d)
}

// HoldingsDiff writes the page of two live-arenas profiles compared by
// [report.DiffHoldings]: rows (largest growth of reserved bytes first)
// and their total, grouped by by, as arenaprof diff prints them. The
// figures are exact counts: each row shows the reserved bytes of BASE and
// NEW, the difference, the ratio NEW/BASE as a tick on a log axis (no
// interval) and the arenas of each side; the rows whose reserved bytes
// grew are marked "+". opts.N, when above 0, shows the first N rows;
// opts.Gate must be nil (a gate tests intervals). Every row element
// carries data-key; data-ratio-lo and data-ratio-hi, both the exact ratio
// of NEW's reserved bytes to BASE's (empty when BASE holds none: no
// ratio); data-significant, "true" on the rows marked grown (diff -json's
// growing); and data-base-reserved, data-new-reserved and data-delta,
// diff -json's base_reserved, new_reserved and their difference.
func HoldingsDiff(w io.Writer, by string, rows []report.HoldingsDiffRow, total report.HoldingsDiffRow, opts Options) error {
	if opts.Gate != nil {
		return errors.New("htmlreport: a gate tests intervals; live-arenas profiles hold exact counts")
	}
	d := newPage(opts, "arenaprof diff")
	if d.Heading == nil {
		d.Heading = []string{"live arenas by " + text(by) + ": exact counts and bytes, not sampled (no intervals)",
			"+ marks groups whose reserved bytes grew"}
	}
	d.KeyHead, d.Exact = keyHead(by), true
	d.Cols = []string{"BASE", "NEW", "DIFF", "RATIO", "ARENAS BASE → NEW", ""}
	ratio := func(x report.HoldingsDiffRow) (float64, bool) {
		if x.BaseReserved <= 0 {
			return 0, false
		}
		return float64(x.NewReserved) / float64(x.BaseReserved), true
	}
	lo, hi := 1.0, 1.0
	for _, x := range append(rows[:len(rows):len(rows)], total) {
		if q, ok := ratio(x); ok && q > 0 {
			lo, hi = math.Min(lo, q), math.Max(hi, q)
		}
	}
	ax := newLogAxis(lo, hi)
	d.AxisHead = "ratio NEW/BASE of reserved bytes (exact), " + ax.head
	row := func(x report.HoldingsDiffRow, cls string) diffRow {
		delta := x.NewReserved - x.BaseReserved
		dr := diffRow{
			Key: x.Key, Text: keyText(x.Key), Significant: x.Growing, Delta: strconv.FormatInt(delta, 10),
			BaseReserved: strconv.FormatInt(x.BaseReserved, 10), NewReserved: strconv.FormatInt(x.NewReserved, 10),
			Cells: []string{tabfmt.Bytes(float64(x.BaseReserved)), tabfmt.Bytes(float64(x.NewReserved)),
				tabfmt.SignedBytes(float64(delta)), "-",
				strconv.FormatInt(x.BaseArenas, 10) + " → " + strconv.FormatInt(x.NewArenas, 10)},
			Bar: ax.none(),
		}
		if x.Growing {
			cls = strings.TrimSpace(cls + " sig")
			dr.Mark = "+"
		}
		dr.Class = rowClass(cls, dr.Text)
		if q, ok := ratio(x); ok {
			dr.RatioLo = jsonNumber(q)
			dr.RatioHi = dr.RatioLo
			dr.Cells[3] = ratioText(q)
			dr.Bar = bar(ax.at(q), ax.at(q), ax.at(q), ax.one)
		}
		return dr
	}
	setDiffRows(d, rows, total, len(rows), opts.N, row)
	return execute(w, d)
}

// logAxis places ratios on a log axis, 0..1000.
type logAxis struct {
	lo, hi float64
	head   string // the axis's range for its column's head
	one    string // the mark of ratio 1
}

// newLogAxis returns a log axis that covers [lo, hi] (lo <= 1 <= hi), with
// a margin, within [1e-6, 1e6]. Its head gives the range and says what the
// grey line in every row is: ratio 1, no change (it once read "1 marked",
// which read as a count of the rows marked *).
func newLogAxis(lo, hi float64) logAxis {
	ax := logAxis{lo: math.Max(lo, 1e-6) / 1.1, hi: math.Min(hi, 1e6) * 1.1}
	ax.head = "log axis " + ratioText(ax.lo) + " … " + ratioText(ax.hi) + "; grey line: ratio 1, no change"
	ax.one = `<rect class=one x=` + pct(ax.at(1)) + ` />`
	return ax
}

// at is the position of ratio x, clamped to the axis: 0, its left end,
// for 0 and for what is no ratio (a negative or NaN from a malformed
// profile).
func (ax logAxis) at(x float64) float64 {
	if !(x > 0) {
		return 0
	}
	return math.Max(0, math.Min(1000, 1000*(math.Log(x)-math.Log(ax.lo))/(math.Log(ax.hi)-math.Log(ax.lo))))
}

// none is the bar of a row without a ratio: the mark of 1 alone.
func (ax logAxis) none() template.HTML { return template.HTML(`<svg>` + ax.one + `</svg>`) }

// setDiffRows puts the first n rows (all when n <= 0) and the total in
// the page's diff table, drawn by row, and notes the groups left out, of
// groups in all.
func setDiffRows[R any](d *pageData, rows []R, total R, groups, n int, row func(x R, cls string) diffRow) {
	shown := rows
	if n > 0 && len(shown) > n {
		shown = shown[:n]
	}
	out := make([]diffRow, len(shown))
	for i, x := range shown {
		out[i] = row(x, "")
	}
	d.DiffChunks = chunks(out)
	t := row(total, "total")
	d.DiffTotal = &t
	if h := groups - len(shown); h > 0 {
		d.Hidden = hiddenNote(h)
	}
}

// execute writes the page of d. The template escapes markup; what it
// leaves, control characters and bidirectional controls in attribute
// values (data-key keeps a name whole), becomes character references, so
// that no terminal escape or text reordering is in the file itself.
func execute(w io.Writer, d *pageData) error {
	var b strings.Builder
	if err := page.Execute(&b, d); err != nil {
		return err
	}
	out := b.String()
	if strings.IndexFunc(out, unsafeRune) < 0 {
		_, err := io.WriteString(w, out)
		return err
	}
	var c strings.Builder
	c.Grow(len(out))
	for _, r := range out {
		if unsafeRune(r) {
			fmt.Fprintf(&c, "&#x%x;", r)
		} else {
			c.WriteRune(r)
		}
	}
	_, err := io.WriteString(w, c.String())
	return err
}

// unsafeRune reports a control character other than a line break or tab,
// or a bidirectional control.
func unsafeRune(r rune) bool {
	return (unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r') || unicode.Is(unicode.Bidi_Control, r)
}

// mapRows makes the rows of a top table, the total last: row draws one,
// with a bar and no class for the body, without a bar and with class
// "total" for the total.
func mapRows[R any](rows []R, total R, row func(r R, withBar bool, cls string) topRow) []topRow {
	out := make([]topRow, 0, len(rows)+1)
	for _, r := range rows {
		out = append(out, row(r, true, ""))
	}
	return append(out, row(total, false, "total"))
}

// setTopRows puts rows, the total last, in the page's top table, of
// groups groups in all.
func (d *pageData) setTopRows(rows []topRow, groups int) {
	body := rows[:len(rows)-1]
	d.Chunks = chunks(body)
	d.Total = &rows[len(rows)-1]
	if n := groups - len(body); n > 0 {
		d.Hidden = hiddenNote(n)
	}
}

// hiddenNote says that n groups are not shown.
func hiddenNote(n int) string {
	return fmt.Sprintf("%d more groups not shown (arenaprof html -n 0 shows all); the total covers them", n)
}

// chunkRows is the number of rows of each table a page's rows are cut
// into: the browser lays out only the chunks in view (CSS
// content-visibility), which keeps a page of 10,000 rows quick to show.
const chunkRows = 100

// chunks cuts rows into tables of chunkRows.
func chunks[T any](rows []T) [][]T {
	var out [][]T
	for len(rows) > chunkRows {
		out = append(out, rows[:chunkRows])
		rows = rows[chunkRows:]
	}
	if len(rows) > 0 {
		out = append(out, rows)
	}
	return out
}

func newPage(opts Options, def string) *pageData {
	return &pageData{
		Title: title(opts, def), CSP: csp, CSS: template.CSS(pageCSS), JS: template.JS(pageJS),
		Heading: textLines(opts.Heading), Live: opts.Refresh != "", Refresh: opts.Refresh, Taken: text(opts.Taken),
	}
}

func textLines(lines []string) []string {
	if lines == nil {
		return nil
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = text(l)
	}
	return out
}

// ratioText formats a ratio with three significant digits, as diff does.
func ratioText(x float64) string {
	if math.IsInf(x, 1) {
		return "inf"
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// gateOf states the gate's verdict, as arenaprof diff's exit status and
// message do.
func gateOf(g report.Gate, r *report.DiffResult) *gateData {
	bad := g.Failing(r)
	limit := strconv.FormatFloat(g.FailAbove, 'g', -1, 64)
	if len(bad) == 0 {
		return &gateData{Text: fmt.Sprintf("gate passed: no material group grew by more than %s with confidence %g", limit, r.Confidence)}
	}
	names := make([]string, len(bad))
	for i, b := range bad {
		names[i] = fmt.Sprintf("%s (ratio >= %s)", text(b.Display), strconv.FormatFloat(b.RatioLo, 'g', 3, 64))
	}
	return &gateData{Failed: true, Text: fmt.Sprintf("gate failed: %d group(s) grew by more than %s with confidence %g: %s",
		len(bad), limit, r.Confidence, strings.Join(names, ", "))}
}

// frameH is the height of a flame graph frame, in pixels.
const frameH = 17

// flameOf lays the frames of root out as an icicle: the root on top,
// each callee under its caller, widths as fractions of the root's bytes.
func flameOf(root *report.FlameNode) *flameData {
	fd := &flameData{}
	total := float64(root.Bytes)
	depth := 0
	var walk func(n *report.FlameNode, x float64, d int)
	walk = func(n *report.FlameNode, x float64, d int) {
		w := 100.0
		if total > 0 {
			w = 100 * float64(n.Bytes) / total
		}
		depth = max(depth, d)
		h := fnv.New32a()
		h.Write([]byte(n.Short))
		fd.Frames = append(fd.Frames, frame{
			Name: n.Name, Short: text(n.Short), X: trimmed(x), W: trimmed(w),
			Y: d * (frameH + 1), Depth: d, Color: int(h.Sum32() % 8),
			Title: fmt.Sprintf("%s\n%s [%s, %s], %.1f%%, %d samples", text(n.Name), tabfmt.Bytes(float64(n.Bytes)),
				tabfmt.Bytes(n.Lo), tabfmt.Bytes(n.Hi), w, n.Samples),
		})
		for _, k := range n.Children {
			walk(k, x, d+1)
			if total > 0 {
				x += 100 * float64(k.Bytes) / total
			}
		}
	}
	walk(root, 0, 0)
	fd.Height = (depth + 1) * (frameH + 1)
	if root.Hidden > 0 {
		fd.Note = fmt.Sprintf("%d frames too narrow to see are left out; their bytes are in their callers.", root.Hidden)
	}
	return fd
}
