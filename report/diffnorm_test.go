package report_test

import (
	"bytes"
	"math"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/report"
)

// withPoolGets returns p with its pool_gets comment replaced by one of
// gets arenas handed out over ns nanoseconds.
func withPoolGets(p *profile.Profile, gets uint64, start, ns int64) *profile.Profile {
	q := p.Copy()
	q.Comments = nil
	for _, c := range p.Comments {
		if !strings.HasPrefix(c, pprofmt.PoolGetsCommentPrefix) {
			q.Comments = append(q.Comments, c)
		}
	}
	q.Comments = append(q.Comments, pprofmt.PoolGetsComment(gets, start, ns))
	return q
}

// Normalisation by exact divisors scales each ratio and its interval by
// BASE's divisor over NEW's, tests equal normalised bytes (the interval
// at the confidence 1-P just touches 1), and drives the gate. NEW is BASE's
// workload 1.5 times over (about 1,250 and 1,900 events per type in BASE
// at mean 4096): without normalisation the gate at 1.1 fails (1.5/1.1 is
// 8 standard errors of the log ratio, the gate's bound 5.3 after Holm's
// factor); per request (1,000 and 1,500) it passes unless a bound at
// 1-1e-7 misses, probability at most 1e-7. The false-failure probability
// is below 1e-6.
func TestDiffPerScales(t *testing.T) {
	base := diffProfile(t, 4096, 1, 0, 20000, 2000)
	next := diffProfile(t, 4096, 2, 0, 30000, 3000)
	base = withPoolGets(base, 1000, 0, 2e9)
	next = withPoolGets(next, 1500, 2e9, 3e9)
	const conf = 1 - 1e-7
	diff := func(per string, c float64) *report.DiffResult {
		t.Helper()
		r, err := report.Diff(base, next, report.DiffOptions{Per: per, Confidence: c})
		if err != nil {
			t.Fatalf("per %q: %v", per, err)
		}
		return r
	}
	none := diff("none", conf)
	rawOf := map[string]report.DiffRow{"total": none.Total}
	for _, row := range none.Rows {
		rawOf[row.Key] = row
	}
	for _, tt := range []struct {
		per   string
		scale float64
		div   [2]float64
	}{{"request", 1000.0 / 1500, [2]float64{1000, 1500}}, {"second", 2.0 / 3, [2]float64{2, 3}}} {
		r := diff(tt.per, conf)
		if r.Per != tt.per || r.Divisors != tt.div {
			t.Errorf("per %s: Per %q, Divisors %v; want %v", tt.per, r.Per, r.Divisors, tt.div)
		}
		near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Abs(b) }
		for i, row := range append(r.Rows, r.Total) {
			raw := rawOf[row.Key]
			if !near(row.Ratio, raw.Ratio*tt.scale) || !near(row.RatioLo, raw.RatioLo*tt.scale) ||
				!near(row.RatioHi, raw.RatioHi*tt.scale) || !near(row.NewNorm, float64(row.New.Bytes)/tt.div[1]) {
				t.Errorf("per %s: %s: ratio %g [%g, %g], want the captured %g [%g, %g] times %g",
					tt.per, row.Key, row.Ratio, row.RatioLo, row.RatioHi, raw.Ratio, raw.RatioLo, raw.RatioHi, tt.scale)
			}
			if row.P > 1e-9 && row.P < 0.99 {
				// The interval at 1-P*(1+e) excludes 1, at 1-P*(1-e) it does not.
				for _, e := range []float64{1e-3, -1e-3} {
					rr := diff(tt.per, 1-row.P*(1+e))
					x := append(rr.Rows, rr.Total)[i]
					if excl := x.RatioLo > 1 || x.RatioHi < 1; excl != (e > 0) {
						t.Errorf("per %s: %s: P %g, at confidence %g the interval [%g, %g]", tt.per, row.Key, row.P, 1-row.P*(1+e), x.RatioLo, x.RatioHi)
					}
				}
			}
		}
		if bad := (report.Gate{FailAbove: 1.1}).Failing(r); len(bad) != 0 {
			t.Errorf("per %s: the gate at 1.1 fails on %v", tt.per, bad)
		}
	}
	if bad := (report.Gate{FailAbove: 1.1}).Failing(none); len(bad) != 2 {
		t.Errorf("not normalised: the gate at 1.1 fails on %d groups, want 2", len(bad))
	}
	// Refusals, naming the side.
	var buf bytes.Buffer
	if err := pprof.Lookup("allocs").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	heap, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		per        string
		base, next *profile.Profile
		want       string
	}{
		{"request", base, diffProfile(t, 4096, 3, 0, 10, 0), "the new profile records 0 arenas"},
		{"minute", base, next, `unknown normalisation "minute"`},
		{"second", heap, heap, "the base profile records no window length"},
		{"request", heap, heap, "the base profile records no count of arenas"},
	} {
		_, err := report.Diff(tt.base, tt.next, report.DiffOptions{Per: tt.per, By: "func"})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("per %s: %v, want %q", tt.per, err, tt.want)
		}
	}
}

// Merge keeps the parts' pool_gets comments, which then add up, only when
// every part has one and no two are equal.
func TestMergePoolGets(t *testing.T) {
	a := withPoolGets(diffProfile(t, 4096, 1, 0, 100, 0), 10, 0, 1e9)
	b := withPoolGets(diffProfile(t, 4096, 2, 0, 100, 0), 20, 1e9, 2e9)
	old := a.Copy()
	old.Comments = nil
	for _, tt := range []struct {
		name     string
		parts    []*profile.Profile
		gets, ns int64
		found    bool
	}{
		{"both", []*profile.Profile{a, b}, 30, 3e9, true},
		{"one without", []*profile.Profile{a, old}, 0, 0, false},
		{"one twice", []*profile.Profile{a, a}, 0, 0, false},
	} {
		m, err := report.Merge(tt.parts...)
		if err != nil {
			t.Fatal(err)
		}
		gets, ns, found, err := pprofmt.PoolGetsOf(m)
		if gets != tt.gets || ns != tt.ns || found != tt.found || err != nil {
			t.Errorf("%s: %d arenas over %d ns, %v, %v; want %d over %d, %v", tt.name, gets, ns, found, err, tt.gets, tt.ns, tt.found)
		}
	}
}
