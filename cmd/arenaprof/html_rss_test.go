package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/internal/rss"
)

// TestHTMLRSS draws the class tree of a resident-memory profile: from a
// saved profile (found to be one), and from a service's base URL or the
// profile's URL with -rss; the rows carrying a class are rss -json's
// classes and rows, number for number, and the heading is rss's.
func TestHTMLRSS(t *testing.T) {
	// Live heap objects, so that go/heap/live has rows with intervals.
	held := make([][]byte, 256)
	for i := range held {
		held[i] = make([]byte, 64<<10)
	}
	runtime.GC()
	defer runtime.KeepAlive(held)
	srv := rssServer(t)
	resp, err := http.Get(srv.URL + rssPath)
	if err != nil {
		t.Fatal(err)
	}
	saved, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	file := filepath.Join(t.TempDir(), "rss.pb.gz")
	if err := os.WriteFile(file, saved, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, by := range []string{"func", "stack"} {
		page := htmlPage(t, "-by", by, file)
		got := htmlRows(page, "data-key", "data-class", "data-est", "data-lo", "data-hi")
		var out, errOut strings.Builder
		if code := run([]string{"rss", "-json", "-n", "0", "-by", by, file}, &out, &errOut); code != 0 {
			t.Fatalf("rss -json: exit %d: %s", code, errOut.String())
		}
		m := decodeJSON(t, out.String())
		var want [][]string
		for _, c := range m["classes"].([]any) {
			c := c.(map[string]any)
			want = append(want, []string{jsonText(c["class"]), jsonText(c["class"]), jsonText(c["bytes"]), jsonText(c["lo"]), jsonText(c["hi"])})
		}
		rowsJSON, _ := m["rows"].([]any)
		if len(rowsJSON) == 0 {
			t.Errorf("rss -json -by %s: no rows", by)
		}
		for _, r := range rowsJSON {
			r := r.(map[string]any)
			want = append(want, []string{jsonText(r["key"]), jsonText(r["class"]), jsonText(r["bytes"]), jsonText(r["lo"]), jsonText(r["hi"])})
		}
		rows := slices.SortedFunc(slices.Values(got), func(a, b []string) int { return strings.Compare(strings.Join(a, "|"), strings.Join(b, "|")) })
		slices.SortFunc(want, func(a, b []string) int { return strings.Compare(strings.Join(a, "|"), strings.Join(b, "|")) })
		sameRows(t, "html -by "+by+" of a resident-memory profile", rows, want)
		for _, s := range []string{"RSS ", "go/heap/live rows: estimates", `data-key="go/heap"`, `class="total"`, ` INTERVAL`} {
			if !strings.Contains(page, s) {
				t.Errorf("html -by %s: the page has no %q", by, s)
			}
		}
		if strings.Contains(page, `id="filter"`) {
			t.Errorf("html -by %s: a tree page has a filter box", by)
		}
	}
	for _, args := range [][]string{{"-rss", srv.URL}, {"-rss", srv.URL + rssPath}, {srv.URL + rssPath}} {
		page := htmlPage(t, args...)
		if n := len(htmlRows(page, "data-key", "data-class")); n < len(rss.Classes) || !strings.Contains(page, "RSS ") {
			t.Errorf("html %v: %d rows with a class, want %d at least", args, n, len(rss.Classes))
		}
	}
}

// TestHTMLRSSPeak draws the peak of a service whose RSS is watched.
func TestHTMLRSSPeak(t *testing.T) {
	stop := rss.Watch()
	defer stop()
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(rss.WatchTick / 5) {
		if pk, _ := rss.CurrentPeak(); pk != nil {
			break
		}
	}
	srv := rssServer(t)
	if page := htmlPage(t, "-peak", srv.URL); !strings.Contains(page, "peak: the highest RSS seen since ") {
		t.Error("html -peak: no peak heading")
	}
}

// TestHTMLRSSRefuses gives html's resident-memory page what it cannot
// draw: flags of top that do not apply and -peak on a file are usage
// errors (exit 2); a profile of another kind is refused naming it.
func TestHTMLRSSRefuses(t *testing.T) {
	dir := t.TempDir()
	heap := filepath.Join(dir, "heap.pb.gz")
	f, err := os.Create(heap)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-rss", heap}, 1, "not a resident-memory profile: it is a Go heap or allocs profile"},
		{[]string{"-rss", "-focus", "x", heap}, 2, "-focus does not apply to a resident-memory profile"},
		{[]string{"-peak", heap}, 2, "give its URL"},
		{[]string{"-rss", "-by", "type", heap}, 2, "func or stack"},
		{[]string{"-rss", "-confidence", "1", heap}, 2, "strictly between 0 and 1"},
		{[]string{"-rss", heap, heap}, 2, "one SOURCE"},
	} {
		code, _, stderr := runHTMLArgs(append([]string{"-o", filepath.Join(dir, "p.html")}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("html %s: exit %d, %q; want exit %d and %q", strings.Join(c.args, " "), code, stderr, c.code, c.want)
		}
	}
}
