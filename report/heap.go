package report

import (
	"fmt"
	"math"

	"github.com/google/pprof/profile"
	"gonum.org/v1/gonum/mathext"

	"github.com/arenaprof/arenaprof/internal/goheap"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// The Go heap model.
//
// The runtime samples heap allocations with a Poisson process over bytes:
// each allocation of S bytes (its size class, or its pages for a large
// object) is sampled with probability p(S) = 1-exp(-S/R), R being
// runtime.MemProfileRate, independently of every other allocation. It keeps
// one record per (stack, size) with the raw numbers of sampled objects and
// bytes, and runtime/pprof writes each record's values scaled by
// 1/p(S) = w(S)/S, truncated to integers, with the size as the numeric
// label "bytes". So the raw count c of a sample is recovered exactly from
// its values (floor(c*k) is strictly increasing in c for k >= 1), and the
// estimate of a group is the sum of its values, as go tool pprof shows it.
//
// The interval of a group whose C sampled objects have sizes up to M:
//
//   - Lower bound: max(sum of c*S over its samples, R*lambdaLo(C)). The
//     sampled objects exist, so their bytes are certain. And C is at most
//     the number of points of the Poisson process in the group's bytes B,
//     which is Poisson(B/R), so the Poisson lower bound lambdaLo(C) at
//     alpha/2 (P(Poisson(lambdaLo) >= C) = alpha/2) is conservative.
//   - Upper bound: w(M)*lambdaHi(C) + R*ln(1/alpha2). Objects of at most M
//     bytes are each sampled with probability at least S/w(M) (w(S) =
//     S/p(S) grows with S), so C dominates a Poisson-binomial count of mean
//     B'/w(M), B' their bytes, whose lower tail is below Poisson's
//     (Hoeffding; Anderson and Samuels): lambdaHi(C) at alpha1
//     (P(Poisson(lambdaHi) <= C) = alpha1) bounds B'/w(M). The objects
//     larger than every sampled one were all missed; the probability that
//     more than A bytes of the largest objects were all missed is at most
//     exp(-A/R), so A = R*ln(1/alpha2) bounds them. alpha1 = alpha2 =
//     alpha/4.
//
// The profile does not record the tail of each sample (where in the
// object the process fired), which is why the upper bound needs the
// largest size, and why sizes never sampled get the allowance of the
// second term: a heap profile cannot rule out that much unseen memory.
// With R = 1 every allocation is recorded and the interval is the exact
// value.

// heapSums are the Go heap part of a group.
type heapSums struct {
	count, countHi int64 // raw sampled objects: count <= true count <= countHi
	certain        int64 // bytes of the sampled objects themselves
	maxSize        int64 // the largest sampled object size
	rate           int64 // runtime.MemProfileRate; 0 if the group has none
}

// add adds a sample of raw count in [c, cHi] objects of size bytes drawn
// at rate.
func (h *heapSums) add(c, cHi, size, rate int64, err *error) {
	if h.rate != 0 && h.rate != rate {
		if *err == nil {
			*err = fmt.Errorf("report: Go heap samples drawn at different MemProfileRates (%d and %d) cannot be grouped", h.rate, rate)
		}
		return
	}
	h.rate = rate
	addChecked(&h.count, c, err)
	addChecked(&h.countHi, cHi, err)
	if c > 0 && size > 0 && c > math.MaxInt64/size {
		if *err == nil {
			*err = errOverflow
		}
		return
	}
	addChecked(&h.certain, c*size, err)
	h.maxSize = max(h.maxSize, size)
}

// interval returns the bounds on the group's true bytes at confidence conf
// (see the model above).
func (h *heapSums) interval(conf float64) (lo, hi float64, err error) {
	alpha := 1 - conf
	if h.rate == 1 { // every allocation recorded
		return float64(h.certain), float64(h.certain), nil
	}
	r := float64(h.rate)
	lo = float64(h.certain)
	if h.count > 0 {
		l, err := poissonLo(h.count, alpha/2)
		if err != nil {
			return 0, 0, err
		}
		lo = max(lo, r*l)
	}
	u, err := poissonHi(h.countHi, alpha/4)
	if err != nil {
		return 0, 0, err
	}
	w := r // w(S) -> R as S -> 0: the bound for a group with no samples
	if h.maxSize > 0 {
		w = goheap.Weight(h.maxSize, h.rate)
	}
	hi = w*u + r*math.Log(4/alpha)
	return lo, max(hi, lo), nil
}

// poissonHi returns lambda with P(Poisson(lambda) <= c) = a: the upper
// confidence bound on a Poisson mean after c events.
func poissonHi(c int64, a float64) (float64, error) {
	x := mathext.GammaIncRegCompInv(float64(c)+1, a)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("report: Poisson upper bound for %d events did not converge", c)
	}
	// Never anti-conservative: nudge up until the tail is at most a.
	for i := 0; i < 64 && mathext.GammaIncRegComp(float64(c)+1, x) > a; i++ {
		x = math.Nextafter(x*(1+1e-12), math.Inf(1))
	}
	return x, nil
}

// poissonLo returns lambda with P(Poisson(lambda) >= c) = a, c >= 1: the
// lower confidence bound on a Poisson mean after c events.
func poissonLo(c int64, a float64) (float64, error) {
	x := mathext.GammaIncRegInv(float64(c), a)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("report: Poisson lower bound for %d events did not converge", c)
	}
	for i := 0; i < 64 && x > 0 && mathext.GammaIncReg(float64(c), x) > a; i++ {
		x = math.Nextafter(x*(1-1e-12), 0)
	}
	return x, nil
}

// isGoHeap reports whether p is a heap or allocs profile as runtime/pprof
// writes it: the four alloc/inuse sample types and no arenaprof raw sums.
func isGoHeap(p *profile.Profile) bool {
	want := map[string]string{"alloc_objects": "count", "alloc_space": "bytes", "inuse_objects": "count", "inuse_space": "bytes"}
	if len(p.SampleType) != len(want) {
		return false
	}
	for _, st := range p.SampleType {
		if want[st.Type] != st.Unit {
			return false
		}
	}
	return true
}

// heapIndexes returns the value positions of alloc_objects, alloc_space,
// inuse_objects and inuse_space.
func heapIndexes(p *profile.Profile) [4]int {
	var idx [4]int
	for j, st := range p.SampleType {
		switch st.Type {
		case "alloc_objects":
			idx[0] = j
		case "alloc_space":
			idx[1] = j
		case "inuse_objects":
			idx[2] = j
		case "inuse_space":
			idx[3] = j
		}
	}
	return idx
}

// isHeapSample reports whether s is a Go heap sample of a combined memory
// profile.
func isHeapSample(s *profile.Sample) bool {
	v := s.Label[pprofmt.LabelMemory]
	return len(v) > 0 && v[0] == pprofmt.MemoryHeap
}
