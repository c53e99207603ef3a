package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestHTMLLeaks: the page of a leaks read holds leaks -json's rows in
// its row elements' data attributes, one plot for the flagged group with
// a point per snapshot, and the table's heading; html's own flags are
// taken wherever they are, and -json and -fail are refused.
func TestHTMLLeaks(t *testing.T) {
	dir := t.TempDir()
	writeSeries(t, dir, 20, 10<<10, 0)
	page := filepath.Join(t.TempDir(), "leaks.html")
	code, out, errOut := runCLI("html", dir, "-leaks", "-o", page, "-limit", "1GiB")
	if code != 0 || strings.TrimSpace(out) != page {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	_, table, _ := runCLI("leaks", "-limit", "1GiB", dir)
	heading, _, _ := strings.Cut(table, "\n\n")
	for _, l := range strings.Split(heading, "\n") {
		if !strings.Contains(html, strings.ReplaceAll(l, "'", "&#39;")) {
			t.Errorf("the page lacks the heading line %q", l)
		}
	}
	_, js, _ := runCLI("leaks", "-json", dir)
	var want struct {
		Rows []leakRow `json:"rows"`
	}
	if err := json.Unmarshal([]byte(js), &want); err != nil {
		t.Fatal(err)
	}
	rowRE := regexp.MustCompile(`<tr data-key="([^"]*)" data-kind="([^"]*)" data-rate="([^"]*)" data-lo="([^"]*)" data-hi="([^"]*)" data-flagged="([^"]*)" data-inuse-first="([^"]*)" data-inuse-last="([^"]*)"`)
	got := rowRE.FindAllStringSubmatch(html, -1)
	if len(got) != len(want.Rows) {
		t.Fatalf("%d rows on the page, %d in -json", len(got), len(want.Rows))
	}
	for i, r := range want.Rows {
		num := func(x float64) string { b, _ := json.Marshal(x); return string(b) }
		w := []string{r.Key, r.Kind, num(r.Rate), num(r.Lo), num(r.Hi), strconv.FormatBool(r.Flagged), num(float64(r.InUseFirst)), num(float64(r.InUseLast))}
		if !slices.Equal(got[i][1:], w) {
			t.Errorf("row %d: page %q, -json %q", i, got[i][1:], w)
		}
	}
	plots := regexp.MustCompile(`<figure class="leak" data-key="([^"]*)"`).FindAllStringSubmatch(html, -1)
	if len(plots) != 1 || plots[0][1] != "main.leak" {
		t.Errorf("plots %q, want main.leak's alone", plots)
	}
	pts := regexp.MustCompile(`<polyline class="inuse" points="([^"]*)"`).FindStringSubmatch(html)
	if pts == nil || len(strings.Fields(pts[1])) != 20 {
		t.Errorf("the plot's line: %q, want 20 points", pts)
	}
	if !strings.Contains(html, `<polygon class="band"`) || !strings.Contains(html, `<line class="fit"`) {
		t.Error("the plot lacks the interval's wedge or the fitted line")
	}
	for _, args := range [][]string{{"html", "-leaks", "-json", dir}, {"html", "-leaks", "-fail", dir}, {"html", "-leaks=maybe", dir}, {"html", "-leaks", dir, "-o"}} {
		if code, _, errOut := runCLI(args...); code != 2 || errOut == "" {
			t.Errorf("%q: exit %d, %s", args, code, errOut)
		}
	}
}
