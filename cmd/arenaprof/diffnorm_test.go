package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/internal/holdings"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/profiler"
)

// steadyRequest is one request of the steady load: what a JSON handler
// might take from its arena (a body buffer, a slice of fields, small
// structs), times scale.
//
//go:noinline
func steadyRequest(p *arena.Pool, scale int) {
	a := p.Get(nil)
	for range scale {
		_ = arena.MakeSlice[byte](a, 3000, 3000)
		_ = arena.MakeSlice[string](a, 256, 256)
		for range 256 {
			_ = arena.New[diffSmall](a)
		}
	}
	p.Put(a)
}

// steadyCapture profiles a steady load of rate requests per second
// (each of steadyRequest at scale) for d through a real arena.Pool and the
// real profiler, and writes the profile. The load is paced against the
// clock: each step serves the requests due since the start, and the
// profiler stops as soon as the last is served. A capture whose achieved
// rate (the requests it records over its window's length) is off by more
// than 0.2% is taken again (a goroutine descheduled at the end of the
// window on a loaded machine): the test measures normalisation, not the
// scheduler. The retry depends on timing only, never on the samples.
func steadyCapture(t *testing.T, name string, rate float64, d time.Duration, scale int) string {
	t.Helper()
	var last string
	for try := 0; try < 10; try++ {
		pool := arena.NewPool()
		total := int(rate * d.Seconds())
		prof, err := profiler.Start()
		if err != nil {
			t.Fatal(err)
		}
		start, done := time.Now(), 0
		for done < total {
			due := min(total, int(rate*time.Since(start).Seconds()))
			for ; done < due; done++ {
				steadyRequest(pool, scale)
			}
			if done < total {
				time.Sleep(time.Millisecond)
			}
		}
		prof.Stop()
		snap := prof.Snapshot()
		got := float64(snap.Stats.PoolGets) / snap.End.Sub(snap.Start).Seconds()
		if snap.Stats.PoolGets != uint64(total) {
			t.Fatalf("%s: the profile records %d arenas handed out, %d were taken", name, snap.Stats.PoolGets, total)
		}
		if math.Abs(got/rate-1) > 0.002 {
			last = fmt.Sprintf("%.1f requests/s over %v", got, snap.End.Sub(snap.Start))
			t.Logf("%s: try %d: achieved %s, not %g: again", name, try+1, last, rate)
			continue
		}
		var buf bytes.Buffer
		if err := export.Write(&buf, snap); err != nil {
			t.Fatal(err)
		}
		return writeTemp(t, name, buf.Bytes())
	}
	t.Fatalf("%s: the load could not be held at %g requests/s in 10 tries (last %s): the machine is too loaded for this test", name, rate, last)
	return ""
}

// diffNormOut is the part of diff -json this test reads.
type diffNormOut struct {
	Norm struct {
		Per string `json:"per"`
	} `json:"normalisation"`
	Rows  []diffNormRow `json:"rows"`
	Total diffNormRow   `json:"total"`
}

type diffNormRow struct {
	Key         string   `json:"key"`
	Ratio       *float64 `json:"ratio"`
	RatioLo     *float64 `json:"ratio_lo"`
	RatioHi     *float64 `json:"ratio_hi"`
	Significant bool     `json:"significant"`
	NewNorm     *float64 `json:"new_norm"`
}

// Two captures of one steady load, the second over a window 1.5 times as
// long (1.5 times the requests), and a third whose requests allocate
// twice as much, through the real pool, profiler, writer and CLI. At
// mean 1024 a request (11 KiB: a 3000-byte []uint8, a 4 KiB []string,
// 256 small structs) draws about 9 events, each type at least 1,000 in
// BASE and 1,500 in NEW: the log ratio's standard error is at most about
// 0.021 per type (measured from the intervals).
//
// Without normalisation every row is flagged (ratio 1.5: log 0.405, 19
// standard errors) and its interval covers 1.5; per second and per
// request nothing is, and every interval covers 1; per request the 2x
// load is flagged on every row and its interval covers 2. At confidence
// 1-1e-8 (5.7 standard errors, 6.0 after Holm's factor 4), each interval
// misses its true ratio with probability at most 1e-8, and a true change
// of 1.5x is left unflagged only past 13 standard errors (below 1e-30);
// over 4 rows and 4 diffs that is below 2e-7 (the 0.2% pacing tolerance
// moves a ratio by a tenth of a standard error, which the margin
// absorbs), so a false failure has probability below 1e-6.
func TestDiffNormalisedSteadyLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("paced load of 3.5 s")
	}
	setMeanBytes(t, 1024)
	const rate = 1000
	base := steadyCapture(t, "base.pb.gz", rate, time.Second, 1)
	long := steadyCapture(t, "long.pb.gz", rate, 1500*time.Millisecond, 1)
	twice := steadyCapture(t, "twice.pb.gz", rate, time.Second, 2)
	const conf = "0.99999999"
	diffOf := func(per, newer string) (diffNormOut, string) {
		t.Helper()
		code, stdout, stderr := runDiffArgs("-per", per, "-confidence", conf, "-n", "0", "-json", base, newer)
		if code != 0 {
			t.Fatalf("diff -per %s: exit %d: %s", per, code, stderr)
		}
		var out diffNormOut
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		_, table, _ := runDiffArgs("-per", per, "-confidence", conf, "-n", "0", base, newer)
		t.Logf("diff -per %s:\n%s", per, table)
		return out, table
	}
	rows := func(out diffNormOut) []diffNormRow { return append(out.Rows, out.Total) }
	covers := func(r diffNormRow, x float64) bool {
		return r.RatioLo != nil && *r.RatioLo <= x && (r.RatioHi == nil || x <= *r.RatioHi)
	}

	out, table := diffOf("none", long)
	if len(out.Rows) != 3 {
		t.Fatalf("%d rows, want 3 types:\n%s", len(out.Rows), table)
	}
	for _, r := range rows(out) {
		if !r.Significant || !covers(r, 1.5) {
			t.Errorf("-per none: %s not flagged or its interval misses 1.5:\n%s", r.Key, table)
		}
	}
	if !strings.Contains(table, "not normalised: bytes as captured") {
		t.Errorf("-per none: the heading does not say so:\n%s", table)
	}
	for _, per := range []string{"second", "request"} {
		out, table := diffOf(per, long)
		if out.Norm.Per != per {
			t.Errorf("-per %s: normalisation %q in -json", per, out.Norm.Per)
		}
		for _, r := range rows(out) {
			if r.Significant || !covers(r, 1) || r.NewNorm == nil {
				t.Errorf("-per %s: %s flagged, its interval misses 1 or no new_norm:\n%s", per, r.Key, table)
			}
		}
		want := map[string]string{"second": "per second of window: BASE 1", "request": "per request: BASE 1000, NEW 1500 arenas"}[per]
		if !strings.Contains(table, want) {
			t.Errorf("-per %s: the heading lacks %q:\n%s", per, want, table)
		}
	}
	// The HTML page draws the same model: its heading and columns say so.
	page := filepath.Join(t.TempDir(), "diff.html")
	var o, e bytes.Buffer
	if code := run([]string{"html", "-per", "request", "-o", page, base, long}, &o, &e); code != 0 {
		t.Fatalf("html -per request: exit %d: %s", code, e.String())
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"per request: BASE 1000, NEW 1500 arenas", "BASE/req", "DIFF/req"} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("html -per request: the page lacks %q", want)
		}
	}
	out, table = diffOf("request", twice)
	for _, r := range rows(out) {
		if !r.Significant || !covers(r, 2) {
			t.Errorf("-per request, 2x per request: %s not flagged or its interval misses 2:\n%s", r.Key, table)
		}
	}
}

// Per request needs each side's count of arenas handed out: a profile
// without it (written before the count was recorded, as here with the
// comment removed) is refused with its name; so is a profile with a
// count of 0, in-use bytes (live at the window's end), and two live-arenas
// profiles (what arenas held at one moment).
func TestDiffPerRefusals(t *testing.T) {
	setMeanBytes(t, 1024)
	zero := diffProfileFile(t, "zero.pb.gz", 1024, 1, 2000, 100) // no Pool: 0 arenas handed out
	prof, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	pool := arena.NewPool()
	for range 100 {
		steadyRequest(pool, 1)
	}
	prof.Stop()
	var buf bytes.Buffer
	if err := export.Write(&buf, prof.Snapshot()); err != nil {
		t.Fatal(err)
	}
	withCount := writeTemp(t, "counted.pb.gz", buf.Bytes())
	noCount := rewrite(t, withCount, t.TempDir(), "old.pb.gz", func(p *profile.Profile) {
		var cs []string
		for _, c := range p.Comments {
			if !strings.HasPrefix(c, pprofmt.PoolGetsCommentPrefix) {
				cs = append(cs, c)
			}
		}
		p.Comments = cs
	})
	arenas := holdingsFile(t, "arenas.pb.gz", []holdings.Holding{{Stack: leakySite(), Arenas: 1, Reserved: 1 << 20}})
	if code, _, stderr := runDiffArgs("-per", "request", "-sample", "inuse", withCount, withCount); code == 0 || !strings.Contains(stderr, "cannot normalise in-use bytes per request") {
		t.Errorf("diff -per request -sample inuse: exit %d: %s", code, stderr)
	}
	for _, tt := range []struct {
		per, base, next, want string
	}{
		{"request", withCount, noCount, "NEW " + noCount + " records no count of arenas handed out"},
		{"request", noCount, withCount, "BASE " + noCount + " records no count of arenas handed out"},
		{"request", withCount, zero, "NEW " + zero + " records 0 arenas handed out"},
		{"minute", withCount, withCount, `bad -per "minute"`},
		{"second", arenas, arenas, "-per second divides allocations over a window; " + arenas},
	} {
		code, _, stderr := runDiffArgs("-per", tt.per, tt.base, tt.next)
		if code == 0 || !strings.Contains(stderr, tt.want) {
			t.Errorf("diff -per %s %s %s: exit %d, stderr %q, want %q", tt.per, tt.base, tt.next, code, stderr, tt.want)
		}
	}
	// The old profile still compares per second: its DurationNanos is its
	// window.
	if code, stdout, stderr := runDiffArgs("-per", "second", withCount, noCount); code != 0 || !strings.Contains(stdout, "per second of window") {
		t.Errorf("diff -per second of a profile without the comment: exit %d: %s%s", code, stdout, stderr)
	}
}
