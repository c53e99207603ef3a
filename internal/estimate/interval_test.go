package estimate

import (
	"github.com/arenaprof/arenaprof/internal/negbin/negbintest"
	"math"
	"strings"
	"testing"
)

// quantileTable is the reference's table (see package negbintest).
var quantileTable = negbintest.Table

func tableRow(s int64) (lo, hi int64, ok bool) {
	for _, r := range quantileTable {
		if r.S == s {
			return r.Lo, r.Hi, true
		}
	}
	return 0, 0, false
}

func TestSingleMeanIntervalTable(t *testing.T) {
	const mean = 102400
	for _, row := range quantileTable {
		u := row.S * 1000
		iv, err := SingleMeanInterval(row.S, u, mean, 0.95, WindowAligned)
		if err != nil {
			t.Fatal(err)
		}
		// The lower bound is the table's (largest k with CDF < 0.025); the
		// upper rounds outward to the smallest k with CDF >= 0.975.
		if iv.UnsampledLo != row.Lo || iv.UnsampledHi != row.Hi+1 {
			t.Errorf("s=%d: failures [%d, %d], table [%d, %d]+1", row.S, iv.UnsampledLo, iv.UnsampledHi, row.Lo, row.Hi)
		}
		if iv.Lo != float64(row.Lo+u) || iv.Hi != float64(row.Hi+1+u) {
			t.Errorf("s=%d: bytes [%v, %v]", row.S, iv.Lo, iv.Hi)
		}
		if want := float64(row.S)*(mean-1) + float64(u); iv.Estimate != want {
			t.Errorf("s=%d: estimate %v, want %v", row.S, iv.Estimate, want)
		}
	}
}

func TestSingleMeanIntervalWindow(t *testing.T) {
	const mean = 102400
	for s := int64(2); s <= 9; s++ {
		lo, hi, _ := tableRow(s)
		loPrev, _, _ := tableRow(s - 1)
		_, hiNext, _ := tableRow(s + 1)
		for _, c := range []struct {
			w              Window
			wantLo, wantHi int64
		}{
			{WindowAligned, lo, hi + 1},
			{WindowStart, loPrev, hi + 1},
			{WindowEnd, lo, hiNext + 1},
			{WindowBoth, loPrev, hiNext + 1},
		} {
			iv, err := SingleMeanInterval(s, s, mean, 0.95, c.w)
			if err != nil {
				t.Fatal(err)
			}
			if iv.UnsampledLo != c.wantLo || iv.UnsampledHi != c.wantHi || iv.Window != c.w {
				t.Errorf("s=%d window=%v: [%d, %d], want [%d, %d]", s, c.w, iv.UnsampledLo, iv.UnsampledHi, c.wantLo, c.wantHi)
			}
		}
	}
	_, hi1, _ := tableRow(1)
	for _, c := range []struct {
		s, u   int64
		w      Window
		lo, hi float64
	}{
		{0, 0, WindowAligned, 0, 0},            // no events, end on an event: [u, u]
		{0, 0, WindowStart, 0, 0},              //
		{0, 0, WindowEnd, 0, float64(hi1 + 1)}, // finite upper bound
		{0, 0, WindowBoth, 0, float64(hi1 + 1)},
		{1, 300, WindowStart, 300, 300 + 377739},
		{1, 300, WindowBoth, 300, 300 + 570532},
	} {
		iv, err := SingleMeanInterval(c.s, c.u, mean, 0.95, c.w)
		if err != nil {
			t.Fatal(err)
		}
		if iv.Lo != c.lo || iv.Hi != c.hi {
			t.Errorf("s=%d u=%d window=%v: [%v, %v], want [%v, %v]", c.s, c.u, c.w, iv.Lo, iv.Hi, c.lo, c.hi)
		}
	}
	// Mean 1 samples every byte: the interval is [u, u].
	iv, err := SingleMeanInterval(5, 40, 1, 0.99, WindowBoth)
	if err != nil || iv.Lo != 40 || iv.Hi != 40 || iv.Estimate != 40 {
		t.Errorf("mean 1: %+v, %v", iv, err)
	}
}

func TestSingleMeanIntervalProperties(t *testing.T) {
	for _, mean := range []int64{2, 64, 4096, 102400, 1 << 30, maxMeanBytes} {
		for _, s := range []int64{0, 1, 2, 17, 1000, 123456} {
			prevLo, prevHi := math.Inf(1), math.Inf(-1)
			for _, conf := range []float64{0.5, 0.8, 0.95, 0.99, 0.999999} {
				iv, err := SingleMeanInterval(s, s+s*(mean/3), mean, conf, WindowBoth)
				if err != nil {
					if strings.Contains(err.Error(), "2^53") {
						continue
					}
					t.Fatal(err)
				}
				if !(iv.Lo <= iv.Hi) || math.IsNaN(iv.Lo) || math.IsNaN(iv.Hi) || iv.Lo < float64(iv.Tail) {
					t.Errorf("mean=%d s=%d conf=%v: %+v", mean, s, conf, iv)
				}
				if s > 0 && !(iv.Lo <= iv.Estimate && iv.Estimate <= iv.Hi) {
					t.Errorf("mean=%d s=%d conf=%v: estimate %v outside [%v, %v]", mean, s, conf, iv.Estimate, iv.Lo, iv.Hi)
				}
				// Higher confidence: a wider interval.
				if iv.Lo > prevLo || iv.Hi < prevHi {
					t.Errorf("mean=%d s=%d conf=%v: [%v, %v] not wider than [%v, %v]", mean, s, conf, iv.Lo, iv.Hi, prevLo, prevHi)
				}
				prevLo, prevHi = iv.Lo, iv.Hi
			}
		}
	}
}

func TestGroupInterval(t *testing.T) {
	// One mean (possibly split over several strata) is SingleMeanInterval.
	one, err := GroupInterval([]MeanSums{{3, 300, 4096}, {5, 500, 4096}}, 0.95, WindowEnd)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := SingleMeanInterval(8, 800, 4096, 0.95, WindowEnd)
	if one != want {
		t.Errorf("single mean: %+v, want %+v", one, want)
	}
	// Two means: each side of each at the Šidák tail 1-sqrt(1-0.025),
	// summed; never wider than the Bonferroni split (each at 0.975).
	strata := []MeanSums{{10, 1000, 102400}, {40, 4000, 4096}}
	g, err := GroupInterval(strata, 0.95, WindowBoth)
	if err != nil {
		t.Fatal(err)
	}
	tail := 1 - math.Sqrt(1-0.025)
	a, _ := SingleMeanInterval(10, 1000, 102400, 1-2*tail, WindowBoth)
	b, _ := SingleMeanInterval(40, 4000, 4096, 1-2*tail, WindowBoth)
	if g.Lo != a.Lo+b.Lo || g.Hi != a.Hi+b.Hi || g.Estimate != a.Estimate+b.Estimate ||
		g.Samples != 50 || g.Tail != 5000 || g.MeanBytes != 0 || g.UnsampledLo != a.UnsampledLo+b.UnsampledLo {
		t.Errorf("two means: %+v; parts %+v %+v", g, a, b)
	}
	ba, _ := SingleMeanInterval(10, 1000, 102400, 0.975, WindowBoth)
	bb, _ := SingleMeanInterval(40, 4000, 4096, 0.975, WindowBoth)
	if g.Lo < ba.Lo+bb.Lo || g.Hi > ba.Hi+bb.Hi || g.Hi-g.Lo >= ba.Hi+bb.Hi-ba.Lo-bb.Lo {
		t.Errorf("two means: [%.0f, %.0f] not tighter than Bonferroni's [%.0f, %.0f]", g.Lo, g.Hi, ba.Lo+bb.Lo, ba.Hi+bb.Hi)
	}
	// A mean without events adds its allowance to the upper bound only.
	z, err := GroupInterval([]MeanSums{{40, 4000, 4096}, {0, 0, 102400}}, 0.95, WindowEnd)
	if err != nil {
		t.Fatal(err)
	}
	alone, _ := SingleMeanInterval(40, 4000, 4096, 0.95, WindowEnd)
	if z.Lo > alone.Lo || z.Hi < alone.Hi+3*102400 {
		t.Errorf("event-free mean: [%.0f, %.0f], alone [%.0f, %.0f]: no allowance", z.Lo, z.Hi, alone.Lo, alone.Hi)
	}
	for _, c := range []struct {
		strata []MeanSums
		conf   float64
		want   string
	}{
		{nil, 0.95, "no strata"},
		{[]MeanSums{{1, 0, 100}}, 0.95, "tail"},
		{[]MeanSums{{1, 1, 0}}, 0.95, "mean"},
		{[]MeanSums{{1, 1, 100}}, 1, "confidence"},
		{[]MeanSums{{1, 1, 100}}, math.NaN(), "confidence"},
		{[]MeanSums{{-1, 1, 100}}, 0.9, "negative"},
	} {
		if _, err := GroupInterval(c.strata, c.conf, WindowBoth); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("GroupInterval(%+v, %v): error %v, want %q", c.strata, c.conf, err, c.want)
		}
	}
}

func TestSingleMeanIntervalErrors(t *testing.T) {
	for _, c := range []struct {
		s, u, mean int64
		conf       float64
		w          Window
		want       string
	}{
		{-1, 0, 100, 0.95, WindowBoth, "negative"},
		{5, 4, 100, 0.95, WindowBoth, "tail sum"},
		{1, 1, 0, 0.95, WindowBoth, "mean"},
		{1, 1, maxMeanBytes + 1, 0.95, WindowBoth, "mean"},
		{1, 1, 100, 0, WindowBoth, "confidence"},
		{1, 1, 100, 1, WindowBoth, "confidence"},
		{1, 1, 100, -0.5, WindowBoth, "confidence"},
		{1, 1, 100, math.NaN(), WindowBoth, "confidence"},
		{1, 1, 100, math.Inf(1), WindowBoth, "confidence"},
		{1, 1, 100, 1 - 1e-12, WindowBoth, "precision"},
		{1, 1, 100, 0.95, Window(7), "window"},
		{1 << 41, 1 << 41, 100, 0.95, WindowBoth, "samples"},
		{10_000_000, 10_000_000, 1 << 30, 0.95, WindowBoth, "2^53"},
	} {
		_, err := SingleMeanInterval(c.s, c.u, c.mean, c.conf, c.w)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SingleMeanInterval(%d, %d, %d, %v, %v): error %v, want one mentioning %q", c.s, c.u, c.mean, c.conf, c.w, err, c.want)
		}
	}
}

func TestParseWindow(t *testing.T) {
	for _, w := range []Window{WindowAligned, WindowStart, WindowEnd, WindowBoth} {
		got, err := ParseWindow(w.String())
		if err != nil || got != w {
			t.Errorf("ParseWindow(%q) = %v, %v", w.String(), got, err)
		}
	}
	if _, err := ParseWindow("sideways"); err == nil {
		t.Error("ParseWindow(sideways): no error")
	}
	if Window(9).String() != "Window(9)" {
		t.Error(Window(9).String())
	}
}
