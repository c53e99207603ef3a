package report

import (
	"math"
	"strings"
	"testing"
)

// sumsOf returns the sums of c events of weight w of objects of size
// bytes (size == w: sampled with certainty, an exact side).
func sumsOf(c, w, size float64) ratioSums {
	var r ratioSums
	r.add(c, w, size)
	return r
}

// TestRatioPInvertsInterval checks that ratioP is the p-value the interval
// inverts: the interval at confidence just below 1-p excludes 1, just
// above it includes 1, in each branch of ratioLower.
func TestRatioPInvertsInterval(t *testing.T) {
	tests := []struct {
		name      string
		base, new ratioSums
	}{
		{"12 vs 24 events", sumsOf(12, 1024, 16), sumsOf(24, 1024, 16)},
		{"24 vs 12 events", sumsOf(24, 1024, 16), sumsOf(12, 1024, 16)},
		{"12 vs 12 events", sumsOf(12, 1024, 16), sumsOf(12, 1024, 16)},
		{"64 events of mixed weights vs 130", func() ratioSums { r := sumsOf(60, 1024, 16); r.add(4, 6500, 4096); return r }(), sumsOf(130, 1024, 16)},
		{"exact base", sumsOf(50, 64, 64), sumsOf(70, 1024, 16)},
		{"exact new", sumsOf(30, 1024, 16), sumsOf(50, 64, 64)},
		{"both exact, larger", sumsOf(10, 64, 64), sumsOf(11, 64, 64)},
		{"both exact, equal", sumsOf(10, 64, 64), sumsOf(10, 64, 64)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ratioP(tt.base, tt.base, tt.new, tt.new, 1)
			if !(p >= 0 && p <= 1) {
				t.Fatalf("p %v", p)
			}
			excludes := func(conf float64) bool {
				lo, hi, err := ratioInterval(tt.base, tt.base, tt.new, tt.new, conf)
				if err != nil {
					t.Fatal(err)
				}
				return lo > 1 || hi < 1
			}
			if p > 1e-12 && p < 1-1e-9 {
				if c := 1 - p*(1+1e-6); !excludes(c) {
					t.Errorf("p %v: the interval at %v includes 1", p, c)
				}
				if c := 1 - p*(1-1e-6); excludes(c) {
					t.Errorf("p %v: the interval at %v excludes 1", p, c)
				}
			}
			for _, c := range []float64{0.5, 0.9, 0.95, 0.99, 0.999} {
				if math.Abs(p-(1-c)) > 1e-9 && excludes(c) != (p < 1-c) {
					t.Errorf("p %v at confidence %v: interval excludes 1 %v", p, c, excludes(c))
				}
			}
		})
	}
}

func TestHolm(t *testing.T) {
	tests := []struct {
		p, want []float64
	}{
		{nil, []float64{}},
		{[]float64{0.03}, []float64{0.03}},
		{[]float64{0.01, 0.04, 0.03}, []float64{0.03, 0.06, 0.06}},
		{[]float64{0.5, 0.001, 0.02, 0.9}, []float64{1, 0.004, 0.06, 1}},
		{[]float64{0.01, 0.01}, []float64{0.02, 0.02}},
	}
	for _, tt := range tests {
		got := holm(tt.p)
		if len(got) != len(tt.want) {
			t.Fatalf("holm(%v) = %v", tt.p, got)
		}
		for i := range got {
			if math.Abs(got[i]-tt.want[i]) > 1e-12 {
				t.Errorf("holm(%v) = %v, want %v", tt.p, got, tt.want)
				break
			}
		}
	}
}

// FuzzRatioP feeds arbitrary counts, weights and thresholds: the p-values
// lie in [0, 1], never NaN, and agree with the interval at 0.95 away from
// the boundary.
func FuzzRatioP(f *testing.F) {
	f.Add(12.0, 1024.0, 24.0, 1024.0, 1.0)
	f.Add(0.0, 1.0, 1e9, 1e12, 1.5)
	f.Add(1.0, 4096.0, 1.0, 1.0, 1e-9)
	f.Fuzz(func(t *testing.T, x, wb, y, wn, c float64) {
		if !(x >= 0 && y >= 0 && x < 1e12 && y < 1e12 && wb >= 1 && wn >= 1 && wb < 1e15 && wn < 1e15 && c > 0 && c < 1e9) {
			return
		}
		b, n := sumsOf(math.Floor(x), wb, 1), sumsOf(math.Floor(y), wn, 1)
		pc := ratioLowerP(b.plusOne(), n, c)
		p := ratioP(b, b, n, n, 1)
		for _, v := range []float64{p, pc} {
			if math.IsNaN(v) || v < 0 || v > 1 {
				t.Fatalf("x %v wb %v y %v wn %v c %v: p %v, p(c) %v", x, wb, y, wn, c, p, pc)
			}
		}
		lo, hi, err := ratioInterval(b, b, n, n, 0.95)
		if err != nil || math.Abs(p-0.05) < 1e-6 {
			return
		}
		if (lo > 1 || hi < 1) != (p < 0.05) {
			t.Fatalf("x %v wb %v y %v wn %v: [%v, %v] at 0.95, p %v", x, wb, y, wn, lo, hi, p)
		}
		for _, v := range holm([]float64{p, pc, 0.5}) {
			if math.IsNaN(v) || v < 0 || v > 1 {
				t.Fatalf("holm %v", v)
			}
		}
	})
}

// diffRowOf returns a row comparing the sums base and new as Diff fills
// it, at confidence 0.95.
func diffRowOf(t *testing.T, key string, base, new ratioSums) DiffRow {
	t.Helper()
	d := DiffRow{Key: key, Base: TableRow{Samples: 1, Bytes: int64(base.t)}, New: TableRow{Samples: 1, Bytes: int64(new.t)}}
	lo, hi, err := ratioInterval(base, base, new, new, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	d.HasRatio, d.Ratio = true, new.t/base.t
	d.RatioLo, d.RatioHi = min(lo, d.Ratio), max(hi, d.Ratio)
	d.sums = &diffSums{base, base, new, new, 1}
	d.P = ratioP(base, base, new, new, 1)
	d.PAdjusted = d.P
	return d
}

// TestDiffAdjust checks the flags and the gate of a hand-made result with
// Holm (the default) and per row: two rows whose 95% intervals just
// exclude 1 are flagged per row only, a large change either way.
func TestDiffAdjust(t *testing.T) {
	e := func(c float64) ratioSums { return sumsOf(c, 1024, 16) }
	rows := func(t *testing.T) []DiffRow {
		return []DiffRow{
			diffRowOf(t, "big", e(100), e(400)),                       // p far below 0.05/5
			diffRowOf(t, "edge1", e(12), e(26)),                       // p just below 0.05
			diffRowOf(t, "edge2", e(26), e(12)),                       // the same, downwards
			diffRowOf(t, "same", e(50), e(50)),                        // p = 1
			{Key: "new only", New: TableRow{Samples: 3, Bytes: 3072}}, // no ratio
		}
	}
	tests := []struct {
		name        string
		perRow      bool
		flagged     []string
		family      int
		gateFailing []string // -fail-above 1
	}{
		{"holm", false, []string{"big", "total"}, 5, []string{"big"}},
		{"per row", true, []string{"big", "edge1", "edge2", "total"}, 5, []string{"big", "edge1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := rows(t)
			for _, r := range rs[1:3] {
				if !(r.P < 0.05 && r.P > 0.01) {
					t.Fatalf("%s: p %v, want just below 0.05", r.Key, r.P)
				}
			}
			res := &DiffResult{Confidence: 0.95, PerRow: tt.perRow, Groups: len(rs), Rows: rs,
				Total: diffRowOf(t, "total", e(188), e(488))}
			if fam := diffAdjust(res, 0.05); fam != tt.family {
				t.Errorf("family %d, want %d", fam, tt.family)
			}
			var got []string
			for _, r := range append(res.Rows, res.Total) {
				if r.Significant {
					got = append(got, r.Key)
				}
				if r.PAdjusted < r.P || tt.perRow && r.PAdjusted != r.P {
					t.Errorf("%s: p %v, adjusted %v", r.Key, r.P, r.PAdjusted)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.flagged, ",") {
				t.Errorf("flagged %v, want %v", got, tt.flagged)
			}
			got = nil
			for _, r := range (Gate{FailAbove: 1}).Failing(res) {
				got = append(got, r.Key)
			}
			if strings.Join(got, ",") != strings.Join(tt.gateFailing, ",") {
				t.Errorf("gate failing %v, want %v", got, tt.gateFailing)
			}
		})
	}
}
