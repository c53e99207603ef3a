package report

import (
	"math"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// fleetProfile returns a profile as pyroread rebuilds it from a server's
// sums: per function, one sample of c events of mixed sizes (32 B and
// 16 KiB, half each) at mean 64 KiB, with its variance sums and the
// label arenaprof_var="1" when marked.
func fleetProfile(t *testing.T, c int64, marked map[string]bool) *profile.Profile {
	t.Helper()
	const mean = 64 << 10
	p := &profile.Profile{
		SampleType: append(pprofmt.SampleTypes(), pprofmt.VarianceSampleTypes()...),
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:     mean,
		Comments:   []string{pprofmt.WindowComment(estimate.WindowBoth)},
	}
	for i, fn := range []string{"pkg.marked", "pkg.old"} {
		f := &profile.Function{ID: uint64(i + 1), Name: fn}
		l := &profile.Location{ID: uint64(i + 1), Line: []profile.Line{{Function: f}}}
		p.Function, p.Location = append(p.Function, f), append(p.Location, l)
		var b, tail, v, wb int64
		for _, size := range []int64{32, 16384} {
			w, _ := estimate.WeightedBytes(size, mean)
			b += int64(math.Round(float64(c/2) * w))
			tail += c / 2 * size / 2
			sv, swb := pprofmt.VarianceSums(c/2, size, mean)
			v, wb = v+sv, wb+swb
		}
		s := &profile.Sample{Location: []*profile.Location{l}, Value: []int64{b / 4096, b, 0, 0, c, tail, 0, 0},
			Label: map[string][]string{}, NumLabel: map[string][]int64{pprofmt.LabelMean: {mean}}}
		if marked[fn] {
			s.Value[pprofmt.IndexAllocVar], s.Value[pprofmt.IndexAllocWBound] = v, wb
			s.Label[pprofmt.LabelVarFormat] = []string{pprofmt.VarFormat}
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

// TestDiffVarianceSums: a row whose samples carry the variance sums gets
// an interval as narrow as the events allow and is not conservative; a
// row of old uploads (no label) is read by addMixed and marked; a marked
// sample whose sums saturated is read as an old one.
func TestDiffVarianceSums(t *testing.T) {
	marked := map[string]bool{"pkg.marked": true}
	res, err := Diff(fleetProfile(t, 400, marked), fleetProfile(t, 800, marked), DiffOptions{By: "func"})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]DiffRow{}
	for _, r := range res.Rows {
		rows[r.Key] = r
	}
	m, o := rows["pkg.marked"], rows["pkg.old"]
	if !m.HasRatio || !o.HasRatio || m.Conservative || !o.Conservative || !res.Total.Conservative {
		t.Fatalf("conservative: marked %v, old %v, total %v", m.Conservative, o.Conservative, res.Total.Conservative)
	}
	if wm, wo := m.RatioHi/m.RatioLo, o.RatioHi/o.RatioLo; wm >= wo || wm > 1.5 {
		t.Errorf("hi/lo: with the sums %.3f, without %.3f", wm, wo)
	}
	if !(m.RatioLo < 2 && 2 < m.RatioHi) {
		t.Errorf("marked row [%g, %g] misses 2", m.RatioLo, m.RatioHi)
	}
	sat := fleetProfile(t, 800, marked)
	sat.Sample[0].Value[pprofmt.IndexAllocVar] = pprofmt.VarCap
	res, err = Diff(fleetProfile(t, 400, marked), sat, DiffOptions{By: "func"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		if r.Key == "pkg.marked" && !r.Conservative {
			t.Error("a saturated alloc_var was used")
		}
	}
}

// TestAddKnown: the weight bound is at least the mean and at most
// addMixed's; an aggregate without variance adds exact bytes.
func TestAddKnown(t *testing.T) {
	tests := []struct {
		c, m, b, v, wb float64
		wantWmax       float64
	}{
		{10, 100, 1500, 2e5, 130, 130},
		{10, 100, 1500, 2e5, 1e9, 600}, // bound above b-(c-1)m
		{10, 100, 1500, 2e5, 50, 100},  // never below the mean
		{10, 100, 1500, 0, 130, 0},     // certain events: exact
	}
	for _, tt := range tests {
		var r ratioSums
		r.addKnown(tt.c, tt.m, tt.b, tt.v, tt.wb)
		if r.t != tt.b || r.v != tt.v || r.wmax != tt.wantWmax || r.conservative {
			t.Errorf("addKnown(%v) = %+v, want wmax %g", tt, r, tt.wantWmax)
		}
	}
}
