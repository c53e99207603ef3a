package main

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/testkit/workload"
)

// randomStream returns a fixed, non-periodic stream of objects of three
// types with sizes drawn independently from per-type ranges, and its
// per-type totals.
func randomStream(n int) (types []int, sizes []int64, totals []float64) {
	r := rand.New(rand.NewPCG(7, 7))
	lo := []int64{8, 256, 4096}
	hi := []int64{64, 1024, 65536}
	totals = make([]float64, 3)
	for range n {
		t := r.IntN(3)
		s := lo[t] + 8*r.Int64N((hi[t]-lo[t])/8+1)
		types, sizes = append(types, t), append(sizes, s)
		totals[t] += float64(s)
	}
	return types, sizes, totals
}

// TestUnbiased checks that arenaprof's weighted estimate and Go's scaled
// estimate are unbiased per type on a non-periodic stream: over R
// independent sampler seeds, the mean estimate is within 6 standard errors
// of the truth, with the standard error from the exact variance of each
// estimator on this stream (sum over objects of s^2 (1-P)/P, P the
// probability that an object of size s is sampled). By the central limit
// theorem each of the 6 checks fails by chance with probability about
// 2e-9, so the test's false-failure probability is below 1.2e-8.
func TestUnbiased(t *testing.T) {
	const mean = 102400
	n, reps := 40000, 400
	if testing.Short() {
		n, reps = 20000, 200
	}
	types, sizes, totals := randomStream(n)
	pAP := func(s int64) float64 { return -math.Expm1(float64(s) * math.Log1p(-1.0/mean)) }
	pGo := func(s int64) float64 { return -math.Expm1(-float64(s) / mean) }
	varAP, varGo := make([]float64, 3), make([]float64, 3)
	for i, s := range sizes {
		fs := float64(s)
		varAP[types[i]] += fs * fs * (1 - pAP(s)) / pAP(s)
		varGo[types[i]] += fs * fs * (1 - pGo(s)) / pGo(s)
	}
	sumAP, sumGo := make([]float64, 3), make([]float64, 3)
	for rep := range reps {
		ap, err := newRandomized(mean, 3, uint64(rep), 1)
		if err != nil {
			t.Fatal(err)
		}
		ge := newGoExp(mean, 3, uint64(rep), 2)
		for i, s := range sizes {
			if err := ap.observe(types[i], s); err != nil {
				t.Fatal(err)
			}
			ge.observe(types[i], s)
		}
		for ty := range 3 {
			sumAP[ty] += ap.est[ty]
			sumGo[ty] += ge.est[ty]
		}
	}
	for ty := range 3 {
		for _, c := range []struct {
			name    string
			sum, vr float64
		}{{"arenaprof", sumAP[ty], varAP[ty]}, {"go", sumGo[ty], varGo[ty]}} {
			m := c.sum / float64(reps)
			se := math.Sqrt(c.vr / float64(reps))
			if math.Abs(m-totals[ty]) > 6*se {
				t.Errorf("%s, type %d: mean estimate %.0f, truth %.0f, 6 standard errors %.0f", c.name, ty, m, totals[ty], 6*se)
			}
		}
	}
}

// TestStrideBias checks that fixed-stride sampling is deterministic and
// wrong on the periodic workload (every tick lands on the same position of
// the pattern), while arenaprof's estimates on the same stream are within
// 6 standard deviations of the truth in a single run (false-failure
// probability about 2e-9 per type by the normal approximation, each type
// having about 250 samples or more).
func TestStrideBias(t *testing.T) {
	w := workload.Periodic()
	cfg := config{runs: 1, seed: 1, mean: 102400, stride: 102400, confidence: 0.95, window: estimate.WindowEnd}
	res, err := runOnce(cfg, w, 1)
	if err != nil {
		t.Fatal(err)
	}
	q := 1 - 1.0/102400
	for ty, typ := range w.Types {
		truth := float64(w.Totals[ty])
		stride := res.est[2][ty]
		if math.Abs(stride-truth)/truth < 0.5 {
			t.Errorf("fixed stride on %s: estimate %.0f is within 50%% of the truth %.0f", typ.Name, stride, truth)
		}
		s := float64(typ.MinSize)
		sd := math.Sqrt(float64(w.Objects[ty]) * s * s * math.Pow(q, s) / (1 - math.Pow(q, s)))
		if ap := res.est[0][ty]; math.Abs(ap-truth) > 6*sd {
			t.Errorf("arenaprof on %s: estimate %.0f, truth %.0f, 6 sd %.0f", typ.Name, ap, truth, 6*sd)
		}
	}
	// The ticks land on the last point of the pattern: points get every
	// tick, so their estimate is the whole total.
	if got, want := res.est[2][2], float64(w.TotalBytes()); got != want {
		t.Errorf("fixed stride estimate of main.point = %.0f, want %.0f", got, want)
	}
	again, err := runOnce(cfg, w, 99)
	if err != nil {
		t.Fatal(err)
	}
	for ty := range w.Types {
		if again.est[2][ty] != res.est[2][ty] {
			t.Errorf("fixed stride changed with the seed on a fixed stream")
		}
	}
}

// TestRunJSON runs a short study (-runs 20) with -json and -plot and
// checks the shape of the output.
func TestRunJSON(t *testing.T) {
	png := filepath.Join(t.TempDir(), "a.png")
	var out, errOut bytes.Buffer
	if err := run([]string{"-runs", "20", "-json", "-plot", png}, &out, &errOut); err != nil {
		t.Fatalf("run: %v (%s)", err, errOut.String())
	}
	var rep struct {
		Runs      int `json:"runs"`
		Workloads map[string]struct {
			TrueBytes     map[string]int64 `json:"true_bytes"`
			CoverageError string           `json:"coverage_error"`
			Schemes       map[string]map[string]map[string]float64
		} `json:"workloads"`
	}
	dec := json.NewDecoder(&out)
	if err := dec.Decode(&rep); err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 20 || len(rep.Workloads) != 3 {
		t.Fatalf("runs %d, %d workloads", rep.Runs, len(rep.Workloads))
	}
	for _, name := range []string{"periodic", "mixed", "requests"} {
		w, ok := rep.Workloads[name]
		if !ok {
			t.Fatalf("workload %s missing", name)
		}
		if len(w.Schemes) != len(schemeNames) {
			t.Errorf("%s: %d schemes, want %d", name, len(w.Schemes), len(schemeNames))
		}
		for scheme, types := range w.Schemes {
			if len(types) != len(w.TrueBytes) {
				t.Errorf("%s/%s: %d types, want %d", name, scheme, len(types), len(w.TrueBytes))
			}
			for ty, st := range types {
				for _, k := range []string{"median_rel_err", "p95_rel_err"} {
					if v, ok := st[k]; !ok || v < 0 || math.IsNaN(v) {
						t.Errorf("%s/%s/%s: %s = %v, %v", name, scheme, ty, k, v, ok)
					}
				}
				c, hasCov := st["coverage"]
				switch {
				case scheme != schemeArenaprof && hasCov:
					t.Errorf("%s/%s/%s has a coverage", name, scheme, ty)
				case scheme == schemeArenaprof && w.CoverageError == "" && (!hasCov || c < 0 || c > 1):
					t.Errorf("%s/%s/%s: coverage %v, %v", name, scheme, ty, c, hasCov)
				}
			}
		}
	}
	if fi, err := os.Stat(png); err != nil || fi.Size() < 1000 {
		t.Errorf("plot: %v, %v", fi, err)
	}
}

func TestRunTable(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-runs", "2", "-workloads", "periodic", "-window", "both"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### periodic", "| `main.point` |", `window "both"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunRejects(t *testing.T) {
	for _, args := range [][]string{
		{"-runs", "0"},
		{"-runs", "-5"},
		{"-runs", "2000000"},
		{"-window", "middle"},
		{"-workloads", "nope"},
		{"-runs", "1", "-plot", "a.svg"},
		{"extra"},
	} {
		var out bytes.Buffer
		if err := run(args, &out, &out); err == nil {
			t.Errorf("run(%q) succeeded", args)
		}
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct{ q, want float64 }{{0.5, 5}, {0.95, 10}, {0.1, 1}, {0, 1}, {1, 10}} {
		if got := quantile(xs, c.q); got != c.want {
			t.Errorf("quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
}

func FuzzParseWindow(f *testing.F) {
	for _, s := range []string{"aligned", "start", "end", "both", "", "END", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := parseWindow(s)
		if err == nil && w > estimate.WindowBoth {
			t.Fatalf("parseWindow(%q) = %d", s, w)
		}
	})
}
