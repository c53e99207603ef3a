package heapcheck

import (
	"math"
	"os"
	"runtime"
	"testing"

	"github.com/arenaprof/arenaprof/internal/testkit/binom"

	"github.com/arenaprof/arenaprof/report"
)

// TestGoHeapBias runs the bias workload (12 sites, 8 B to 40 KiB, about
// 32 MiB each: 384 MiB per run) in child processes at MemProfileRate 512
// on the real runtime and reads every run's allocs profile as a user
// would: the estimates of the sites and of their total must be unbiased
// under the sampler rule of this runtime, where runtime/pprof's values
// (Go 1.24 and later) are about 0.11% low for the total and 0.17% for the
// sites of 256 bytes or less (tools/heapbias measures it more precisely;
// ACCURACY.md quotes it).
//
// False failure: each mean is compared with max(0.04%, 6.1 standard
// errors). The standard error is estimated from the 60 runs, so an
// unbiased mean reads beyond 6.1 of them with Student's t (59 degrees of
// freedom) tail: 8.8e-8 (5.3 of them, as before, gave 1.8e-6 each: the
// normal tail, 1.2e-7, forgot the estimate). The coverage of the total's
// 95% interval is compared with binom.Min(60, 0.95, 1e-7) = 45 runs
// (1e-7; the normal bound 0.95 - 5.3·sqrt(0.95·0.05/runs) it replaces,
// 49 runs, failed with the binomial's probability 3.6e-5), the diff's
// alarms with 10 (1.1e-7, see diffTotalAlarm). Power: runtime/pprof's
// bias of -0.11% reads 8.8 to 9.5 standard errors (about 0.012%) from
// zero under the go1.23 weights; the test checks that they read beyond 3,
// which fails falsely with probability 1.1e-8 at 8.8 (beyond 5.3, as
// before, it failed on 1e-4 to 8e-4 of runs: the mean's own spread and
// its estimated standard error's left too little room). Below 5e-7 in
// all.
func TestGoHeapBias(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 60 runs of 384 MiB of allocations in child processes (about 50 s on 2 cores)")
	}
	const runs, perSite = 60, 32 << 20
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	truth := Truth(perSite)
	var total, small, oldTotal Summary
	var prev []byte
	diffAlarms := 0
	for i := range runs {
		data, err := Child(exe, []string{"-test.run=^$"}, 512, "sites", perSite, t.TempDir(), i)
		if err != nil {
			t.Fatal(err)
		}
		now, _, err := Read(data, truth, report.TableOptions{Confidence: 0.95})
		if err != nil {
			t.Fatal(err)
		}
		old, _, err := Read(data, truth, report.TableOptions{Confidence: 0.95, GoVersion: "go1.23"})
		if err != nil {
			t.Fatal(err)
		}
		total.Add(now["total"])
		small.Add(Small(now))
		oldTotal.Add(old["total"])
		if i%2 == 1 { // disjoint pairs: independent runs
			if diffAlarms += diffTotalAlarm(t, truth, prev, data); diffAlarms > 10 {
				t.Fatalf("diff of two runs flagged the total %d times", diffAlarms)
			}
		}
		prev = data
	}
	check := func(name string, s *Summary, tol float64) {
		m, se := s.Bias()
		limit := max(tol, 6.1*se)
		t.Logf("%s: bias %+.4f%% ± %.4f%% over %d runs (limit ±%.4f%%); runtime/pprof's values %+.4f%%",
			name, 100*m, 100*se, s.Runs, 100*limit, 100*mustPprof(s))
		if math.Abs(m) > limit {
			t.Errorf("%s: bias %+.4f%% beyond ±%.4f%%", name, 100*m, 100*limit)
		}
	}
	check("total", &total, 0.0004)
	check("sites of 256 B or less", &small, 0.0005)
	t.Logf("total: 95%% intervals held the truth in %d of %d runs (go1.23 weights: %d)", total.Covered, runs, oldTotal.Covered)
	if need := binom.Min(runs, 0.95, 1e-7); total.Covered < need {
		t.Errorf("total: 95%% intervals held the truth in %d of %d runs, below %d", total.Covered, runs, need)
	}
	if m, se := oldTotal.Bias(); math.Abs(m) <= 3*se {
		t.Errorf("the test cannot see runtime/pprof's bias: go1.23 weights read %+.4f%% ± %.4f%%", 100*m, 100*se)
	}
	t.Logf("diff of %d pairs of runs: the total flagged %d times", runs/2, diffAlarms)
}

// mustPprof is the mean relative error of runtime/pprof's values.
func mustPprof(s *Summary) float64 { m, _ := s.PprofBias(); return m }

// diffTotalAlarm returns 1 if report.Diff flags the total of the sites of
// two runs at 95%. Over 30 independent pairs, more than 10 alarms has
// probability below 2e-7 at a false-alarm rate of 5%.
func diffTotalAlarm(t *testing.T, truth map[string]int64, a, b []byte) int {
	t.Helper()
	pa, _, err := SitesProfile(a, truth)
	if err != nil {
		t.Fatal(err)
	}
	pb, _, err := SitesProfile(b, truth)
	if err != nil {
		t.Fatal(err)
	}
	res, err := report.Diff(pa, pb, report.DiffOptions{By: "func", Confidence: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total.Significant {
		return 1
	}
	return 0
}

// TestGoHeapBiasMemory: the same workload written as a combined memory
// profile (export.BuildMemory, as /debug/arenaprof/memory serves it): the
// profile names this runtime's Go release, the table says so and weighs by
// its rule, and the sites' total is unbiased. 12 runs: the mean is
// compared with max(0.04%, 12.2 standard errors), the standard error
// estimated from the 12 runs: an unbiased mean reads beyond it with
// Student's t (11 degrees of freedom) tail, 9.8e-8. At 5.3 standard
// errors, as before, that tail is 2.5e-4, not the normal 1.2e-7. The
// wider limit (about 0.33% instead of 0.14%) still fails a weighting off
// by a factor; the rule itself is checked directly (res.HeapSampler), and
// TestGoHeapBias tells the go1.24 rule from the go1.23 one.
func TestGoHeapBiasMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 12 runs of 384 MiB of allocations in child processes")
	}
	const runs, perSite = 12, 32 << 20
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	truth := Truth(perSite)
	var total Summary
	for i := range runs {
		data, err := Child(exe, []string{"-test.run=^$"}, 512, "memory", perSite, t.TempDir(), i)
		if err != nil {
			t.Fatal(err)
		}
		now, res, err := Read(data, truth, report.TableOptions{Confidence: 0.95})
		if err != nil {
			t.Fatal(err)
		}
		if res.HeapGoVersion != runtime.Version() || res.HeapSampler != "go1.24" || res.GoHeap {
			t.Fatalf("combined profile read as Go heap %v, sampler %q of %q; want go1.24 of %q", res.GoHeap, res.HeapSampler, res.HeapGoVersion, runtime.Version())
		}
		total.Add(now["total"])
	}
	m, se := total.Bias()
	limit := max(0.0004, 12.2*se)
	t.Logf("combined memory profile, total: bias %+.4f%% ± %.4f%% (limit ±%.4f%%); runtime/pprof's values %+.4f%%", 100*m, 100*se, 100*limit, 100*mustPprof(&total))
	if math.Abs(m) > limit {
		t.Errorf("total: bias %+.4f%% beyond ±%.4f%%", 100*m, 100*limit)
	}
}

// TestGoHeapWorstOrder: 8-byte objects each allocated right after a
// 4096-byte one, which MemProfileRate 512 samples almost surely: the
// 8-byte objects are read about 12.4% low by runtime/pprof's values and
// 12.3% low by the go1.24 weights (the loss lands on them alone), while
// the total of the two sites, and the 8-byte site with AnyOrder, hold
// the truth. One run of a million pairs; intervals at 1-1e-7 (three:
// false failure below 1e-6).
func TestGoHeapWorstOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a child process allocating 4 GiB")
	}
	const pairs = 1000000
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := Child(exe, []string{"-test.run=^$"}, 512, "after", pairs, t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	truth := map[string]int64{AfterBig: pairs * 4096, AfterSample: pairs * 8}
	const conf = 1 - 1e-7
	now, _, err := Read(data, truth, report.TableOptions{Confidence: conf})
	if err != nil {
		t.Fatal(err)
	}
	anyOrder, _, err := Read(data, truth, report.TableOptions{Confidence: conf, AnyOrder: true})
	if err != nil {
		t.Fatal(err)
	}
	s, a, tot := now[AfterSample], anyOrder[AfterSample], now["total"]
	t.Logf("8-byte site: true %.0f, runtime/pprof %.0f (%+.2f%%), estimate %.0f (%+.2f%%) in [%.0f, %.0f]; any order [%.0f, %.0f]",
		s.Truth, s.Pprof, 100*(s.Pprof/s.Truth-1), s.Est, 100*(s.Est/s.Truth-1), s.Lo, s.Hi, a.Lo, a.Hi)
	t.Logf("total: true %.0f, estimate %.0f in [%.0f, %.0f]", tot.Truth, tot.Est, tot.Lo, tot.Hi)
	if !tot.Covered() {
		t.Errorf("the total's interval [%.0f, %.0f] misses %.0f", tot.Lo, tot.Hi, tot.Truth)
	}
	if !a.Covered() {
		t.Errorf("the 8-byte site's any-order interval [%.0f, %.0f] misses %.0f", a.Lo, a.Hi, a.Truth)
	}
}
