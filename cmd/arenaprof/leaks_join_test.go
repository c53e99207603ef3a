package main

import (
	"encoding/json"
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
// 1.27.3 (from the module proxy; skipped when it cannot be had), and by
// this test's Go 1.26 with GOEXPERIMENT=goroutineleakprofile, leaking a
// goroutine every 20 ms, each holding a 64 KiB Go heap buffer allocated in
// main.heldBuffer, beside a ring of 16 KiB buffers (main.steadyBuffer)
// replaced at the same pace, at MemProfileRate 16 KiB. leaks -json
// -seconds 3 -every 100ms, at -confidence 0.999999 (each interval, and
// all together, hold with probability 1-1e-6 or more: this test's
// false-failure probability), reports main.heldBuffer among the
// goroutine sites with an interval covering 65,536 bytes per goroutine,
// and not the ring; -fail exits 3, as leaked goroutines fail the gate.
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
	url, truth := startGoleakService(t, toolchain, experiment, "5", "65536", "20ms", "16384")
	if !truth.LeakProfile {
		t.Fatalf("%s has no goroutine leak profile", truth.Go)
	}
	start := time.Now()
	code, out, errOut := runCLI("leaks", "-json", "-fail", "-confidence", "0.999999", "-seconds", "3", "-every", "100ms", url)
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
	t.Logf("%s: %d snapshots over %.1f s in %s; %d heldLeaker goroutines leaked at the end; sites %+v; note %q",
		truth.Go, got.Snapshots, got.WindowS, took.Round(time.Millisecond), leakedNow, got.GoroutineSites, got.GoroutineSitesNote)
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
		case "main.steadyBuffer":
			t.Errorf("the control main.steadyBuffer is reported: %+v", s)
		}
	}
	if !held {
		t.Errorf("main.heldBuffer not among the goroutine sites")
	}
	// The table shows the same site.
	code, table, errOut := runCLI("leaks", "-confidence", "0.999999", "-seconds", "1", "-every", "100ms", url)
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
