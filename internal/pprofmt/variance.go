package pprofmt

import (
	"math"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
)

// The variance sums of arena uploads to Pyroscope (see ACCURACY.md, "Fleet
// diff"). Pyroscope drops numeric labels, so the object size of an arena
// sample does not reach the server, and a stack's sums mix sizes. What the
// ratio test needs of them is their variance and a bound on their largest
// weight; both are sums over events, so the uploader computes them per
// sample (c events of one size S under one mean m, weight w = S/p) and the
// server adds them up as it adds bytes:
//
//	alloc_var    = ceil(c * w*(w-S) / m)        (V/m: w^2(1-p) = w(w-S))
//	alloc_wbound = ceil(c * ((w-m)/m)^4 * m)
//
// over the uncertain events (w > S; an event sampled with certainty adds
// neither). Every weight is at least m, so the largest weight of the
// events summed is at most m + m*(alloc_wbound/m)^(1/4). Both are in
// bytes and each sample's values are saturated at [VarCap]; a reader
// takes a sum at or above VarCap as unknown.

// Sample value indexes of the variance sums, after the arenaprof sample
// types, in the profiles Pyroscope receives and in those pyroread
// rebuilds.
const (
	IndexAllocVar    = NumSampleTypes + iota // alloc_var/bytes
	IndexAllocWBound                         // alloc_wbound/bytes
	NumVarSampleTypes
)

// LabelVarFormat is the string label that marks the arena samples of a
// Pyroscope upload carrying the variance sums, with the value
// [VarFormat]. Uploads made before the sums existed lack it, so their
// series (whose sums the server cannot tell apart from new ones) stay
// apart from the new ones.
const LabelVarFormat = "arenaprof_var"

// VarFormat is the value of LabelVarFormat.
const VarFormat = "1"

// VarCap is the largest value one sample's variance sums take: a sum of
// fewer than 8192 of them stays in int64.
const VarCap = 1 << 50

// VarianceSampleTypes returns the sample types of the variance sums, in
// the order of their indexes.
func VarianceSampleTypes() []*profile.ValueType {
	return []*profile.ValueType{
		{Type: "alloc_var", Unit: "bytes"},
		{Type: "alloc_wbound", Unit: "bytes"},
	}
}

// VarianceSums returns the variance sums (alloc_var, alloc_wbound) of c
// events of objects of size bytes drawn under mean, saturated at VarCap;
// zeros when there are no events or the size or mean is unusable.
func VarianceSums(c, size, mean int64) (v, wbound int64) {
	if c <= 0 {
		return 0, 0
	}
	w, err := estimate.WeightedBytes(size, mean)
	if err != nil || !(w > float64(size)) {
		return 0, 0
	}
	m := float64(mean)
	x := max(w-m, 0) / m
	return ceilCap(float64(c) * w * (w - float64(size)) / m), ceilCap(float64(c) * x * x * x * x * m)
}

// ceilCap rounds x up to a whole number in [0, VarCap].
func ceilCap(x float64) int64 {
	if !(x < VarCap) { // also NaN
		return VarCap
	}
	return int64(math.Ceil(max(x, 0)))
}

// WeightBound returns the bound on the largest weight of events drawn
// under mean whose alloc_wbound sums to wbound: m + m*(wbound/m)^(1/4),
// and false for a sum at or above VarCap (a saturated sample may be in
// it).
func WeightBound(wbound, mean int64) (float64, bool) {
	if wbound < 0 || wbound >= VarCap || mean < 1 {
		return 0, false
	}
	m := float64(mean)
	return m + m*math.Sqrt(math.Sqrt(float64(wbound)/m)), true
}

// VarianceIndex returns the index of the alloc_samples sample type among
// types, or -1 if there is none or the variance sums are there already.
func VarianceIndex(types []*profile.ValueType) int {
	idx := -1
	for i, st := range types {
		switch {
		case st.Type == "alloc_samples" && st.Unit == "count":
			idx = i
		case st.Type == "alloc_var":
			return -1
		}
	}
	return idx
}

// VarianceOf returns the object size and the mean of the events of an
// arena sample that gets variance sums, or zeros: a Go heap sample (label
// memory=heap), one without a size (an overflow sample) or without a
// usable mean (its sampling_mean label, else period).
func VarianceOf(s *profile.Sample, period int64) (size, mean int64) {
	if m := s.Label[LabelMemory]; len(m) > 0 && m[0] == MemoryHeap {
		return 0, 0
	}
	b := s.NumLabel[LabelBytes]
	if len(b) == 0 || b[0] <= 0 {
		return 0, 0
	}
	mean = period
	if m := s.NumLabel[LabelMean]; len(m) > 0 {
		mean = m[0]
	}
	if mean < 1 || mean > samplingstate.MaxMeanBytes {
		return 0, 0
	}
	return b[0], mean
}
