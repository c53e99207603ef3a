package profiler

import (
	"sync"
	"testing"

	"github.com/arenaprof/arenaprof/hooks"
)

// TestPeakMargin checks when the peak is re-taken: at a release, only when
// the live bytes have grown peakMargin above the last peak.
func TestPeakMargin(t *testing.T) {
	setMeanBytes(t, 1) // every object sampled: live bytes are exact
	p, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	a := newCollectorTestArena(t, 1, hooks.Labels{})
	for _, c := range []struct {
		live int64 // bytes allocated, then released
		peak float64
	}{
		{1000, 1000},
		{1040, 1000}, // within the margin: not re-taken
		{1100, 1100},
		{500, 1100},
	} {
		for range c.live / 10 {
			a.Alloc(10, "main.t")
		}
		a.Reset()
		if pk := p.Peak(); pk.Bytes != c.peak || pk.Snapshot == nil {
			t.Errorf("after %d bytes: peak %.0f, want %.0f", c.live, pk.Bytes, c.peak)
		}
	}
	if got := p.liveBytes(); got != 0 {
		t.Errorf("live bytes %d after every release, want 0", got)
	}
	// A peak still under way is taken when read.
	for range 300 {
		a.Alloc(10, "main.t")
	}
	if pk := p.Peak(); pk.Bytes != 3000 {
		t.Errorf("peak under way: %.0f, want 3000", pk.Bytes)
	}
}

// TestPeakConcurrent allocates, releases and reads peaks from several
// goroutines: run with -race.
func TestPeakConcurrent(t *testing.T) {
	setMeanBytes(t, 64)
	p, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	var wg sync.WaitGroup
	for g := range 4 {
		a := newCollectorTestArena(t, uint64(g+10), hooks.Labels{})
		wg.Go(func() {
			for i := range 200 {
				for range i % 50 {
					a.Alloc(48, "main.t")
				}
				a.Reset()
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			take, stop := p.WatchPeak()
			defer stop()
			for range 50 {
				if pk := take(); pk.Bytes < 0 {
					t.Errorf("negative peak %v", pk.Bytes)
				}
				_ = p.Peak()
			}
		})
	}
	wg.Wait()
	if got := p.liveBytes(); got != 0 {
		t.Errorf("live bytes %d after every release, want 0", got)
	}
}
