package main

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	pprofhttp "net/http/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/goleak"
)

// TestGoroutineSitesRealRuntime runs testdata/goleakservice built by Go
// 1.27.3 (from the module proxy; skipped where the proxy cannot be
// reached, failed there under .ci/run), and by this test's Go 1.26 with
// GOEXPERIMENT=goroutineleakprofile, at
// MemProfileRate 4 KiB, leaking goroutines 10 at once every 0.2 to 1.2
// s, each holding a 64 KiB Go heap buffer allocated in main.heldBuffer,
// beside a leak of its own (main.ownBuffer, 16 KiB every 20 ms, held by
// a global) and a ring of 16 KiB buffers (main.steadyBuffer) replaced at
// the same pace. leaks -json -seconds 6 -every 50ms, at -confidence
// 0.999999 (each interval, and all together, hold with probability
// 1-1e-6 or more), reports main.heldBuffer among the goroutine sites
// with an interval covering 65,536 bytes per goroutine, held (beyond
// the growth in time, its interval covering 65,536 too), main.ownBuffer
// not held, and not the ring; -fail exits 3, as leaked goroutines fail
// the gate. The false-failure probability: 1e-6 for the intervals, the
// ownBuffer held at most (1-1e-6)/2 of that. Held for main.heldBuffer is
// the fit's power, not a confidence, so it is logged, not required: at
// 4 KiB the buffers are sampled surely (weight 1+1e-7) and the interval
// is about 65,536 -+ 170, held in 8 runs of 8 on a quiet machine and 7
// of 8 beside another package's tests (measured; docs/leaks.md); at 16
// KiB, or -every 100ms, it was held in 4 of 8 and 5 of 6 runs.
func TestGoroutineSitesRealRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a service")
	}
	for _, tc := range []struct{ toolchain, experiment string }{
		{"go1.27.3", ""},
		{"local", "goroutineleakprofile"},
	} {
		t.Run(tc.toolchain+"+"+tc.experiment, func(t *testing.T) {
			goroutineSitesReal(t, tc.toolchain, tc.experiment)
		})
	}
}

// goroutineSitesReal is one toolchain's run of
// TestGoroutineSitesRealRuntime.
func goroutineSitesReal(t *testing.T, toolchain, experiment string) {
	url, truth := startGoleakService(t, toolchain, experiment, "5", "65536", "20ms", "4096")
	if !truth.LeakProfile {
		t.Fatalf("%s has no goroutine leak profile", truth.Go)
	}
	start := time.Now()
	code, out, errOut := runCLI("leaks", "-json", "-fail", "-confidence", "0.999999", "-seconds", "6", "-every", "50ms", url)
	took := time.Since(start)
	var got leaksJSON
	if err := json.Unmarshal([]byte(out), &got); code != 3 || err != nil {
		t.Fatalf("leaks -json -fail -seconds: exit %d (want 3: leaked goroutines), %v: %s\n%s", code, err, errOut, out)
	}
	var leakedNow int64
	for _, g := range got.Goroutines {
		if strings.Join(userFrames(g.Stack), " < ") == "main.heldLeaker" {
			leakedNow = g.Count
		}
	}
	t.Logf("%s: %d snapshots over %.1f s in %s; %d heldLeaker goroutines leaked at the end; note %q",
		truth.Go, got.Snapshots, got.WindowS, took.Round(time.Millisecond), leakedNow, got.GoroutineSitesNote)
	for _, s := range got.GoroutineSites {
		t.Logf("%s %s: %.0f [%.0f, %.0f] per goroutine, beyond time %+v: %s", s.Kind, s.Key, s.BytesPerGoroutine, s.Lo, s.Hi, s.BeyondTime, s.Verdict)
		if (s.BeyondTime == nil) != (got.BeyondTimeNote != "") {
			t.Errorf("%s: beyond time %+v with beyond_time_note %q: want a note exactly where it is null", s.Key, s.BeyondTime, got.BeyondTimeNote)
		}
	}
	if leakedNow < 50 {
		t.Errorf("%d heldLeaker goroutines leaked, want 50 or more", leakedNow)
	}
	if got.GoroutineSitesNote != "" {
		t.Fatalf("goroutine_sites_note %q", got.GoroutineSitesNote)
	}
	var held bool
	for _, s := range got.GoroutineSites {
		switch s.Key {
		case "main.heldBuffer":
			held = true
			if s.Kind != "heap" || !(s.Lo <= float64(truth.HeldBytes) && float64(truth.HeldBytes) <= s.Hi) || !(s.Lo > 0) {
				t.Errorf("main.heldBuffer: %+v, want a heap site whose interval covers %d", s, truth.HeldBytes)
			}
			// An interval given must cover the truth, and the site is
			// never beside; "cannot tell" is the partial fit's power,
			// which a loaded machine lowers (a collection the service
			// runs between the count and the snapshot scatters the
			// batch means): logged, not failed.
			b := s.BeyondTime
			switch {
			case b != nil && !(b.Lo <= float64(truth.HeldBytes) && float64(truth.HeldBytes) <= b.Hi):
				t.Errorf("main.heldBuffer: verdict %q beyond time %+v, want an interval covering %d", s.Verdict, b, truth.HeldBytes)
			case s.Verdict == "beside" || (s.Verdict == "held") != (b != nil && b.Lo > 0):
				t.Errorf("main.heldBuffer: verdict %q beyond time %+v, want held or cannot tell", s.Verdict, b)
			case s.Verdict != "held":
				t.Logf("main.heldBuffer: %q this run (the partial fit's power, not its confidence)", s.Verdict)
			}
		case "main.ownBuffer":
			if s.Verdict == "held" {
				t.Errorf("main.ownBuffer, a leak of its own, is held: %+v %+v", s, s.BeyondTime)
			}
		case "main.steadyBuffer":
			t.Errorf("the control main.steadyBuffer is reported: %+v", s)
		}
	}
	if !held {
		t.Errorf("main.heldBuffer not among the goroutine sites")
	}
	// The table lists the goroutine sites (docs/goroutine-leaks.md's).
	code, table, errOut := runCLI("leaks", "-n", "5", "-seconds", "3", "-every", "50ms", url)
	if code != 0 || !strings.Contains(table, "tracking the leaked goroutines") {
		t.Errorf("leaks -seconds: exit %d: %s\n%s", code, errOut, table)
	}
	t.Logf("%s", table)
}

// countService serves net/http/pprof's heap profile and, unless counts is
// nil, a goroutine leak profile whose total is counts[i] at its i-th
// request (the last one after them; a negative count answers 500): the
// notes of the join and -fail's verdict follow from the counts read.
func countService(t *testing.T, counts []int64) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(serviceHeapPath, pprofhttp.Handler("heap"))
	if counts != nil {
		var mu sync.Mutex
		i := 0
		mux.HandleFunc(goleak.LeakPath, func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			n := counts[min(i, len(counts)-1)]
			i++
			mu.Unlock()
			if n < 0 {
				http.Error(w, "leak detection failed", http.StatusInternalServerError)
				return
			}
			fn := &profile.Function{ID: 1, Name: "main.waiter"}
			loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn, Line: 9}}}
			p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "goroutineleak", Unit: "count"}},
				Function: []*profile.Function{fn}, Location: []*profile.Location{loc}}
			if n > 0 {
				p.Sample = []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{n}}}
			}
			if err := p.Write(w); err != nil {
				t.Error(err)
			}
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestGoroutineSitesNotes: the join is not made, and the note says why,
// where the count is not read, does not grow over the last half, falls,
// or fails to be read; -fail exits 3 when goroutines are leaked, 0 when
// none are (leaks URL reads the count once).
func TestGoroutineSitesNotes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		counts []int64
		note   string
	}{
		{"no profile", nil, "serves no /debug/pprof/goroutineleak: bytes per leaked goroutine not given"},
		{"none leaked", []int64{0}, "the leaked goroutine count is 0 at every snapshot of the last half"},
		{"stalls", []int64{1, 2, 3, 4, 4}, "the leaked goroutine count is 4 at every snapshot of the last half"},
		{"falls", []int64{5, 6, 7, 8, 2, 3, 4, 5, 6}, "falls from 8 to 2 at snapshot 5"},
		{"fails", []int64{1, 2, 3, -1, 5}, "could not be read with snapshot 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := countService(t, tc.counts)
			code, out, errOut := runCLI("leaks", "-json", "-seconds", "0.7", "-every", "100ms", url)
			var got leaksJSON
			if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
				t.Fatalf("exit %d, %v: %s", code, err, errOut)
			}
			if !strings.Contains(got.GoroutineSitesNote, tc.note) || got.GoroutineSites == nil || len(got.GoroutineSites) != 0 {
				t.Errorf("sites %+v, note %q; want none and a note with %q", got.GoroutineSites, got.GoroutineSitesNote, tc.note)
			}
		})
	}
	for _, tc := range []struct {
		counts []int64
		code   int
	}{{nil, 0}, {[]int64{0}, 0}, {[]int64{3}, 3}} {
		code, out, errOut := runCLI("leaks", "-fail", countService(t, tc.counts))
		if code != tc.code {
			t.Errorf("leaks -fail URL with counts %v: exit %d, want %d: %s%s", tc.counts, code, tc.code, out, errOut)
		}
	}
}

// TestGoroutineSitesVerdicts: exact series (no sampling error) against a
// count that stalls and jumps give each listed group its verdict: held
// for bytes per goroutine (with or without a growth in time beside
// them), beside for bytes growing in time alone; against a count in step
// with the time, cannot tell, with no beyond_time and a note saying why.
func TestGoroutineSitesVerdicts(t *testing.T) {
	const n = 40
	bursty, steady := make([]float64, n), make([]float64, n)
	for i := range n {
		switch {
		case i < 24:
			bursty[i] = float64(i / 3)
		case i < 30:
			bursty[i] = 50
		case i < 35:
			bursty[i] = 52
		default:
			bursty[i] = 90
		}
		steady[i] = float64(2 * i)
	}
	type want struct {
		verdict string
		beyond  float64 // NaN: none
	}
	for _, tc := range []struct {
		name  string
		count []float64
		want  map[string]want // the listed groups
		note  string
	}{
		{"bursty", bursty, map[string]want{"held": {"held", 65536}, "both": {"held", 65536}, "own": {"beside", 0}}, ""},
		{"steady", steady, map[string]want{"held": {"cannot tell", math.NaN()}, "both": {"cannot tell", math.NaN()}, "own": {"cannot tell", math.NaN()}},
			"the count grew in step with the time over the last half"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &leakSeries{groups: map[string]*leakGroup{}, leaked: tc.count}
			start := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
			for i := range n {
				s.times = append(s.times, start.Add(time.Duration(i)*time.Second))
			}
			for name, y := range map[string]func(sec, x float64) float64{
				"held": func(_, x float64) float64 { return 4096 + 65536*x },
				"both": func(sec, x float64) float64 { return 20000*sec + 65536*x },
				"own":  func(sec, _ float64) float64 { return 1e6 + 51200*sec },
				"flat": func(float64, float64) float64 { return 1 << 20 },
			} {
				g := &leakGroup{kind: "heap", key: name, y: make([]float64, n), v: make([]float64, n)}
				for i := range n {
					g.y[i] = y(float64(i), tc.count[i])
				}
				s.groups["heap\x00"+name] = g
			}
			j := joinGoroutineSites(&leaksResult{s: s}, 0.95)
			if j.note != "" || !strings.Contains(j.beyondNote, tc.note) || (tc.note == "") != (j.beyondNote == "") {
				t.Errorf("note %q, beyond note %q; want beyond note with %q", j.note, j.beyondNote, tc.note)
			}
			got := map[string]goroutineSite{}
			for _, r := range j.rows {
				got[r.Key] = r
			}
			if len(got) != len(tc.want) {
				t.Errorf("listed %+v, want %v", j.rows, tc.want)
			}
			for key, w := range tc.want {
				r := got[key]
				if r.Verdict != w.verdict || (r.BeyondTime == nil) != math.IsNaN(w.beyond) ||
					(r.BeyondTime != nil && math.Abs(r.BeyondTime.BytesPerGoroutine-w.beyond) > 1e-3) {
					t.Errorf("%s: %+v beyond time %+v, want %s beyond %v", key, r, r.BeyondTime, w.verdict, w.beyond)
				}
			}
			var b strings.Builder
			writeGoroutineSitesTable(&b, j, leaksOptions{conf: 0.95, by: "func"})
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w.verdict) {
					t.Errorf("the table has no %q:\n%s", w.verdict, b.String())
				}
			}
			if tc.note != "" && !strings.Contains(b.String(), tc.note) {
				t.Errorf("the table has no note %q:\n%s", tc.note, b.String())
			}
			t.Logf("%s", b.String())
		})
	}
}
