package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestGoroutineSitesRealRuntime runs testdata/goleakservice built by Go
// 1.27.3 (from the module proxy; skipped when it cannot be had) leaking a
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
	url, truth := startGoleakService(t, "go1.27.3", "", "5", "65536", "20ms", "16384")
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
	t.Logf("%d snapshots over %.1f s in %s; %d heldLeaker goroutines leaked at the end; sites %+v; note %q",
		got.Snapshots, got.WindowS, took.Round(time.Millisecond), leakedNow, got.GoroutineSites, got.GoroutineSitesNote)
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
