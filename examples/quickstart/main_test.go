package main

import (
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/samplingstate"

	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/profiler"
	"github.com/arenaprof/arenaprof/report"
)

// strictConfidence is the confidence of the test's own intervals. The test
// checks at most 40 intervals (every row of three groupings, their totals,
// and absent groups), so a sound interval makes it fail with probability
// below 40e-9 < 1e-6 per run.
const strictConfidence = 1 - 1e-9

// TestQuickstart runs the program's logic at a reduced size into a
// temporary directory and checks the profile, the report and the estimates.
func TestQuickstart(t *testing.T) {
	requests := 10000 // about 190 MB: some 1900 sample events at the default mean
	if testing.Short() {
		requests = 1000
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "arena.pb.gz")
	var stdout, progress bytes.Buffer
	cfg := config{requests: requests, out: path, seed: 7, workers: 3, progressEvery: time.Millisecond}
	out, err := run(cfg, &stdout, &progress)
	if err != nil {
		t.Fatal(err)
	}
	text := stdout.String()

	// The file is an arenaprof profile of the whole run.
	prof, err := readProfile(path)
	if err != nil {
		t.Fatalf("the profile does not parse: %v", err)
	}
	var types []string
	for _, st := range prof.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	var want []string
	for _, st := range pprofmt.SampleTypes() {
		want = append(want, st.Type+"/"+st.Unit)
	}
	if !slices.Equal(types, want) || prof.Period != samplingstate.DefaultMeanBytes || pprofmt.WindowOf(prof) != estimate.WindowEnd {
		t.Errorf("profile: sample types %v, period %d, window %v", types, prof.Period, pprofmt.WindowOf(prof))
	}

	// The report has the three tables, the truth and the pprof command, in
	// 80 columns (the lines that name the temporary file aside).
	for _, s := range []string{
		"allocated bytes by type, 95% intervals", "allocated bytes by func, 95% intervals",
		"allocated bytes by label=endpoint", "TRUE", "COVERS", "main.record", "[]uint8", "[]uint64",
		"quickstart.parseRecord", "/import/users", "go tool pprof -http=:0 " + path,
	} {
		if !strings.Contains(text, s) {
			t.Errorf("report lacks %q:\n%s", s, text)
		}
	}
	checkWidth := func(what, text string) {
		for _, line := range strings.Split(text, "\n") {
			n := utf8.RuneCountInString(strings.ReplaceAll(line, path, "arena.pb.gz"))
			if n > 80 {
				t.Errorf("%s: line of %d columns: %q", what, n, line)
			}
		}
	}
	checkWidth("report", text)
	checkWidth("progress", progress.String())
	for _, line := range strings.Split(strings.TrimSpace(progress.String()), "\n") {
		if line != "" && !strings.Contains(line, "requests") {
			t.Errorf("odd progress line %q", line)
		}
	}
	rows := 0
	for _, res := range out.tables {
		rows += len(res.Rows) + 1
	}
	if len(out.tables) != 3 || out.intervals != rows || out.covered > rows {
		t.Errorf("%d tables, %d intervals of which %d cover; want %d intervals", len(out.tables), out.intervals, out.covered, rows)
	}

	// Every row of every grouping covers the truth at strictConfidence,
	// and every true group the profile missed is below the upper bound of
	// zero events.
	zero, err := estimate.SingleMeanInterval(0, 0, samplingstate.DefaultMeanBytes, strictConfidence, estimate.WindowEnd)
	if err != nil {
		t.Fatal(err)
	}
	for _, by := range []string{"type", "func", "label=endpoint"} {
		g := by
		res, err := report.Table(prof, report.TableOptions{By: g, Confidence: strictConfidence})
		if err != nil {
			t.Fatal(err)
		}
		truth := out.truth.by(strings.TrimPrefix(by, "label="))
		seen := map[string]bool{}
		for _, row := range res.Rows {
			seen[row.Key] = true
			v, ok := truth[row.Key]
			if !ok {
				t.Errorf("-by %s: the profile has %q, which the ledger does not know", by, row.Key)
				continue
			}
			if !covers(&row, v) {
				t.Errorf("-by %s %q: true %d bytes outside [%.0f, %.0f] (%d events)", by, row.Key, v, row.Lo, row.Hi, row.Samples)
			}
		}
		for k, v := range truth {
			if !seen[k] && float64(v) > zero.Hi {
				t.Errorf("-by %s %q: %d true bytes but no events (upper bound %.0f)", by, k, v, zero.Hi)
			}
		}
		if !covers(&res.Total, out.truth.total) {
			t.Errorf("-by %s: true total %d outside [%.0f, %.0f]", by, out.truth.total, res.Total.Lo, res.Total.Hi)
		}
		if res.Total.Bytes != out.tables[by].Total.Bytes {
			t.Errorf("-by %s: the report's table differs from the file's", by)
		}
	}
}

// TestLedgerDeterministic checks that the true bytes depend on the seed
// and the number of requests only, not on the number of workers.
func TestLedgerDeterministic(t *testing.T) {
	p, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	var discard bytes.Buffer
	a, _ := serve(config{requests: 200, seed: 3, workers: 1, quiet: true}, p, &discard)
	b, _ := serve(config{requests: 200, seed: 3, workers: 5, quiet: true}, p, &discard)
	c, _ := serve(config{requests: 200, seed: 4, workers: 1, quiet: true}, p, &discard)
	if a.total != b.total || len(a.bytes) != len(b.bytes) {
		t.Fatalf("1 worker: %d bytes, 5 workers: %d", a.total, b.total)
	}
	for k, v := range a.bytes {
		if b.bytes[k] != v {
			t.Errorf("%v: %d vs %d", k, v, b.bytes[k])
		}
	}
	if c.total == a.total {
		t.Errorf("seeds 3 and 4 give the same %d bytes", a.total)
	}
}

func TestArenaSize(t *testing.T) {
	for _, tt := range []struct{ in, want int64 }{{0, 0}, {1, 8}, {7, 8}, {8, 8}, {9, 16}, {1000, 1000}, {1001, 1008}, {1 << 20, 1 << 20}} {
		if got := arenaSize(tt.in); got != tt.want {
			t.Errorf("arenaSize(%d) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestParseRecord checks the parser and its ledger entries on good and bad
// lines.
func TestParseRecord(t *testing.T) {
	tests := []struct {
		line  string
		ok    bool
		bytes int64 // ledger bytes
	}{
		{"12,bob,300,NOTE-NOTE-NOTE-NO\n", true, sizeRecord + 8 + 24},
		{"1,abcdefghi,2,x", true, sizeRecord + 16 + 8},
		{"x,bob,300,note\n", false, 0},
		{"12,bob\n", false, 0},
		{"", false, 0},
	}
	for _, tt := range tests {
		led := newLedger()
		a := arena.NewArena()
		r := parseRecord(a, "/e", []byte(tt.line), led)
		if (r != nil) != tt.ok || led.total != tt.bytes {
			t.Errorf("%q: record %v, ledger %d bytes; want ok=%v, %d", tt.line, r, led.total, tt.ok, tt.bytes)
		}
		a.Free()
	}
}

// FuzzConfig checks the flag validation: an accepted configuration is in
// range, and nothing panics.
func FuzzConfig(f *testing.F) {
	f.Add(100000, 4, "arena.pb.gz")
	f.Add(0, 1, "x")
	f.Add(-1, -1, "")
	f.Add(maxRequests+1, maxWorkers+1, "a/b")
	f.Fuzz(func(t *testing.T, requests, workers int, out string) {
		c := config{requests: requests, workers: workers, out: out}
		err := c.check()
		ok := requests >= 1 && requests <= maxRequests && workers >= 1 && workers <= maxWorkers && out != ""
		if (err == nil) != ok {
			t.Fatalf("check(%+v) = %v", c, err)
		}
	})
}

// FuzzParseRecord feeds arbitrary lines to the parser: it never panics, and
// the ledger grows only for a parsed record.
func FuzzParseRecord(f *testing.F) {
	f.Add([]byte("12,bob,300,note\n"))
	f.Add([]byte(",,,"))
	f.Add([]byte("-9223372036854775808,\xff,9223372036854775807,\n"))
	f.Fuzz(func(t *testing.T, line []byte) {
		led := newLedger()
		a := arena.NewArena()
		defer a.Free()
		r := parseRecord(a, "/e", line, led)
		if (r == nil) != (led.total == 0) {
			t.Fatalf("%q: record %v, ledger %d", line, r, led.total)
		}
	})
}

// BenchmarkHandle handles requests of the quick start's mix, one arena from
// a pool per request, with the profiler off. It is the workload of the
// profile-guided-optimization profile default.pgo:
//
//	go test -run '^$' -bench Handle -cpuprofile $PWD/examples/quickstart/default.pgo ./examples/quickstart
//	go test -run '^$' -bench Handle -count 10 -pgo off ./examples/quickstart > off.txt
//	go test -run '^$' -bench Handle -count 10 -pgo $PWD/examples/quickstart/default.pgo ./examples/quickstart > pgo.txt
func BenchmarkHandle(b *testing.B) {
	const n = 256
	reqs := make([]request, n)
	payloads := make([][]byte, n)
	for i := range reqs {
		reqs[i] = newRequest(1, int64(i))
		payloads[i] = makePayload(nil, reqs[i])
	}
	var pool arena.Pool
	led := newLedger()
	b.ReportAllocs()
	for i := range b.N {
		a := pool.Get(nil)
		handle(a, reqs[i%n], payloads[i%n], led)
		pool.Put(a)
	}
}
