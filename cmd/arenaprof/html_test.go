package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/profiler"

	"github.com/arenaprof/arenaprof/internal/holdings"
)

func runHTMLArgs(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(append([]string{"html"}, args...), &o, &e)
	return code, o.String(), e.String()
}

// htmlPage runs arenaprof html with args and -o, and returns the page.
func htmlPage(t *testing.T, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "page.html")
	code, stdout, stderr := runHTMLArgs(append([]string{"-o", out}, args...)...)
	if code != 0 {
		t.Fatalf("html %v: exit %d: %s", args, code, stderr)
	}
	if strings.TrimSpace(stdout) != out {
		t.Errorf("html %v printed %q, want the path %q", args, stdout, out)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// htmlRows returns the data attributes of the page's row elements named
// by attrs, in order, unescaped.
func htmlRows(page string, attrs ...string) [][]string {
	var pat strings.Builder
	pat.WriteString(`<tr[^>]*?`)
	for _, a := range attrs {
		pat.WriteString(` ` + a + `="([^"]*)"`)
	}
	var rows [][]string
	for _, m := range regexp.MustCompile(pat.String()).FindAllStringSubmatch(page, -1) {
		row := make([]string, len(attrs))
		for i := range attrs {
			row[i] = html.UnescapeString(m[i+1])
		}
		rows = append(rows, row)
	}
	return rows
}

// jsonText is a JSON value as -json wrote it: a number's digits, a
// string's value, "" for null.
func jsonText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case json.Number:
		return x.String()
	case string:
		return x
	case bool:
		if x {
			return "true"
		}
		return "false"
	}
	panic("unexpected JSON value")
}

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// jsonRows returns fields of every row of a -json output, then the total.
func jsonRows(t *testing.T, out string, fields ...string) [][]string {
	m := decodeJSON(t, out)
	var rows [][]string
	for _, r := range append(m["rows"].([]any), m["total"]) {
		row := make([]string, len(fields))
		for i, f := range fields {
			row[i] = jsonText(r.(map[string]any)[f])
		}
		rows = append(rows, row)
	}
	return rows
}

// sameRows checks that a page's rows are -json's, total included.
func sameRows(t *testing.T, what string, got, want [][]string) {
	t.Helper()
	if len(got) != len(want) || len(got) < 2 {
		t.Fatalf("%s: %d rows on the page, %d in -json", what, len(got), len(want))
	}
	for i := range want {
		if strings.Join(got[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("%s row %d: page %q, -json %q", what, i, got[i], want[i])
		}
	}
}

// TestHTMLTopMatchesJSON checks that the page's rows carry the numbers of
// top -json for the same flags, character for character, total last.
func TestHTMLTopMatchesJSON(t *testing.T) {
	path := fixturePath(t)
	for _, flags := range [][]string{
		{"-n", "0"},
		{"-n", "0", "-by", "func", "-sample", "inuse"},
		{"-n", "0", "-by", "stack", "-confidence", "0.99"},
		{"-n", "3", "-by", "label=handler"},
		{"-by", "size", "-focus", "parse"}, // html's default -n is 0
	} {
		page := htmlPage(t, append(flags, path)...)
		jflags := flags
		if !strings.Contains(strings.Join(flags, " "), "-n") {
			jflags = append([]string{"-n", "0"}, flags...)
		}
		code, out, stderr := runCLI(append([]string{"top"}, append(jflags, "-json", path)...)...)
		if code != 0 {
			t.Fatalf("top %v: %s", jflags, stderr)
		}
		sameRows(t, fmt.Sprint(flags), htmlRows(page, "data-key", "data-est", "data-lo", "data-hi"), jsonRows(t, out, "key", "bytes", "lo", "hi"))
		if !strings.Contains(page, `data-frame="`+html.EscapeString(fnHandle)+`"`) && !strings.Contains(page, `data-frame="github.com/arenaprof/arenaprof/internal/testkit/workload.(*server).handle"`) {
			t.Errorf("%v: no flame graph frame of %s", flags, fnHandle)
		}
	}
}

// TestHTMLSources: the page of a Go heap profile, of a combined memory
// profile and of a URL carries top -json's numbers too.
func TestHTMLSources(t *testing.T) {
	runtime.GC()
	heap := writeTemp(t, "heap.pb.gz", heapProfile(t))
	setMeanBytes(t, 64)
	p, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	a := arena.NewArena(arena.WithSeed(5, 5))
	allocDiffWorkload(a, 2000, 200)
	p.Stop()
	mem, err := export.BuildMemory(p.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	memory := writeTemp(t, "memory.pb.gz", profileBytes(t, mem))
	fixture := profileBytes(t, buildFixture(t))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(fixture) }))
	defer srv.Close()
	for _, src := range []string{heap, memory, srv.URL + "/debug/arenaprof"} {
		page := htmlPage(t, "-by", "func", src)
		code, out, stderr := runCLI("top", "-n", "0", "-by", "func", "-json", src)
		if code != 0 {
			t.Fatalf("top %s: %s", src, stderr)
		}
		sameRows(t, src, htmlRows(page, "data-key", "data-est", "data-lo", "data-hi"), jsonRows(t, out, "key", "bytes", "lo", "hi"))
		if !strings.Contains(page, `data-frame="total"`) {
			t.Errorf("%s: no flame graph", src)
		}
	}
}

// TestHTMLDiffMatchesJSON checks the diff page against diff -json, and
// its gate's verdict against diff's exit status.
func TestHTMLDiffMatchesJSON(t *testing.T) {
	base := diffProfileFile(t, "base.pb.gz", 1024, 1, 20000, 2000)
	next := diffProfileFile(t, "new.pb.gz", 1024, 2, 40000, 2000)
	for _, tc := range []struct {
		flags []string
		gate  string
	}{
		{[]string{"-n", "0"}, ""},
		{[]string{"-n", "0", "-fail-above", "1.2", "-confidence", "0.9999999"}, "gate failed"},
		{[]string{"-n", "1", "-fail-above", "50"}, "gate passed"},
	} {
		page := htmlPage(t, append(tc.flags, base, next)...)
		code, out, stderr := runCLI(append(append([]string{"diff"}, tc.flags...), "-json", base, next)...)
		if code != 0 && code != diffGateCode {
			t.Fatalf("diff %v: %s", tc.flags, stderr)
		}
		sameRows(t, fmt.Sprint(tc.flags), htmlRows(page, "data-key", "data-ratio-lo", "data-ratio-hi", "data-significant"),
			jsonRows(t, out, "key", "ratio_lo", "ratio_hi", "significant"))
		failed := code == diffGateCode
		if tc.gate != "" && (!strings.Contains(page, tc.gate) || failed != (tc.gate == "gate failed")) {
			t.Errorf("%v: diff exit %d, page without %q", tc.flags, code, tc.gate)
		}
	}
}

// TestHTMLHostileNames renders a profile whose function, type and label
// names hold markup, quotes and terminal escapes: they are text, the
// page's only script is its own, and no escape reaches a text node.
func TestHTMLHostileNames(t *testing.T) {
	p := buildFixture(t)
	hostile := []string{
		`<script>alert(1)</script>`,
		`"><img src=x onerror=alert(2)>`,
		"\x1b]0;owned\x07\x1b[31mred",
		`'single' & "double"`,
		"</style><style>body{display:none}</style>\u202egnp.exe",
	}
	for i, s := range p.Sample {
		name := hostile[i%len(hostile)]
		s.Label["type"] = []string{name}
		s.Label["handler"] = []string{name}
	}
	for i, f := range p.Function {
		f.Name = hostile[i%len(hostile)] + f.Name
	}
	path := writeTemp(t, "hostile.pb.gz", profileBytes(t, p))
	for _, by := range []string{"type", "func", "stack", "label=handler"} {
		page := htmlPage(t, "-by", by, path)
		if n := strings.Count(page, "<script"); n != 1 {
			t.Errorf("-by %s: %d script elements, want the page's own", by, n)
		}
		for _, bad := range []string{"<img", "<style><style>", "alert(1)</script>", "\x1b", "\x07", "\u202e"} {
			if strings.Contains(page, bad) {
				t.Errorf("-by %s: page holds %q", by, bad)
			}
		}
		// The keys are whole in data-key (escaped), as -json has them.
		code, out, _ := runCLI("top", "-n", "0", "-by", by, "-json", path)
		if code != 0 {
			t.Fatal(out)
		}
		got := htmlRows(page, "data-key")
		want := jsonRows(t, out, "key")
		for i := range want {
			if i >= len(got) || got[i][0] != want[i][0] {
				t.Errorf("-by %s row %d: page %q, -json %q", by, i, got, want[i])
				break
			}
		}
	}
}

// TestHTMLBadInput checks html's usage errors and refusals.
func TestHTMLBadInput(t *testing.T) {
	path := fixturePath(t)
	arenas := holdingsFile(t, "arenas.pb.gz", []holdings.Holding{{Stack: busySite(), Arenas: 1, Reserved: 1 << 20}})
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "where PROFILE, or BASE and NEW, were expected"},
		{[]string{path, path, path}, 2, "3 arguments"},
		{[]string{"-json", path}, 2, "-json does not apply"},
		{[]string{"-fail-above", "1.2", path}, 2, "-fail-above compares two profiles"},
		{[]string{"-min-frame", "2", path}, 2, "bad -min-frame"},
		{[]string{"-by", "nope", path}, 2, "unknown"},
		{[]string{filepath.Join(t.TempDir(), "missing.pb.gz")}, 1, "cannot read"},
		{[]string{arenas, path}, 1, "a live-arenas profile compares only with another live-arenas profile"},
		{[]string{"-fail-above", "1.2", arenas, arenas}, 2, "-fail-above tests the intervals of sampled profiles"},
		{[]string{"-o", filepath.Join(t.TempDir(), "no", "such", "dir.html"), path}, 1, "cannot write the page"},
	} {
		code, _, stderr := runHTMLArgs(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("html %v: exit %d, stderr %q; want %d and %q on one line", tc.args, code, stderr, tc.code, tc.want)
		}
	}
	code, _, stderr := runHTMLArgs("-h")
	if code != 0 || !strings.Contains(stderr, "usage: arenaprof html") {
		t.Errorf("html -h: exit %d, %q", code, stderr)
	}
}

// TestHTMLTempFile checks that without -o the page goes to a new file in
// the temporary directory, whose path is printed.
func TestHTMLTempFile(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	code, stdout, stderr := runHTMLArgs(fixturePath(t))
	if code != 0 {
		t.Fatal(stderr)
	}
	got := strings.TrimSpace(stdout)
	if filepath.Dir(got) != os.TempDir() || !strings.HasSuffix(got, ".html") {
		t.Errorf("printed %q, want a .html file in %s", got, os.TempDir())
	}
	if b, err := os.ReadFile(got); err != nil || !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) {
		t.Errorf("page %s: %v", got, err)
	}
}

// TestHTMLOpen checks that -open runs the opener with the page's path, and
// that where there is no opener, or it fails (xdg-open exits 3 where no
// browser is set up), the page is still written, its path printed, the
// exit status 0 and a warning on stderr says so and names the page. An
// opener still running after openWait is taken to have opened the page.
func TestHTMLOpen(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake openers are shell scripts")
	}
	dir := t.TempDir()
	record := filepath.Join(dir, "opened")
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	records := "printf '%s' \"$1\" > " + record + ".tmp && mv " + record + ".tmp " + record
	// The fake xdg-open is named so, in a directory of its own, so that
	// its exit status is read as xdg-open's.
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	prevCommand, prevWait := openCommand, openWait
	t.Cleanup(func() { openCommand, openWait = prevCommand, prevWait })
	// The still-running opener writes its process id, then becomes a
	// sleep, which the test ends.
	pidFile := filepath.Join(dir, "pid")
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				if p, err := os.FindProcess(pid); err == nil {
					p.Kill()
				}
			}
		}
	})
	tests := []struct {
		name    string
		command string
		wait    time.Duration // openWait: long where the opener exits at once
		warning string        // in stderr before the page's path; "" for none
		records bool          // whether the opener records the path it got
	}{
		{"opener", script("opener", records), time.Minute, "", true},
		{"no opener", filepath.Join(dir, "no-such-opener"), time.Minute, "no browser to open (no " + filepath.Join(dir, "no-such-opener") + " here); the page is ", false},
		{"xdg-open without a browser", script("bin/xdg-open", "echo 'xdg-open: no method available' >&2; exit 3"), time.Minute,
			"could not open the page (exit status 3: no browser or other program to open it with; install one or set BROWSER); open it yourself: ", false},
		{"failing opener", script("failing", "exit 1"), time.Minute, "could not open the page (exit status 1); open it yourself: ", false},
		{"opener still running", script("slow", "echo $$ > "+pidFile+" && "+records+" && exec sleep 60"), 100 * time.Millisecond, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(record)
			openCommand = func(path string) []string { return []string{tc.command, path} }
			openWait = tc.wait
			out := filepath.Join(t.TempDir(), "page.html")
			code, stdout, stderr := runHTMLArgs("-open", "-o", out, fixturePath(t))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if got := strings.TrimSpace(stdout); got != out {
				t.Errorf("printed %q, want %q", got, out)
			}
			if b, err := os.ReadFile(out); err != nil || !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) {
				t.Errorf("page %s: %v", out, err)
			}
			if tc.warning != "" {
				if !strings.Contains(stderr, tc.warning+out) {
					t.Errorf("stderr %q, want a warning %q", stderr, tc.warning+out)
				}
			} else if stderr != "" {
				t.Errorf("stderr %q, want none", stderr)
			}
			if !tc.records {
				return
			}
			// The opener runs on its own; wait for its record.
			deadline := time.Now().Add(10 * time.Second)
			for {
				b, err := os.ReadFile(record)
				if err == nil {
					if string(b) != out {
						t.Errorf("opener got %q, want the page's path %q", b, out)
					}
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("the opener did not run in 10 s: %v", err)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// TestHTMLHoldings checks the page of a live-arenas profile: top's exact
// table, each row's data-est, data-lo and data-hi the reserved bytes of
// top -json, the heading saying the figures are exact, no interval.
func TestHTMLHoldings(t *testing.T) {
	path := holdingsFixture(t)
	for _, flags := range [][]string{nil, {"-by", "stack"}, {"-by", "label=endpoint"}, {"-old", "1h", "-n", "2"}} {
		page := htmlPage(t, append(flags, path)...)
		code, out, stderr := runCLI(append(append([]string{"top"}, flags...), "-json", path)...)
		if code != 0 {
			t.Fatal(stderr)
		}
		sameRows(t, fmt.Sprint("holdings ", flags), htmlRows(page, "data-key", "data-est", "data-lo", "data-hi"),
			jsonRows(t, out, "key", "reserved", "reserved", "reserved"))
		for _, want := range []string{"exact counts and bytes, not sampled (no intervals)", "RESERVED", "reserved bytes (exact)"} {
			if !strings.Contains(page, want) {
				t.Errorf("holdings %v: page without %q", flags, want)
			}
		}
		if strings.Contains(page, "INTERVAL") || strings.Contains(page, `data-sort="width"`) {
			t.Errorf("holdings %v: the page shows intervals", flags)
		}
	}
	if page := htmlPage(t, path); !strings.Contains(page, "<td>2 !") || !strings.Contains(page, "! marks groups with arenas held 10m or more") {
		t.Error("the old arenas of leakySite are not marked")
	}
}

// holdingsDiffFixture writes two live-arenas profiles: leakySite grows
// from one old arena to three, busySite shrinks, an arena labeled
// endpoint=/x appears, pool 7's idle arenas stay, and anotherSite goes.
func holdingsDiffFixture(t *testing.T) (base, next string) {
	leaky, busy, other := leakySite(), busySite(), anotherSite()
	lab := hooks.NewLabels("endpoint", "/x")
	base = holdingsFile(t, "base.pb.gz", []holdings.Holding{
		{Stack: leaky, Age: 20 * time.Minute, Arenas: 1, Reserved: 1 << 20, Used: 100},
		{Stack: busy, Age: time.Second, Arenas: 2, Reserved: 3 << 20, Used: 3 << 20},
		{Stack: other, Age: time.Second, Arenas: 1, Reserved: 96 << 10},
		{Stack: busy, Arenas: 4, Reserved: 4 << 20, Pool: 7},
	})
	next = holdingsFile(t, "next.pb.gz", []holdings.Holding{
		{Stack: leaky, Age: 30 * time.Minute, Arenas: 3, Reserved: 3 << 20, Used: 300},
		{Stack: busy, Age: time.Second, Arenas: 1, Reserved: 1 << 20, Used: 1 << 19},
		{Stack: busy, Labels: lab, Age: time.Minute, Arenas: 1, Reserved: 64 << 10},
		{Stack: busy, Arenas: 4, Reserved: 4 << 20, Pool: 7},
	})
	return base, next
}

//go:noinline
func anotherSite() []uintptr { return callerStack() }

// exactRatio is the data-ratio-lo and data-ratio-hi of a row of two
// live-arenas profiles: NEW's reserved bytes over BASE's as encoding/json
// writes a number, "" when BASE holds none.
func exactRatio(t *testing.T, baseReserved, newReserved string) string {
	t.Helper()
	b, err1 := strconv.ParseInt(baseReserved, 10, 64)
	n, err2 := strconv.ParseInt(newReserved, 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("reserved bytes %q, %q", baseReserved, newReserved)
	}
	if b == 0 {
		return ""
	}
	j, _ := json.Marshal(float64(n) / float64(b))
	return string(j)
}

// TestHTMLHoldingsDiff checks the page of two live-arenas profiles
// against diff -json for the same flags: the same rows in the same order,
// data-ratio-lo = data-ratio-hi = the exact ratio of reserved bytes,
// data-significant = growing, the reserved bytes and their difference;
// the heading says the figures are exact, grown rows are marked +.
func TestHTMLHoldingsDiff(t *testing.T) {
	base, next := holdingsDiffFixture(t)
	for _, flags := range [][]string{
		{"-n", "0"},
		{"-n", "0", "-by", "stack"},
		{"-n", "0", "-by", "label=endpoint"},
		{"-n", "2"},
		{"-n", "0", "-ignore", "busySite"},
	} {
		page := htmlPage(t, append(flags, base, next)...)
		code, out, stderr := runCLI(append(append([]string{"diff"}, flags...), "-json", base, next)...)
		if code != 0 {
			t.Fatalf("diff %v: %s", flags, stderr)
		}
		var want [][]string
		for _, r := range jsonRows(t, out, "key", "base_reserved", "new_reserved", "growing") {
			b, _ := strconv.ParseInt(r[1], 10, 64)
			n, _ := strconv.ParseInt(r[2], 10, 64)
			q := exactRatio(t, r[1], r[2])
			want = append(want, []string{r[0], q, q, r[3], r[1], r[2], strconv.FormatInt(n-b, 10)})
		}
		got := htmlRows(page, "data-key", "data-ratio-lo", "data-ratio-hi", "data-significant", "data-base-reserved", "data-new-reserved")
		// data-delta is on the body rows only, after the reserved bytes.
		deltas := htmlRows(page, "data-delta")
		if len(deltas) != len(got)-1 {
			t.Fatalf("%v: %d rows with data-delta, %d rows", flags, len(deltas), len(got))
		}
		for i := range got {
			d := want[i][6] // the total row carries no data-delta
			if i < len(deltas) {
				d = deltas[i][0]
			}
			got[i] = append(got[i], d)
		}
		sameRows(t, fmt.Sprint("holdings diff ", flags), got, want)
		grown := 0 // the total among them when it grew
		for _, r := range want {
			if r[3] == "true" {
				grown++
			}
		}
		if n, sig := strings.Count(page, "<td>&#43;<td>"), strings.Count(page, `class="sig"`)+strings.Count(page, `class="total sig"`); n != grown || sig != grown || grown == 0 {
			t.Errorf("%v: %d rows marked +, %d red, %d grew", flags, n, sig, grown)
		}
		for _, w := range []string{"exact counts and bytes, not sampled (no intervals)", "+ marks groups whose reserved bytes grew",
			"ratio NEW/BASE of reserved bytes (exact)", `data-sort="growth" class="on"`} {
			if !strings.Contains(html.UnescapeString(page), w) {
				t.Errorf("%v: page without %q", flags, w)
			}
		}
		if strings.Contains(page, "INTERVAL") {
			t.Errorf("%v: the page shows intervals", flags)
		}
	}
	// The rows the fixture makes: leakySite grew by 2 MiB (ratio 3), a
	// new labeled group has no ratio, anotherSite went (ratio 0).
	page := htmlPage(t, "-by", "label=endpoint", base, next)
	for _, w := range []string{
		`data-key="/x" data-ratio-lo="" data-ratio-hi="" data-significant="true" data-base-reserved="0" data-new-reserved="65536" data-delta="65536"`,
		`<td>0B<td>64.0KiB<td>&#43;64.0KiB<td>-<td>0 → 1<td>&#43;<td>`,
	} {
		if !strings.Contains(page, w) {
			t.Errorf("-by label=endpoint: page without %q", w)
		}
	}
	page = htmlPage(t, base, next)
	for _, w := range []string{
		`data-ratio-lo="3" data-ratio-hi="3" data-significant="true" data-base-reserved="1048576" data-new-reserved="3145728" data-delta="2097152" class="sig"><td>1.00MiB<td>3.00MiB<td>&#43;2.00MiB<td>3<td>1 → 3<td>&#43;<td>`,
		`data-ratio-lo="0" data-ratio-hi="0" data-significant="false" data-base-reserved="98304" data-new-reserved="0" data-delta="-98304"`,
	} {
		if !strings.Contains(page, w) {
			t.Errorf("page without %q", w)
		}
	}
	// Hostile label values are text, and data-key is diff -json's key.
	hostile := []string{`<script>alert(1)</script>`, `"><img src=x onerror=alert(2)>`, "\x1b]0;owned\x07\x1b[31mred", "x\u202egnp.exe"}
	var hb, hn []holdings.Holding
	for i, h := range hostile {
		hb = append(hb, holdings.Holding{Stack: busySite(), Labels: hooks.NewLabels("endpoint", h), Arenas: 1, Reserved: int64(i+1) << 20})
		hn = append(hn, holdings.Holding{Stack: busySite(), Labels: hooks.NewLabels("endpoint", h), Arenas: 2, Reserved: int64(2*i+1) << 20})
	}
	hbase, hnext := holdingsFile(t, "hbase.pb.gz", hb), holdingsFile(t, "hnext.pb.gz", hn)
	page = htmlPage(t, "-by", "label=endpoint", hbase, hnext)
	if n := strings.Count(page, "<script"); n != 1 {
		t.Errorf("hostile: %d script elements, want the page's own", n)
	}
	for _, bad := range []string{"<img", "alert(1)</script>", "\x1b", "\x07", "\u202e"} {
		if strings.Contains(page, bad) {
			t.Errorf("hostile: page holds %q", bad)
		}
	}
	_, out, _ := runCLI("diff", "-n", "0", "-by", "label=endpoint", "-json", hbase, hnext)
	sameRows(t, "hostile", htmlRows(page, "data-key"), jsonRows(t, out, "key"))
}
