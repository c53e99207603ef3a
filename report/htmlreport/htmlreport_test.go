package htmlreport

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/arenaprof/arenaprof/internal/tabfmt"
	"github.com/arenaprof/arenaprof/report"
)

// TestJSONNumber: the data attributes spell numbers as encoding/json does.
func TestJSONNumber(t *testing.T) {
	for _, x := range []float64{0, 1, -1, 0.5, 1e-7, 1.5e21, 123456789.125, 1.0000000000000002, 3e-300, math.MaxFloat64} {
		b, _ := json.Marshal(x)
		if got := jsonNumber(x); got != string(b) {
			t.Errorf("jsonNumber(%v) = %q, encoding/json %q", x, got, b)
		}
	}
	for _, x := range []float64{math.Inf(1), math.NaN()} {
		if got := jsonNumber(x); got != "" {
			t.Errorf("jsonNumber(%v) = %q, want empty", x, got)
		}
	}
}

// TestText: control characters and bidirectional controls show as '?'.
func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"main.f", "main.f"},
		{"a\x1b[31mb", "a?[31mb"},
		{"x\u202ey", "x?y"},
		{"tab\there", "tab?here"},
		{"<b>&", "<b>&"}, // the template escapes markup
	} {
		if got := text(tc.in); got != tc.want {
			t.Errorf("text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestPolicyHashes: the page's policy names the hashes of the script and
// style it carries, byte for byte as written.
func TestPolicyHashes(t *testing.T) {
	var b bytes.Buffer
	if err := Top(&b, &report.TableResult{By: "type", Confidence: 0.95, Total: report.TableRow{Key: "total"}}, Options{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	meta := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`).FindStringSubmatch(page)
	if meta == nil || html.UnescapeString(meta[1])+"; frame-ancestors 'none'" != ContentSecurityPolicy() {
		t.Fatalf("meta policy %q, header policy %q", meta, ContentSecurityPolicy())
	}
	for _, tag := range []string{"script", "style"} {
		m := regexp.MustCompile(`(?s)<` + tag + `>(.*?)</` + tag + `>`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no %s element", tag)
		}
		sum := sha256.Sum256([]byte(m[1]))
		h := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
		if !strings.Contains(ContentSecurityPolicy(), tag+"-src "+h) {
			t.Errorf("%s: hash %s not in the policies", tag, h)
		}
	}
}

// TestDiffRowsAndGate: N limits the rows shown, the gate reads them all,
// and a ratio without an upper bound has an empty data-ratio-hi.
func TestDiffRowsAndGate(t *testing.T) {
	r := &report.DiffResult{By: "func", Confidence: 0.95, Groups: 3,
		Rows: []report.DiffRow{
			{Key: "a", Display: "a", HasRatio: true, Ratio: 1.1, RatioLo: 0.9, RatioHi: 1.3, New: report.TableRow{Bytes: 100}},
			{Key: "b", Display: "b", HasRatio: true, Ratio: 3, RatioLo: 2, RatioHi: math.Inf(1), Significant: true, New: report.TableRow{Bytes: 50}},
			{Key: "c", Display: "c", New: report.TableRow{Bytes: 10}},
		},
		Total: report.DiffRow{Key: "total", Display: "total", HasRatio: true, Ratio: 1.5, RatioLo: 1.2, RatioHi: 1.8, Significant: true, New: report.TableRow{Bytes: 160}},
	}
	for _, tc := range []struct {
		n     int
		gate  *report.Gate
		rows  int
		words []string
	}{
		{0, nil, 3, []string{`data-key="b" data-ratio-lo="2" data-ratio-hi="" data-significant="true"`, `data-key="c" data-ratio-lo="" data-ratio-hi=""`}},
		{1, &report.Gate{FailAbove: 1.5}, 1, []string{"gate failed: 1 group(s)", "b (ratio &gt;= 2)", "2 more groups"}},
		{2, &report.Gate{FailAbove: 2.5}, 2, []string{"gate passed"}},
	} {
		var b bytes.Buffer
		if err := Diff(&b, r, Options{N: tc.n, Gate: tc.gate}); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		checkBody(t, fmt.Sprintf("N=%d", tc.n), page, tc.rows, tc.words)
	}
	if err := Diff(&bytes.Buffer{}, nil, Options{}); err == nil {
		t.Error("Diff of nil: no error")
	}
	if err := Top(&bytes.Buffer{}, nil, Options{}); err == nil {
		t.Error("Top of nil: no error")
	}
}

// TestDiffAxisHead: the head of a diff page's axis column gives the
// axis's range and says what its line marks, ratio 1, in words that do
// not read as a count of rows (it once said "1 marked" above three rows
// marked *), for sampled and for live-arenas diffs alike.
func TestDiffAxisHead(t *testing.T) {
	sig := func(key string, lo, hi float64) report.DiffRow {
		return report.DiffRow{Key: key, Display: key, HasRatio: true, Ratio: math.Sqrt(lo * hi), RatioLo: lo, RatioHi: hi, Significant: true}
	}
	sampled := &report.DiffResult{By: "type", Confidence: 0.95, Groups: 3,
		Rows:  []report.DiffRow{sig("a", 1.2, 1.87), sig("b", 0.815, 0.9), sig("c", 1.1, 1.3)},
		Total: sig("total", 1.05, 1.2)}
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer) error
		head  string
	}{
		{"sampled", func(b *bytes.Buffer) error { return Diff(b, sampled, Options{}) },
			"ratio NEW/BASE, log axis 0.741 … 2.06; grey line: ratio 1, no change"},
		{"live arenas", func(b *bytes.Buffer) error {
			return HoldingsDiff(b, "type", []report.HoldingsDiffRow{{Key: "a", BaseReserved: 100, NewReserved: 300, Growing: true}},
				report.HoldingsDiffRow{Key: "total", BaseReserved: 100, NewReserved: 300, Growing: true}, Options{})
		}, "ratio NEW/BASE of reserved bytes (exact), log axis 0.909 … 3.3; grey line: ratio 1, no change"},
	} {
		var b bytes.Buffer
		if err := tc.write(&b); err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`<th class="axis">([^<]*)</th>`).FindStringSubmatch(b.String())
		if m == nil {
			t.Fatalf("%s: no axis head", tc.name)
		}
		if got := html.UnescapeString(m[1]); got != tc.head {
			t.Errorf("%s: axis head %q, want %q", tc.name, got, tc.head)
		}
		if strings.Contains(m[1], "marked") {
			t.Errorf("%s: axis head %q says marked", tc.name, m[1])
		}
	}
}

// TestDiffConservative: a row whose interval rests on samples without
// their variance sums is marked "~" and data-conservative, and the heading
// explains the mark as diff's table does; without such a row, neither.
func TestDiffConservative(t *testing.T) {
	for _, conservative := range []bool{true, false} {
		r := &report.DiffResult{By: "func", Confidence: 0.95, Groups: 1,
			Rows: []report.DiffRow{
				{Key: "a", Display: "a", HasRatio: true, Ratio: 2, RatioLo: 1.2, RatioHi: 3.5, Significant: true, Conservative: conservative, New: report.TableRow{Bytes: 100}},
			},
			Total: report.DiffRow{Key: "total", Display: "total", HasRatio: true, Ratio: 2, RatioLo: 1.2, RatioHi: 3.5, Significant: true, Conservative: conservative, New: report.TableRow{Bytes: 100}},
		}
		var b bytes.Buffer
		if err := Diff(&b, r, Options{Heading: []string{"BASE x", "NEW y"}}); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		for _, want := range []string{`data-key="a" data-ratio-lo="1.2" data-ratio-hi="3.5" data-significant="true" data-conservative="true"`, "<td>*~<td>", html.EscapeString(tabfmt.ConservativeLegend)} {
			if strings.Contains(page, want) != conservative {
				t.Errorf("conservative %v: %q in the page: %v", conservative, want, !conservative)
			}
		}
		if !conservative && !strings.Contains(page, "<td>*<td>") {
			t.Error("the significant row lost its mark")
		}
	}
}

// checkBody checks that page has rows body rows and holds every one of
// words.
func checkBody(t *testing.T, what, page string, rows int, words []string) {
	t.Helper()
	if got := strings.Count(page, "<tr data-key="); got != rows {
		t.Errorf("%s: %d rows, want %d", what, got, rows)
	}
	for _, w := range words {
		if !strings.Contains(page, w) {
			t.Errorf("%s: page without %q", what, w)
		}
	}
}

// TestKeyOnce: a row's key is in the page once, in data-key, but for a
// key with control or bidirectional characters, which gets a cell of its
// own (class k) with them as '?'.
func TestKeyOnce(t *testing.T) {
	for _, tc := range []struct {
		key, cell string // cell: "" for none
	}{
		{"main.f < main.main", ""},
		{`<script>"x"&`, ""},
		{"a\x1b[31mb", "a?[31mb"},
		{"x\u202ey", "x?y"},
	} {
		var b bytes.Buffer
		res := &report.TableResult{By: "stack", Confidence: 0.95, Groups: 1,
			Rows:  []report.TableRow{{Key: tc.key, Display: "short", Bytes: 10, Lo: 5, Hi: 20}},
			Total: report.TableRow{Key: "total", Display: "total", Bytes: 10, Lo: 5, Hi: 20}}
		if err := Top(&b, res, Options{}); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		row := regexp.MustCompile(`<tr data-key="([^"]*)"[^>]*>(.*)`).FindStringSubmatch(page)
		if row == nil || html.UnescapeString(row[1]) != tc.key {
			t.Fatalf("key %q: row %q", tc.key, row)
		}
		if strings.Contains(page, "short") {
			t.Errorf("key %q: the page holds the display name too", tc.key)
		}
		cell := regexp.MustCompile(`<td>([^<]*)$`).FindStringSubmatch(row[2])
		hasCell := strings.Contains(row[0], `class="k"`)
		if tc.cell == "" {
			if hasCell {
				t.Errorf("key %q: a key cell %q", tc.key, row[2])
			}
			continue
		}
		if !hasCell || cell == nil || html.UnescapeString(cell[1]) != tc.cell {
			t.Errorf("key %q: row %q, want a key cell %q", tc.key, row[0], tc.cell)
		}
	}
}

// TestHoldings: a live-arenas row's data-est, data-lo and data-hi are its
// reserved bytes, its bar the tick alone, old arenas marked, no interval.
func TestHoldings(t *testing.T) {
	r := &report.HoldingsResult{By: "func", Groups: 3,
		Rows: []report.HoldingsRow{
			{Key: "a", Arenas: 2, Reserved: 3 << 20, Used: 1000, Old: 1},
			{Key: "b", Arenas: 1, Reserved: 1 << 20},
		},
		Total: report.HoldingsRow{Key: "total", Arenas: 4, Reserved: 5 << 20, Used: 1000, Old: 1},
	}
	var b bytes.Buffer
	if err := Holdings(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, w := range []string{
		`<tr data-key="a" data-est="3145728" data-lo="3145728" data-hi="3145728"><td>3.00MiB<td>60.0%<td>0.98KiB<td>2<td>1 !<td><svg><rect x=98.5% /></svg>`,
		`<tr data-key="b" data-est="1048576" data-lo="1048576" data-hi="1048576">`,
		`data-key="total" data-est="5242880" data-lo="5242880" data-hi="5242880"`,
		"exact counts and bytes, not sampled (no intervals)",
		"1 more groups not shown",
	} {
		if !strings.Contains(page, w) {
			t.Errorf("page without %q", w)
		}
	}
	if strings.Contains(page, "INTERVAL") || strings.Contains(page, `data-sort="width"`) {
		t.Error("the page of exact counts shows intervals")
	}
	if err := Holdings(&bytes.Buffer{}, nil, Options{}); err == nil {
		t.Error("Holdings of nil: no error")
	}
}

// TestHoldingsDiff: a row of two live-arenas profiles carries the exact
// ratio of reserved bytes as both bounds ("" without BASE bytes), its
// growth as data-significant, the reserved bytes and their difference;
// grown rows are marked + and red, the bar is the tick alone, -n hides
// rows, and a gate is refused.
func TestHoldingsDiff(t *testing.T) {
	rows := []report.HoldingsDiffRow{
		{Key: "a", BaseArenas: 1, NewArenas: 3, BaseReserved: 1 << 20, NewReserved: 3 << 20, Growing: true},
		{Key: "new", NewArenas: 1, NewReserved: 1 << 10, Growing: true},
		{Key: "same", BaseArenas: 2, NewArenas: 2, BaseReserved: 3, NewReserved: 3},
		{Key: "gone", BaseArenas: 1, BaseReserved: 1 << 20},
	}
	total := report.HoldingsDiffRow{Key: "total", BaseArenas: 4, NewArenas: 6, BaseReserved: 2<<20 + 3, NewReserved: 3<<20 + 1<<10 + 3, Growing: true}
	for _, tc := range []struct {
		n     int
		rows  int
		words []string
	}{
		{0, 4, []string{
			`<tr data-key="a" data-ratio-lo="3" data-ratio-hi="3" data-significant="true" data-base-reserved="1048576" data-new-reserved="3145728" data-delta="2097152" class="sig"><td>1.00MiB<td>3.00MiB<td>&#43;2.00MiB<td>3<td>1 → 3<td>&#43;<td><svg><rect class=one x=`,
			`<tr data-key="new" data-ratio-lo="" data-ratio-hi="" data-significant="true" data-base-reserved="0" data-new-reserved="1024" data-delta="1024" class="sig"><td>0B<td>1.00KiB<td>&#43;1.00KiB<td>-<td>0 → 1<td>&#43;<td><svg><rect class=one x=`,
			`<tr data-key="same" data-ratio-lo="1" data-ratio-hi="1" data-significant="false" data-base-reserved="3" data-new-reserved="3" data-delta="0"><td>`,
			`<tr data-key="gone" data-ratio-lo="0" data-ratio-hi="0" data-significant="false" data-base-reserved="1048576" data-new-reserved="0" data-delta="-1048576"><td>`,
			`<tr class="total sig" data-key="total" data-ratio-lo="1.5004875652967948" data-ratio-hi="1.5004875652967948" data-significant="true" data-base-reserved="2097155" data-new-reserved="3146755">`,
			"exact counts and bytes, not sampled (no intervals)", `data-sort="growth" class="on"`, "ratio NEW/BASE of reserved bytes (exact), log axis",
		}},
		{2, 2, []string{"2 more groups not shown"}},
	} {
		var b bytes.Buffer
		if err := HoldingsDiff(&b, "func", rows, total, Options{N: tc.n}); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		checkBody(t, fmt.Sprintf("N=%d", tc.n), page, tc.rows, tc.words)
		// An exact ratio is a tick: no interval's rect has a width.
		if strings.Contains(page, "INTERVAL") || strings.Contains(page, " width=") {
			t.Errorf("N=%d: the page of exact counts shows intervals", tc.n)
		}
	}
	if err := HoldingsDiff(&bytes.Buffer{}, "func", rows, total, Options{Gate: &report.Gate{FailAbove: 1.2}}); err == nil {
		t.Error("HoldingsDiff with a gate: no error")
	}
}

// FuzzHoldingsDiff: any figures of two live-arenas profiles (an upload may
// hold negative ones) and any key make a page whose numbers are numbers,
// whose ratio bounds are one exact ratio, and which holds no control
// character.
func FuzzHoldingsDiff(f *testing.F) {
	f.Add("main.f", int64(1), int64(3), int64(1<<20), int64(3<<20), int64(0), true)
	f.Add("<x>\x1b\u202e", int64(0), int64(1), int64(0), int64(5), int64(-1), false)
	f.Add("g", int64(-5), int64(2), int64(-7), int64(1<<62), int64(1<<63-1), true)
	f.Add("h", int64(1), int64(1), int64(5), int64(-3), int64(0), false)
	f.Fuzz(func(t *testing.T, key string, ba, na, br, nr, used int64, growing bool) {
		row := report.HoldingsDiffRow{Key: key, BaseArenas: ba, NewArenas: na, BaseReserved: br, NewReserved: nr, BaseUsed: used, Growing: growing}
		var b bytes.Buffer
		if err := HoldingsDiff(&b, "func", []report.HoldingsDiffRow{row}, report.HoldingsDiffRow{Key: "total", BaseReserved: br, NewReserved: nr}, Options{}); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		if i := strings.IndexFunc(page, unsafeRune); i >= 0 {
			t.Fatalf("page holds %q", page[i:i+1])
		}
		for _, m := range regexp.MustCompile(`data-ratio-lo="([^"]*)" data-ratio-hi="([^"]*)"`).FindAllStringSubmatch(page, -1) {
			if _, err := strconv.ParseFloat(m[1], 64); m[1] != m[2] || (m[1] != "" && err != nil) {
				t.Fatalf("ratio bounds %q and %q", m[1], m[2])
			}
		}
		ticks := regexp.MustCompile(`<rect (?:class=one )?x=([^ ]*)% />`).FindAllStringSubmatch(page, -1)
		if len(ticks) < 2 {
			t.Fatalf("%d ticks", len(ticks))
		}
		for _, m := range ticks {
			if x, err := strconv.ParseFloat(m[1], 64); err != nil || !(x >= 0 && x <= 100) {
				t.Fatalf("a tick at %q%%", m[1])
			}
		}
	})
}
