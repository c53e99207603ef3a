package samplingstate

import (
	"testing"
)

func meansOf(h []MeanInForce) []int64 {
	out := make([]int64, len(h))
	for i, m := range h {
		out[i] = m.MeanBytes
	}
	return out
}

// TestMeansSince checks the record of the means in force: every mean
// configured from an epoch on, the current one included, none before, and
// the bound on distinct means remembered.
func TestMeansSince(t *testing.T) {
	restoreMean(t)
	if err := SetMean(4096); err != nil {
		t.Fatal(err)
	}
	e0 := Epoch()
	for _, m := range []int64{1 << 30, 0, 256, 4096} {
		if err := SetMean(m); err != nil {
			t.Fatal(err)
		}
	}
	e1 := Epoch()
	if e1 != e0+4 {
		t.Errorf("epoch %d after 4 changes from %d", e1, e0)
	}
	if err := SetMean(4096); err != nil { // no change: same epoch
		t.Fatal(err)
	}
	h, now, complete := MeansSince(e0)
	if got := meansOf(h); now != e1 || !complete || len(got) != 3 || got[0] != 256 || got[1] != 4096 || got[2] != 1<<30 {
		t.Errorf("MeansSince(%d) = %v, %d, %v", e0, got, now, complete)
	}
	h, _, _ = MeansSince(e1)
	if got := meansOf(h); len(got) != 1 || got[0] != 4096 {
		t.Errorf("MeansSince(now) = %v, want the current mean only", got)
	}
	// More distinct means than remembered: the oldest are forgotten, and
	// asking from before them says so.
	for i := range int64(maxMeanHistory + 10) {
		if err := SetMean(1000 + i); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	n := len(lastEpoch)
	mu.Unlock()
	if n > maxMeanHistory {
		t.Errorf("%d means remembered, bound %d", n, maxMeanHistory)
	}
	if _, _, complete := MeansSince(e0); complete {
		t.Error("MeansSince from before forgotten means says complete")
	}
	h, _, complete = MeansSince(Epoch())
	if !complete || len(h) != 1 || h[0].MeanBytes != 1000+maxMeanHistory+9 {
		t.Errorf("MeansSince(now) = %v, %v", h, complete)
	}
}

// restoreMean puts the configured mean back after the test.
func restoreMean(t *testing.T) {
	old := Mean()
	t.Cleanup(func() {
		if err := SetMean(old); err != nil {
			t.Error(err)
		}
	})
}
