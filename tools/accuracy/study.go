package main

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/testkit/workload"
)

// config is what one study compares.
type config struct {
	runs       int
	seed       uint64
	mean       int64 // arenaprof's mean and Go's rate, bytes
	stride     int64 // AllocationTick's stride, bytes
	confidence float64
	window     estimate.Window
	workers    int
}

// runResult is one run of one workload: per scheme, per type estimates,
// and arenaprof's per-type intervals.
type runResult struct {
	est     [4][]float64 // indexed like schemeNames
	samples []int64      // arenaprof's events per type
	lo, hi  []float64    // arenaprof's interval per type
	ivErr   error        // set when the intervals could not be computed
}

// splitmix returns a well-mixed 64-bit value derived from x.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// runOnce feeds one seeded stream of w to the three schemes.
func runOnce(cfg config, w *workload.Workload, seed uint64) (runResult, error) {
	nt := len(w.Types)
	ap, err := newRandomized(cfg.mean, nt, splitmix(seed^0xa1), splitmix(seed^0xa2))
	if err != nil {
		return runResult{}, err
	}
	fs := newStride(cfg.stride, nt)
	ge := newGoExp(cfg.mean, nt, splitmix(seed^0xb1), splitmix(seed^0xb2))
	var total int64
	for a := range w.Stream(seed) {
		total += a.Size
		if err := ap.observe(a.Type, a.Size); err != nil {
			return runResult{}, err
		}
		fs.observe(a.Type, a.Size)
		ge.observe(a.Type, a.Size)
	}
	res := runResult{
		est:     [4][]float64{ap.est, ge.est, fs.estimates(total), fs.amountEstimates(total)},
		samples: ap.samples,
		lo:      make([]float64, nt),
		hi:      make([]float64, nt),
	}
	for t := range nt {
		iv, err := estimate.SingleMeanInterval(ap.samples[t], ap.tail[t], cfg.mean, cfg.confidence, cfg.window)
		if err != nil {
			res.ivErr = err
			break
		}
		res.lo[t], res.hi[t] = iv.Lo, iv.Hi
	}
	return res, nil
}

// typeStats summarizes one type under one scheme over all runs.
type typeStats struct {
	MedianRelErr float64  `json:"median_rel_err"`
	P95RelErr    float64  `json:"p95_rel_err"`
	Coverage     *float64 `json:"coverage,omitempty"`
}

// workloadStats holds a workload's summary: per scheme, per type.
type workloadStats struct {
	w *workload.Workload
	// stats[scheme][type]
	stats [4][]typeStats
	// meanSamples is arenaprof's average number of events per type.
	meanSamples []float64
	// coverageErr is why coverage is missing, if it is.
	coverageErr error
}

// quantile returns the q-quantile of sorted xs by the nearest-rank rule.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	k := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(k, len(sorted)-1))]
}

// study runs every workload cfg.runs times with seeds cfg.seed,
// cfg.seed+1, ... and summarizes the per-type relative errors.
func study(cfg config, ws []*workload.Workload) ([]workloadStats, error) {
	if cfg.runs < 1 {
		return nil, fmt.Errorf("runs must be at least 1, got %d", cfg.runs)
	}
	workers := cfg.workers
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	out := make([]workloadStats, len(ws))
	for wi, w := range ws {
		results := make([]runResult, cfg.runs)
		errs := make([]error, cfg.runs)
		var wg sync.WaitGroup
		next := make(chan int)
		for range workers {
			wg.Go(func() {
				for i := range next {
					results[i], errs[i] = runOnce(cfg, w, cfg.seed+uint64(i))
				}
			})
		}
		for i := range cfg.runs {
			next <- i
		}
		close(next)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				return nil, fmt.Errorf("%s, run %d: %w", w.Name, i, err)
			}
		}
		out[wi] = summarize(w, results)
	}
	return out, nil
}

func summarize(w *workload.Workload, results []runResult) workloadStats {
	nt := len(w.Types)
	ws := workloadStats{w: w, meanSamples: make([]float64, nt)}
	for _, r := range results {
		if r.ivErr != nil {
			ws.coverageErr = r.ivErr
			break
		}
	}
	errs := make([]float64, len(results))
	for s := range schemeNames {
		ws.stats[s] = make([]typeStats, nt)
		for t := range nt {
			truth := float64(w.Totals[t])
			covered := 0
			for i, r := range results {
				errs[i] = math.Abs(r.est[s][t]-truth) / truth
				if r.lo[t] <= truth && truth <= r.hi[t] {
					covered++
				}
			}
			slices.Sort(errs)
			st := typeStats{MedianRelErr: quantile(errs, 0.5), P95RelErr: quantile(errs, 0.95)}
			if schemeNames[s] == schemeArenaprof && ws.coverageErr == nil {
				c := float64(covered) / float64(len(results))
				st.Coverage = &c
			}
			ws.stats[s][t] = st
		}
	}
	for _, r := range results {
		for t := range nt {
			ws.meanSamples[t] += float64(r.samples[t]) / float64(len(results))
		}
	}
	return ws
}
