package report

import (
	"errors"
	"github.com/arenaprof/arenaprof/internal/estimate"

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
// runtime.MemProfileRate, independently of every other allocation (Go
// 1.23's rule; from Go 1.24 the allocation after a sample is sampled as if
// one byte shorter, and the weights and intervals follow the rule of the
// runtime that wrote the profile: internal/goheap.Rule, setRule below). It keeps
// one record per (stack, size) with the raw numbers of sampled objects and
// bytes, and runtime/pprof writes each record's values scaled by
// 1/p(S) = w(S)/S, truncated to integers, with the size as the numeric
// label "bytes". So the raw count c of a sample is recovered exactly from
// its values (floor(c*k) is strictly increasing in c for k >= 1). Under
// Go 1.23's rule the estimate of a group is the sum of its values, as go
// tool pprof shows it; under Go 1.24's it is the sum of c times the rule's
// weight, above those values by about one byte per sample.
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
	m              *heapModel
	total          bool            // the total of the profile (goheap.Total bounds)
	count, countHi map[int64]int64 // by size: count <= true count <= countHi
	rate           int64           // runtime.MemProfileRate; 0 if the group has none
}

func (h *heapSums) add(c contribution, err *error) {
	h.addCount(c.samples, c.samplesHi, c.size, c.rate, err)
}

// addCount adds a sample of raw count in [c, cHi] objects of size bytes
// drawn at rate.
func (h *heapSums) addCount(c, cHi, size, rate int64, err *error) {
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
func (h *heapSums) interval(row *TableRow, conf float64) (lo, hi float64, err error) {
	if h.rate == 0 {
		// No sample (the total of a profile with nothing in use): the
		// bound of zero events at a mean of MemProfileRate, an allowance
		// for what the runtime may have allocated unsampled.
		empty := &arenaModel{period: h.m.rate, window: h.m.window}
		return empty.newArenaSums().interval(row, conf)
	}
	b := goheap.Group
	switch {
	case h.total:
		b = goheap.Total
	case h.m.anyOrder:
		b = goheap.AnyOrder
	}
	lo, hi, err = goheap.Interval(h.strata(false), h.rate, h.m.rule, b, conf)
	if err == nil && !maps.Equal(h.count, h.countHi) {
		_, hi, err = goheap.Interval(h.strata(true), h.rate, h.m.rule, b, conf)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("report: interval of group %q: %v", row.Key, err)
	}
	return lo, max(lo, hi), nil
}

// ratioAllowance is 0: the extra event of the ratio test is at the
// group's largest weight, which covers sizes never sampled.
func (h *heapSums) ratioAllowance() float64 { return 0 }

func (h *heapSums) memProfileRate() int64 { return h.rate }

// heapModel reads the samples of a Go heap profile, or the Go heap samples
// of a combined memory profile.
type heapModel struct {
	idx   [4]int // value positions of alloc_objects, alloc_space, inuse_objects, inuse_space
	rate  int64  // the profile's MemProfileRate (its Period); 0 in a combined profile
	inuse bool
	// rawAlloc is the value position of the raw alloc count the exporter
	// records in a combined profile; -1 for a runtime profile, whose raw
	// counts are recovered from its scaled values.
	rawAlloc int
	// merged says the profile keeps the raw counts of a merge, at the
	// value positions raw (pprofmt.Facts.HeapRaw).
	merged bool
	raw    [pprofmt.NumHeapRawTypes]int
	window estimate.Window // the window marking, for a group without samples
	// rule is the sampler's rule, goVersion the Go release it was chosen
	// by ("" if none was named), anyOrder TableOptions.AnyOrder.
	rule      goheap.Rule
	goVersion string
	anyOrder  bool
}

// errMergedValues is the error of a merged Go heap sample whose raw count
// a part's values did not give (see Merge).
var errMergedValues = errors.New("a Go heap sample's values in one of the merged profiles match no raw count at its MemProfileRate (negative, without an object size, or written by another tool or scaled); read the profiles apart to find it")

func (m *heapModel) newSums(total bool) sums { return &heapSums{m: m, total: total} }

func (m *heapModel) unseenHi(float64) (float64, error) { return 0, nil }

// isHeapSample reports whether s is a Go heap sample of a combined memory
// profile.
func isHeapSample(s *profile.Sample) bool {
	v := s.Label[pprofmt.LabelMemory]
	return len(v) > 0 && v[0] == pprofmt.MemoryHeap
}

// read reads a Go heap sample: of a runtime heap profile (the raw count
// is recovered from the scaled values) or of a combined memory profile
// (the raw alloc count the exporter recorded).
func (m *heapModel) read(s *profile.Sample) (c contribution, skip bool, err error) {
	hidx, inuse := m.idx, m.inuse
	c.heap = true
	c.rate = m.rate
	if l := s.NumLabel[pprofmt.LabelHeapRate]; len(l) > 0 {
		c.rate = l[0]
	}
	if c.rate <= 0 {
		return c, false, fmt.Errorf("report: a Go heap profile written with MemProfileRate %d samples nothing; set runtime.MemProfileRate above 0 before allocating", c.rate)
	}
	c.size, _ = firstNumLabel(s, pprofmt.LabelBytes)
	ao, ab := s.Value[hidx[0]], s.Value[hidx[1]]
	io, ib := s.Value[hidx[2]], s.Value[hidx[3]]
	switch {
	case m.merged:
		// Merged: the raw counts of the parts, summed (see Merge).
		c.objects, c.bytes = ao, ab
		lo, hi := m.raw[pprofmt.IndexHeapAllocRaw], m.raw[pprofmt.IndexHeapAllocRawHi]
		if inuse {
			c.objects, c.bytes = io, ib
			lo, hi = m.raw[pprofmt.IndexHeapInUseRaw], m.raw[pprofmt.IndexHeapInUseRawHi]
		}
		c.samples, c.samplesHi = s.Value[lo], s.Value[hi]
		if c.samples < 0 || c.samplesHi < c.samples {
			err = errMergedValues
		}
	case inuse:
		c.objects, c.bytes = io, ib
		c.samples, c.samplesHi, err = goheap.RawCount(io, ib, c.size, c.rate)
	default:
		c.objects, c.bytes = ao, ab
		if m.rawAlloc >= 0 {
			c.samples = s.Value[m.rawAlloc]
			c.samplesHi = c.samples
		} else {
			c.samples, c.samplesHi, err = goheap.RawCount(ao, ab, c.size, c.rate)
		}
	}
	if err != nil {
		return c, false, fmt.Errorf("report: %w", err)
	}
	if c.size <= 0 && c.samples > 0 {
		c.size = max(1, int64(math.Round(float64(ab)/float64(max(ao, 1)))))
	}
	if c.bytes == 0 && c.objects == 0 && c.samples == 0 {
		return c, true, nil
	}
	// The ratio test: a sample with bytes but no count or size counts as
	// one event of unknown size, the most uncertain reading.
	if c.samples <= 0 || c.size <= 0 {
		if c.bytes > 0 {
			c.ratio = ratioTerms{ok: true, mixed: true, cLo: 1, cHi: 1, w: float64(c.rate), size: float64(c.bytes)}
		}
		return c, false, nil
	}
	w := m.rule.Weight(c.size, c.rate)
	if m.rule == goheap.Short && c.rate > 1 {
		// runtime/pprof's values use Exact's weights (truncated): the
		// estimate takes Short's, from the raw count where it is exact.
		if f := float64(c.samples) * w; c.samples == c.samplesHi && f < 1<<62 {
			c.bytes = int64(math.Round(f))
			c.objects = int64(math.Round(f / float64(c.size)))
		} else if e := m.rule.Extra(c.samples, c.size, c.rate); e < 1<<62 {
			c.bytes += int64(math.Round(e))
			c.objects += int64(math.Round(e / float64(c.size)))
		}
	}
	c.ratio = ratioTerms{ok: true, cLo: float64(c.samples), cHi: float64(c.samplesHi), w: w, size: float64(c.size)}
	return c, false, nil
}
