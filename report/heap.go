package report

import (
	"fmt"
	"maps"
	"math"

	"github.com/google/pprof/profile"

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
// The interval of a group (internal/goheap.Interval has the details):
// each object size is a stratum with its own raw count, binomial with the
// size's sampling probability; the strata are combined by Fay and Feuer's
// gamma interval for weighted sums of counts, with the binomial variance
// (objects far above R are certain, tiny ones Poisson at weight R) and a
// continuity allowance of one event at weight R, which also covers sizes
// never sampled. No size is charged at another's weight and alpha is not
// split across strata. Both bounds are conditional on the group having at
// least one sample (a row is shown only then), and the lower bound is
// never below the bytes of the sampled objects: for a row with one sample
// it is exactly those bytes.
//
// The profile does not record the tail of each sample (where in the
// object the process fired), so sizes never sampled get the allowance: a
// heap profile cannot rule out a few times R bytes of unseen memory at
// any site. With R = 1 every allocation is recorded and the interval is
// the exact value.

// heapSums are the Go heap part of a group: raw counts by object size.
type heapSums struct {
	count, countHi map[int64]int64 // by size: count <= true count <= countHi
	rate           int64           // runtime.MemProfileRate; 0 if the group has none
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
	if c > 0 && size > 0 && cHi > math.MaxInt64/size {
		if *err == nil {
			*err = errOverflow
		}
		return
	}
	if h.count == nil {
		h.count, h.countHi = map[int64]int64{}, map[int64]int64{}
	}
	n, nHi := h.count[size], h.countHi[size]
	addChecked(&n, c, err)
	addChecked(&nHi, cHi, err)
	h.count[size], h.countHi[size] = n, nHi
}

// strata returns the group's sampled objects by size, sizes ascending:
// the lower counts (hi false) or the upper ones (hi true, which differ
// only for in-use samples whose count is bounded, or rates below 129).
// Each stratum's count is Binomial(true objects of that size, 1-exp(-size/rate)).
func (h *heapSums) strata(hi bool) []goheap.Stratum {
	if hi {
		return goheap.Strata(h.countHi)
	}
	return goheap.Strata(h.count)
}

// interval returns the bounds on the group's true bytes at confidence conf
// (see the model above).
func (h *heapSums) interval(conf float64) (lo, hi float64, err error) {
	lo, hi, err = goheap.Interval(h.strata(false), h.rate, conf)
	if err != nil {
		return 0, 0, err
	}
	if !maps.Equal(h.count, h.countHi) {
		_, hi, err = goheap.Interval(h.strata(true), h.rate, conf)
		if err != nil {
			return 0, 0, err
		}
	}
	return lo, max(lo, hi), nil
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
