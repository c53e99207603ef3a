package rss

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

var spike []byte

// TestPeakCaught holds 64 MiB (touched) for one second, then frees it and
// returns it to the OS: the peak, read after, holds it, and a window open
// across the spike has it too; a window after it has not. On a loaded
// machine the watch's ticks may come late: the spike is then held until
// the watch has seen it (10 s at most), and the delay logged.
func TestPeakCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("waits seconds")
	}
	if raceOn {
		t.Skip("the race detector's shadow memory moves RSS with every allocation")
	}
	// Free heap pages other tests left resident would take the spike
	// without a rise in RSS: give them back first.
	runtime.GC()
	debug.FreeOSMemory()
	stop := Watch()
	defer stop()
	time.Sleep(2 * WatchTick)
	before, running := CurrentPeak()
	if !running || before == nil {
		t.Fatalf("no peak after %v: running %v", 2*WatchTick, running)
	}
	w := OpenWindow()
	const size = 64 << 20
	spike = make([]byte, size)
	for i := range spike {
		spike[i] = 1
	}
	time.Sleep(time.Second)
	for start := time.Now(); ; time.Sleep(WatchTick) {
		if pk, _ := CurrentPeak(); pk.RSS >= before.RSS+size*9/10 || time.Since(start) > 10*time.Second {
			if d := time.Since(start); d > WatchTick {
				t.Logf("the watch saw the spike %v after the first second", d)
			}
			break
		}
	}
	spike = nil
	runtime.GC()
	debug.FreeOSMemory()
	after := OpenWindow()
	time.Sleep(2 * WatchTick)
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(WatchTick) {
		watch.mu.Lock()
		seen := after.peak != nil
		watch.mu.Unlock()
		if seen {
			break
		}
	}
	pk, _ := CurrentPeak()
	if pk.RSS < before.RSS+size*9/10 {
		t.Errorf("the peak's RSS %d, before the spike %d: the 64 MiB held for a second were missed", pk.RSS, before.RSS)
	}
	heap := pk.Breakdown.Bytes[iLive] + pk.Breakdown.Bytes[iDead]
	if heap < size*9/10 {
		t.Errorf("the peak's heap objects hold %d bytes, not the spike's %d", heap, size)
	}
	if wp := w.Close(); wp == nil || wp.RSS < before.RSS+size*9/10 {
		t.Errorf("the window across the spike has the peak %+v", wp)
	}
	if ap := after.Close(); ap == nil || ap.RSS >= pk.RSS {
		t.Errorf("the window after the spike: its peak %+v, the spike's RSS %d", ap, pk.RSS)
	}
	p, err := PeakProfile(pk)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Parse(p, "func", 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if res.PeakSince == nil || res.RSSBytes != pk.RSS {
		t.Errorf("the peak profile read back: since %v, RSS %d, want %d", res.PeakSince, res.RSSBytes, pk.RSS)
	}
}

// TestWatchStops checks that the watch runs while any caller holds it and
// stops after the last.
func TestWatchStops(t *testing.T) {
	s1, s2 := Watch(), Watch()
	s1()
	s1() // twice is once
	if _, running := CurrentPeak(); !running {
		t.Fatal("the watch stopped with a caller left")
	}
	s2()
	if _, running := CurrentPeak(); running {
		t.Fatal("the watch runs after every caller stopped it")
	}
	if OpenWindow() != nil {
		t.Fatal("a window opened without a watch")
	}
}
