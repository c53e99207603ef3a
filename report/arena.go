package report

import (
	"fmt"
	"math"
	"math/bits"
	"sort"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
)

// The arena model: arenaprof's per-byte sampling (package export writes
// the profiles). Each sample carries its raw sums, the count of events
// (alloc_samples) and the sum of their tails (alloc_tail: size - offset
// per event, the bytes from the sampled byte to the end of its object),
// under its sampling mean; a group's sums per mean give an exact
// negative-binomial interval (internal/estimate).

// arenaModel reads the samples of an arenaprof profile.
type arenaModel struct {
	period int64                       // the profile's Period: the mean of samples without a sampling_mean label
	idx    [pprofmt.NumSampleTypes]int // value positions (pprofmt.Facts.Arena)
	varIdx [2]int                      // positions of alloc_var and alloc_wbound, -1 if absent (pprofmt.Facts.Var)
	inuse  bool
	window estimate.Window // the profile's window marking
	means  []int64         // the means in force (pprofmt.Facts.InForce)
}

func (m *arenaModel) newSums(bool) sums { return m.newArenaSums() }

func (m *arenaModel) newArenaSums() *arenaSums {
	return &arenaSums{m: m, strata: map[int64]*stratum{}}
}

// unseenHi is the upper bound of zero events under every mean in force.
func (m *arenaModel) unseenHi(conf float64) (float64, error) {
	_, hi, err := m.newArenaSums().interval(&TableRow{}, conf)
	return hi, err
}

// stratum holds the raw sums of one group under one mean. For in-use
// samples the tail is only bounded: tailLo <= u <= tailHi.
type stratum struct {
	samples, samplesHi, tailLo, tailHi int64
}

// arenaSums are the raw sums of one group of arena samples.
type arenaSums struct {
	m       *arenaModel
	strata  map[int64]*stratum // by sampling mean
	certain int64              // bytes of the sampled objects (0 when their size is not recorded)
	events  int                // samples added
}

func (a *arenaSums) add(c contribution, err *error) {
	a.events++
	addChecked(&a.certain, c.certain, err)
	st := a.strata[c.mean]
	if st == nil {
		st = &stratum{}
		a.strata[c.mean] = st
	}
	addChecked(&st.samples, c.samples, err)
	addChecked(&st.samplesHi, c.samplesHi, err)
	addChecked(&st.tailLo, c.tailLo, err)
	addChecked(&st.tailHi, c.tailHi, err)
}

func (a *arenaSums) memProfileRate() int64 { return 0 }

// ratioAllowance: bytes may have been allocated under a mean in force
// without drawing an event, so the extra event of the test's upper side is
// taken at a weight of at least that mean.
func (a *arenaSums) ratioAllowance() float64 {
	var allow float64
	if a.events == 0 {
		return 0
	}
	for _, m := range a.m.means {
		if m > 1 {
			allow = max(allow, float64(m))
		}
	}
	return allow
}

// read reads an arenaprof sample.
func (m *arenaModel) read(s *profile.Sample) (c contribution, skip bool, err error) {
	v := func(i int) int64 { return s.Value[m.idx[i]] }
	inuse := m.inuse
	what := "alloc"
	if inuse {
		what = "inuse"
	}
	if inuse {
		c.bytes, c.objects = v(pprofmt.IndexInuseSpace), v(pprofmt.IndexInuseObjects)
	} else {
		c.bytes, c.objects = v(pprofmt.IndexAllocSpace), v(pprofmt.IndexAllocObjects)
		c.samples, c.tailLo = v(pprofmt.IndexAllocSamples), v(pprofmt.IndexAllocTail)
		c.samplesHi, c.tailHi = c.samples, c.tailLo
	}
	if c.bytes == 0 && c.objects == 0 && c.samples == 0 && c.tailLo == 0 {
		return c, true, nil // empty bucket, e.g. in a delta profile
	}
	if c.bytes < 0 || c.objects < 0 || c.samples < 0 || c.tailLo < 0 {
		return c, false, fmt.Errorf("report: a sample has negative values (%s bytes %d, objects %d, sample events %d, tail %d); subtract profiles only in time order", what, c.bytes, c.objects, c.samples, c.tailLo)
	}
	if c.mean, err = sampleMean(s, m.period); err != nil {
		return c, false, err
	}
	if err := checkSampleMean(s, v(pprofmt.IndexAllocSpace), v(pprofmt.IndexAllocSamples), v(pprofmt.IndexAllocTail), c.mean); err != nil {
		return c, false, err
	}
	if inuse {
		c.samples, c.samplesHi, c.tailLo, c.tailHi, err = inuseRawSums(s, c.bytes, c.mean)
	}
	if err != nil {
		return c, false, err
	}
	size, ok := firstNumLabel(s, pprofmt.LabelBytes)
	if ok && size > 0 && c.samples <= math.MaxInt64/size {
		c.certain = c.samples * size
	}
	// The ratio test: a sample with bytes but no event count (only a
	// hand-edited or inconsistent profile has one), or without a size,
	// counts as an aggregate of events of unknown sizes: with its
	// variance sums (a Pyroscope read of new uploads, see
	// pprofmt.VarianceSums), at the variance they give, else at the most
	// uncertain reading.
	if !ok || size <= 0 || c.samples <= 0 {
		if c.bytes > 0 {
			c.ratio = ratioTerms{ok: true, mixed: true, cLo: float64(c.samples), cHi: float64(c.samples), w: float64(c.mean), size: float64(c.bytes)}
			if v, wb, ok := m.varianceSums(s, c.mean); ok && c.samples > 0 && !inuse {
				c.ratio.known, c.ratio.v, c.ratio.wb = true, v, wb
			}
		}
		return c, false, nil
	}
	w, err := estimate.WeightedBytes(size, c.mean)
	if err != nil {
		return c, false, fmt.Errorf("report: a sample has an unusable size or mean: %v", err)
	}
	c.ratio = ratioTerms{ok: true, cLo: float64(c.samples), cHi: float64(c.samplesHi), w: w, size: float64(size)}
	return c, false, nil
}

// varianceSums returns the variance of an aggregate sample's events drawn
// under mean and the bound on their largest weight, from its variance
// sums: ok is false for a sample without them (no label
// arenaprof_var="1": an upload made before they existed, or a file) or
// with a sum at the cap, whose value is unknown.
func (m *arenaModel) varianceSums(s *profile.Sample, mean int64) (v, wb float64, ok bool) {
	if m.varIdx[0] < 0 || m.varIdx[1] < 0 {
		return 0, 0, false
	}
	if f := s.Label[pprofmt.LabelVarFormat]; len(f) != 1 || f[0] != pprofmt.VarFormat {
		return 0, 0, false
	}
	vs, ws := s.Value[m.varIdx[0]], s.Value[m.varIdx[1]]
	if vs < 0 || vs >= pprofmt.VarCap {
		return 0, 0, false
	}
	wb, ok = pprofmt.WeightBound(ws, mean)
	return float64(vs) * float64(mean), wb, ok
}

// sampleMean returns the mean a sample's events were drawn under: its
// sampling_mean label, else the profile's Period.
func sampleMean(s *profile.Sample, period int64) (int64, error) {
	m, ok := firstNumLabel(s, pprofmt.LabelMean)
	if !ok {
		m = period
	}
	if m < 1 || m > samplingstate.MaxMeanBytes {
		if ok {
			return 0, fmt.Errorf("report: a sample has sampling_mean %d, outside [1, %d]", m, int64(samplingstate.MaxMeanBytes))
		}
		return 0, fmt.Errorf("report: a sample has no sampling_mean label and the profile's period %d is outside [1, %d]", m, int64(samplingstate.MaxMeanBytes))
	}
	return m, nil
}

// checkSampleMean refuses a sample whose allocated bytes contradict the
// mean it claims (its sampling_mean label, or the profile's period): a
// profile whose labels were rewritten, or merged from profiles of different
// means under one label, would otherwise give intervals for the wrong mean.
//
// The exporter writes alloc_space = round(n * WeightedBytes(size, mean))
// for n events of one size; merging or subtracting profiles adds at most
// one unit of rounding per event (and one for a subtraction), so a sample
// is refused when alloc_space is off by more than n+1. An overflow sample
// (mixed sizes, no size label) is refused when alloc_space is below
// n*mean - (n+1): every event's weight is at least the mean.
func checkSampleMean(s *profile.Sample, allocBytes, n, tail, mean int64) error {
	if n <= 0 || allocBytes < 0 || tail < 0 {
		return nil
	}
	tol := float64(n) + 1
	size, ok := firstNumLabel(s, pprofmt.LabelBytes)
	if !ok {
		if want := float64(n) * float64(mean); float64(allocBytes) < want-tol {
			return fmt.Errorf("report: a sample contradicts its sampling mean %d: %d events weigh at least %.0f bytes at that mean, the sample has %d allocated bytes", mean, n, want, allocBytes)
		}
		return nil
	}
	w, err := estimate.WeightedBytes(size, mean)
	if err != nil {
		return fmt.Errorf("report: a sample has an unusable size or mean: %v", err)
	}
	if want := float64(n) * w; math.Abs(float64(allocBytes)-want) > tol {
		return fmt.Errorf("report: a sample contradicts its sampling mean %d: %d events of %d bytes weigh %.0f bytes at that mean, the sample has %d allocated bytes", mean, n, size, want, allocBytes)
	}
	if tail < n || float64(tail) > float64(n)*float64(size) {
		return fmt.Errorf("report: a sample's tail %d is outside [%d, %d] for %d events of %d bytes", tail, n, n*size, n, size)
	}
	return nil
}

// inuseRawSums recovers the raw sums of the in-use objects of one sample:
// bounds on its event count and on its tail.
//
// With the object size (the bytes label): the exporter sums the same weight
// WeightedBytes(size, mean) for every in-use event of the sample and rounds
// once, so the event count is round(inuse_space / weight) exactly. The tail
// of the in-use events was not recorded; each event contributes size-offset
// in [1, size], so count <= u <= count*size.
//
// Without it (an overflow sample, which aggregates objects of mixed sizes):
// every event's weight w = size/(1-(1-1/mean)^size) is at least mean and at
// least size, and the in-use bytes B are the rounded sum of the weights, so
// 1 <= count <= (B+1/2)/mean and count <= u <= B. Interval bounds grow with
// both the count and the tail, so the lower bound taken at the smallest
// (count, tail) and the upper at the largest still cover.
func inuseRawSums(s *profile.Sample, inuseBytes, mean int64) (count, countHi, tailLo, tailHi int64, err error) {
	size, ok := firstNumLabel(s, pprofmt.LabelBytes)
	if !ok {
		if inuseBytes <= 0 {
			return 0, 0, 0, 0, nil
		}
		countHi = max(1, int64((float64(inuseBytes)+0.5)/float64(mean)))
		return 1, countHi, 1, inuseBytes, nil
	}
	w, werr := estimate.WeightedBytes(size, mean)
	if werr != nil {
		return 0, 0, 0, 0, fmt.Errorf("report: a sample has an unusable size or mean: %v", werr)
	}
	c := math.Round(float64(inuseBytes) / w)
	if inuseBytes > 0 && c < 1 {
		return 0, 0, 0, 0, fmt.Errorf("report: a sample has %d in-use bytes, less than the weight %.0f of one event of %d bytes at mean %d", inuseBytes, w, size, mean)
	}
	if c >= math.MaxInt64 {
		return 0, 0, 0, 0, errOverflow
	}
	count = int64(c)
	hi, lo := bits.Mul64(uint64(count), uint64(size))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, 0, 0, 0, errOverflow
	}
	return count, count, count, int64(lo), nil
}

// interval bounds the group's true bytes from its strata. For alloc the
// tail is exact; for inuse Lo uses the smallest possible tail and Hi the
// largest. row holds the group's totals (of a combined group: both parts).
func (a *arenaSums) interval(row *TableRow, conf float64) (lo, hi float64, err error) {
	a.allow()
	if len(a.strata) == 0 {
		period := a.m.period
		if period < 1 || period > samplingstate.MaxMeanBytes {
			return 0, 0, nil
		}
		a.strata[period] = &stratum{}
	}
	means := make([]int64, 0, len(a.strata))
	for m := range a.strata {
		means = append(means, m)
	}
	sort.Slice(means, func(i, j int) bool { return means[i] < means[j] })
	los := make([]estimate.MeanSums, len(means))
	his := make([]estimate.MeanSums, len(means))
	for i, m := range means {
		st := a.strata[m]
		los[i] = estimate.MeanSums{Samples: st.samples, Tail: st.tailLo, MeanBytes: m}
		his[i] = estimate.MeanSums{Samples: st.samplesHi, Tail: st.tailHi, MeanBytes: m}
	}
	// A row with events is shown because it has them: its lower bound is
	// conditional on that (estimate.SampledGroupInterval).
	interval := estimate.GroupInterval
	if row.Samples > 0 {
		interval = estimate.SampledGroupInterval
	}
	in, err := interval(los, conf, a.m.window)
	if err != nil {
		return 0, 0, fmt.Errorf("report: interval of group %q: %v", row.Key, err)
	}
	lo, hi = in.Lo, in.Hi
	if row.TailMax != row.Tail || row.SamplesMax != row.Samples {
		in, err = estimate.GroupInterval(his, conf, a.m.window)
		if err != nil {
			return 0, 0, fmt.Errorf("report: interval of group %q: %v", row.Key, err)
		}
		hi = in.Hi
	}
	// The sampled objects exist: their bytes are a lower bound.
	lo = max(lo, float64(a.certain))
	hi = max(hi, lo)
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return 0, 0, fmt.Errorf("report: interval of group %q is not finite", row.Key)
	}
	return lo, hi, nil
}

// allow gives the group a stratum without events for every mean in force
// under which it had none: bytes allocated under that mean may have drawn
// no event, and the interval's upper bound must allow for them.
func (a *arenaSums) allow() {
	for _, m := range a.m.means {
		if a.strata[m] == nil {
			a.strata[m] = &stratum{}
		}
	}
}
