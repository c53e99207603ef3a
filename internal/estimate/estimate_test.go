package estimate

import (
	"math"
	"math/big"
	"strings"
	"testing"
)

// bigWeightedBytes returns size/(1-q^size), q = 1-1/mean, in 256-bit
// arithmetic (q^size by repeated squaring).
func bigWeightedBytes(size, mean int64) float64 {
	const prec = 256
	nf := func() *big.Float { return new(big.Float).SetPrec(prec) }
	one := nf().SetInt64(1)
	q := nf().Sub(one, nf().Quo(one, nf().SetInt64(mean)))
	pow := nf().SetInt64(1)
	base := nf().Set(q)
	for e := size; e > 0; e >>= 1 {
		if e&1 == 1 {
			pow.Mul(pow, base)
		}
		base.Mul(base, base)
	}
	den := nf().Sub(one, pow)
	w, _ := nf().Quo(nf().SetInt64(size), den).Float64()
	return w
}

func TestWeightedBytesReference(t *testing.T) {
	var means []int64
	step := 1
	if testing.Short() {
		step = 3
	}
	for e := 0; e <= 40; e += step {
		m := int64(1) << e
		means = append(means, m, m+1, m*3/2+1)
	}
	means = append(means, 102400, 1000003, maxMeanBytes)
	sizes := []int64{1, 2, 3, 7, 8, 64, 1000, 4096, 102399, 102400, 1 << 20, 1<<30 + 17, 1 << 40, 1 << 45}
	if testing.Short() {
		sizes = []int64{1, 2, 7, 4096, 102400, 1<<30 + 17, 1 << 40}
	}
	for _, m := range means {
		if m > maxMeanBytes {
			continue
		}
		for _, n := range sizes {
			got, err := WeightedBytes(n, m)
			if err != nil {
				t.Fatal(err)
			}
			want := bigWeightedBytes(n, m)
			if m == 1 {
				want = float64(n)
			}
			if rel := math.Abs(got-want) / want; !(rel <= 4e-15) {
				t.Errorf("WeightedBytes(%d, %d) = %.17g, reference %.17g (relative error %.2g)", n, m, got, want, rel)
			}
			if !(got >= float64(n)) {
				t.Errorf("WeightedBytes(%d, %d) = %v below the size", n, m, got)
			}
			o, _ := WeightedObjects(n, m)
			if math.Abs(o*float64(n)-got) > 1e-15*got {
				t.Errorf("WeightedObjects(%d, %d) = %v, not WeightedBytes/size", n, m, o)
			}
		}
		// Exactly the mean for size 1.
		if w, _ := WeightedBytes(1, m); w != float64(m) {
			t.Errorf("WeightedBytes(1, %d) = %v, want exactly %d", m, w, m)
		}
	}
	// Huge objects weigh their size.
	if w, _ := WeightedBytes(1<<50, 1024); w != 1<<50 {
		t.Errorf("WeightedBytes(2^50, 1024) = %v, want 2^50", w)
	}
}

func TestBytesFromSums(t *testing.T) {
	for _, c := range []struct {
		s, u, mean int64
		want       float64
	}{
		{0, 0, 102400, 0},
		{8, 10908, 102400, 8*102399 + 10908},
		{3, 3, 1, 3},
		{1, 5, 2, 6},
	} {
		got, err := BytesFromSums(c.s, c.u, c.mean)
		if err != nil || got != c.want {
			t.Errorf("BytesFromSums(%d, %d, %d) = %v, %v; want %v", c.s, c.u, c.mean, got, err, c.want)
		}
	}
}

func TestEstimateErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"negative size", func() error { _, err := WeightedBytes(-1, 100); return err }(), "size"},
		{"zero size", func() error { _, err := WeightedBytes(0, 100); return err }(), "size"},
		{"zero mean", func() error { _, err := WeightedBytes(1, 0); return err }(), "mean"},
		{"huge mean", func() error { _, err := WeightedObjects(1, maxMeanBytes+1); return err }(), "mean"},
		{"u < s", func() error { _, err := BytesFromSums(3, 2, 100); return err }(), "tail"},
		{"negative s", func() error { _, err := BytesFromSums(-1, 2, 100); return err }(), "negative"},
		{"bad mean", func() error { _, err := BytesFromSums(1, 2, -5); return err }(), "mean"},
		{"offset past the end", CheckEvent(10, 10, 100), "offset"},
		{"negative offset", CheckEvent(10, -1, 100), "offset"},
		{"tally bad event", func() error { var tl EventSums; return tl.Add(10, 11, 100) }(), "offset"},
		{"empty tally", func() error { var tl EventSums; _, err := tl.Interval(0.95, WindowBoth); return err }(), "strata"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, c.err, c.want)
		}
	}
}

func TestEventSums(t *testing.T) {
	var tl EventSums
	events := []struct{ size, offset, mean int64 }{
		{1, 0, 102400}, {4096, 100, 102400}, {1 << 20, 5, 4096}, {8, 7, 4096}, {100, 0, 1},
	}
	var wantBytes, wantObjects, wantFT float64
	strata := map[int64]MeanSums{}
	for _, e := range events {
		if err := tl.Add(e.size, e.offset, e.mean); err != nil {
			t.Fatal(err)
		}
		w, _ := WeightedBytes(e.size, e.mean)
		wantBytes += w
		wantObjects += w / float64(e.size)
		st := strata[e.mean]
		st.MeanBytes = e.mean
		st.Samples++
		st.Tail += e.size - e.offset
		strata[e.mean] = st
	}
	for _, st := range strata {
		v, _ := BytesFromSums(st.Samples, st.Tail, st.MeanBytes)
		wantFT += v
	}
	if tl.WeightedBytes() != wantBytes || math.Abs(tl.WeightedObjects()-wantObjects) > 1e-9*wantObjects {
		t.Errorf("tally %v bytes %v objects, want %v, %v", tl.WeightedBytes(), tl.WeightedObjects(), wantBytes, wantObjects)
	}
	if tl.BytesFromSums() != wantFT || tl.Samples() != int64(len(events)) {
		t.Errorf("failed-trials %v samples %d, want %v, %d", tl.BytesFromSums(), tl.Samples(), wantFT, len(events))
	}
	got := tl.ByMean()
	if len(got) != 3 || got[0].MeanBytes != 1 || got[1].MeanBytes != 4096 || got[2].MeanBytes != 102400 {
		t.Fatalf("strata %+v", got)
	}
	for _, st := range got {
		if st != strata[st.MeanBytes] {
			t.Errorf("stratum %+v, want %+v", st, strata[st.MeanBytes])
		}
	}
	iv, err := tl.Interval(0.95, WindowBoth)
	if err != nil {
		t.Fatal(err)
	}
	if !(iv.Lo <= iv.Estimate && iv.Estimate <= iv.Hi) || iv.MeanBytes != 0 {
		t.Errorf("interval %+v", iv)
	}
	tl.Reset()
	if tl.WeightedBytes() != 0 || tl.Samples() != 0 || len(tl.ByMean()) != 0 {
		t.Errorf("after Reset: %+v", tl)
	}
}
