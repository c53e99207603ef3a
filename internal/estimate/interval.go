package estimate

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/arenaprof/arenaprof/internal/negbin"
)

// Window says whether the observation window of a group of events starts
// and ends on a sample event. See the sampling design (reference 1 of the README), "Compensating for bytes
// allocated ... in between events".
//
// A profile of everything since sampling started is [WindowEnd]: every
// trial stream starts fresh, which is statistically the same as starting
// right after an event, but the end is never on an event. A delta over a
// time window is [WindowBoth]. When unsure, use WindowBoth: it is the
// conservative choice.
type Window uint8

const (
	// WindowAligned: the window starts and ends on sample events.
	WindowAligned Window = 0
	// WindowStart: the start is not on an event; the lower bound is
	// computed as if one fewer event had been seen (s-1).
	WindowStart Window = 1 << 0
	// WindowEnd: the end is not on an event; the upper bound is computed as
	// if one more event had been seen (s+1).
	WindowEnd Window = 1 << 1
	// WindowBoth: neither end is on an event.
	WindowBoth = WindowStart | WindowEnd
)

// String returns aligned, start, end or both (the spelling of the CLI flag
// and of the profile marking).
func (w Window) String() string {
	switch w {
	case WindowAligned:
		return "aligned"
	case WindowStart:
		return "start"
	case WindowEnd:
		return "end"
	case WindowBoth:
		return "both"
	}
	return fmt.Sprintf("Window(%d)", uint8(w))
}

// ParseWindow parses aligned, start, end or both.
func ParseWindow(s string) (Window, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "aligned":
		return WindowAligned, nil
	case "start":
		return WindowStart, nil
	case "end":
		return WindowEnd, nil
	case "both":
		return WindowBoth, nil
	}
	return 0, fmt.Errorf("estimate: unknown window %q (want aligned, start, end or both)", s)
}

// MeanSums is the raw sums of the events of one group drawn under one
// mean (a stratum: intervals are computed per mean and combined).
type MeanSums struct {
	// Samples (s) is the number of sample events.
	Samples int64
	// Tail (u) is the sum of the events' tails. An event's tail is
	// size - offset: the bytes from its sampled byte to the end of its
	// object, which got no trials (the u of the sampling design). The profile
	// carries it as the sample type alloc_tail/bytes.
	Tail int64
	// MeanBytes is the mean the events were drawn under.
	MeanBytes int64
}

// Interval is a confidence interval for the bytes allocated by a group.
//
// The bytes a group allocated are the bytes whose trials failed (they were
// not sampled) plus the tails of its events (u); the count of failed trials
// before the s-th success is negative-binomial, so it gets exact bounds.
type Interval struct {
	Samples    int64
	Tail       int64
	MeanBytes  int64 // 0 if the group mixes means
	Confidence float64
	Window     Window
	// Estimate is [BytesFromSums]: s*(mean-1) + u, summed over means.
	Estimate float64
	// UnsampledLo and UnsampledHi bound the bytes whose trials failed
	// (k, the negative-binomial count of failures before the s-th
	// success): the lower and upper quantile.
	UnsampledLo int64
	UnsampledHi int64
	Lo, Hi      float64 // bytes: [UnsampledLo + u, UnsampledHi + u]
}

// SingleMeanInterval returns the interval for s events with tail sum u drawn
// under one mean, at the given confidence, with the window correction.
//
// With alpha = 1-confidence, the number of failed trials (unsampled bytes) is bounded by
// negative-binomial quantiles taken so that each side misses with
// probability at most alpha/2, rounding outward:
//
//   - UnsampledLo is the largest k with CDF(k; s', p) < alpha/2 (exactly the
//     lower column of the sampling design's table), s' = s-1 if the window's start
//     is not on an event, else s; 0 when s' = 0.
//   - UnsampledHi is the smallest k with CDF(k; s”, p) >= 1-alpha/2 (the
//     upper column of the table plus one), s” = s+1 if the window's end is
//     not on an event, else s. With s” = 0 (no events and an aligned end)
//     it is 0: the interval is [u, u] = [0, 0].
//
// Then Lo = UnsampledLo + u and Hi = UnsampledHi + u. So s = 0 gives Lo = 0
// and, for an unaligned end, a finite upper bound (about 3.7*mean at 95%).
// With mean 1 every byte is sampled and the interval is [u, u].
//
// It is an error if s < 0 or s > 2^40, u < s, mean is outside [1, 2^40],
// confidence is not in (0, 1-1e-9], or the window is unknown.
func SingleMeanInterval(s, u, mean int64, confidence float64, w Window) (Interval, error) {
	if err := checkStratum(s, u, mean); err != nil {
		return Interval{}, err
	}
	if err := checkConfidence(confidence); err != nil {
		return Interval{}, err
	}
	if w > WindowBoth {
		return Interval{}, fmt.Errorf("estimate: unknown window %d", uint8(w))
	}
	alpha := 1 - confidence
	lo, hi, err := intervalFailures(s, mean, alpha/2, w, false)
	if err != nil {
		return Interval{}, err
	}
	est, _ := BytesFromSums(s, u, mean)
	return Interval{
		Samples:     s,
		Tail:        u,
		MeanBytes:   mean,
		Confidence:  confidence,
		Window:      w,
		Estimate:    est,
		UnsampledLo: lo,
		UnsampledHi: hi,
		Lo:          float64(lo) + float64(u),
		Hi:          float64(hi) + float64(u),
	}, nil
}

// intervalFailures returns the failed-trial bounds for s events under mean
// when each side may miss with probability tail; shown makes the lower
// bound conditional on at least one event (see [SampledGroupInterval]).
func intervalFailures(s, mean int64, tail float64, w Window, shown bool) (lo, hi int64, err error) {
	if mean == 1 {
		return 0, 0, nil
	}
	p := 1 / float64(mean)
	sLo, sHi := s, s
	if w&WindowStart != 0 {
		sLo--
	}
	if w&WindowEnd != 0 {
		sHi++
	}
	if sLo > 0 {
		lo = negbin.QuantileUnchecked(tail, sLo, p)
		if shown {
			lo = shownFailuresLo(tail, sLo, p, lo)
		}
		lo = max(lo, 0)
	}
	if sHi > 0 {
		hi = negbin.SurvivalQuantileUnchecked(tail, sHi, p)
		hi++ // smallest k with P(X > k) <= tail
	}
	if hi > negbin.MaxK {
		return 0, 0, fmt.Errorf("estimate: the upper bound for %d samples at mean %d is above 2^53 bytes", s, mean)
	}
	return lo, hi, nil
}

// GroupInterval returns a sound interval for a group whose events were
// drawn under several means (one MeanSums per mean; sums with the same
// mean are merged first). A mean that was in force but under which the
// group drew no event is a stratum with Samples = 0: it adds nothing to the
// lower bound and, unless the window ends on an event, an allowance to the
// upper bound for the bytes that may have been allocated under it unseen.
//
// How: with J distinct means, each side of each mean's interval is taken
// at the tail a = 1-(1-(1-C)/2)^(1/J) (Šidák), and the bounds are summed.
//
// Why it holds: trials drawn under different means are distinct trials,
// and the trials are independent Bernoulli draws, so the J per-mean upper
// bounds fail independently, each with probability at most a (the
// single-mean interval is valid at every level). All J hold together with
// probability at least (1-a)^J = 1-(1-C)/2, and when they all hold their
// sum bounds the sum of the parts. The same goes for the lower bounds, so
// the interval misses with probability at most 1-C. a is larger than the
// Bonferroni split (1-C)/(2J), which needs no independence, so the
// interval is never wider than the Bonferroni one, and never below the
// nominal confidence. The window correction is applied once per mean: the
// trials drawn under one mean, over all streams, form one sequence of
// independent trials.
//
// Among combinations of per-mean tests, this is the tightest that is never
// wider than the Bonferroni split whatever the data: a tighter acceptance
// region must leave out part of the Bonferroni box, and the box's
// probability under independence exceeds the nominal level only by
// Šidák's margin. Other combinations (Fisher's product of the per-mean
// p-values) are tighter when several means carry comparable uncertainty
// and wider when one dominates; see ACCURACY.md.
//
// With a single mean the result equals [SingleMeanInterval]. Estimate is the
// sum of the per-mean [BytesFromSums]; MeanBytes is 0 when the means
// differ. It is an error if strata is empty or any stratum is invalid.
func GroupInterval(strata []MeanSums, confidence float64, w Window) (Interval, error) {
	return groupInterval(strata, confidence, w, false)
}

// SampledGroupInterval is [GroupInterval] for a group known to have at least
// one event, as every row of a table is: a row is shown only then, and an
// interval that holds with probability C over all draws holds less often
// over those that show the row (a type of a few bytes that happened to be
// sampled would get a lower bound of 2.5% of the mean above its truth).
// Each mean's lower bound is conditional on at least one event under it:
// the largest k with P(K <= k) < a*P(at least one event in s+k trials). With one
// event the lower bound is the tail alone, u (the sampled objects hold at
// least that); with many the conditioning changes nothing. The upper
// bound is GroupInterval's (conditioning would only lower it).
func SampledGroupInterval(strata []MeanSums, confidence float64, w Window) (Interval, error) {
	return groupInterval(strata, confidence, w, true)
}

func groupInterval(strata []MeanSums, confidence float64, w Window, shown bool) (Interval, error) {
	if len(strata) == 0 {
		return Interval{}, fmt.Errorf("estimate: no strata")
	}
	if err := checkConfidence(confidence); err != nil {
		return Interval{}, err
	}
	if w > WindowBoth {
		return Interval{}, fmt.Errorf("estimate: unknown window %d", uint8(w))
	}
	merged, err := mergeStrata(strata)
	if err != nil {
		return Interval{}, err
	}
	if len(merged) == 1 && !shown {
		m := merged[0]
		return SingleMeanInterval(m.Samples, m.Tail, m.MeanBytes, confidence, w)
	}
	tail := sidakTail((1-confidence)/2, len(merged))
	out := Interval{Confidence: confidence, Window: w}
	var lo, hi float64
	for _, m := range merged {
		klo, khi, err := intervalFailures(m.Samples, m.MeanBytes, tail, w, shown)
		if err != nil {
			return Interval{}, err
		}
		est, _ := BytesFromSums(m.Samples, m.Tail, m.MeanBytes)
		out.Samples += m.Samples
		out.Tail += m.Tail
		out.Estimate += est
		out.UnsampledLo += klo
		out.UnsampledHi += khi
		lo += float64(klo) + float64(m.Tail)
		hi += float64(khi) + float64(m.Tail)
	}
	if len(merged) == 1 {
		out.MeanBytes = merged[0].MeanBytes
	}
	out.Lo, out.Hi = lo, hi
	return out, nil
}

// shownFailuresLo returns the largest k in [-1, lo0] with
//
//	P(K <= k) < tail * P(at least one event in s+k trials),
//
// K ~ NB(s, p): the lower quantile conditional on the group being shown.
// Given B trials the count of events is Binomial(B, p) and
// P(K <= k) = P(Binomial(s+k, p) >= s); dividing by P(Binomial >= 1) =
// 1-(1-p)^(s+k) conditions on at least one event. The ratio grows with k,
// and lo0, the unconditional quantile, is an upper bracket. With s = 1 the
// ratio is 1 for every k: one event puts no lower bound above the tail.
func shownFailuresLo(tail float64, s int64, p float64, lo0 int64) int64 {
	lq := math.Log1p(-p)
	shownP := func(k int64) float64 { return -math.Expm1(float64(s+k) * lq) }
	if lo0 < 0 || shownP(lo0) > 1-1e-13 {
		return lo0 // the truncation changes nothing measurable
	}
	below := func(k int64) bool {
		c, _ := negbin.CDF(k, s, p)
		return c < tail*shownP(k)
	}
	if below(lo0) {
		return lo0
	}
	lo, hi := int64(-1), lo0 // below(lo) holds, below(hi) does not
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if below(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// sidakTail returns the per-part tail 1-(1-tail)^(1/j) that makes j
// independent parts all hold with probability 1-tail, computed without
// cancellation: -expm1(log1p(-tail)/j).
func sidakTail(tail float64, j int) float64 {
	return -math.Expm1(math.Log1p(-tail) / float64(j))
}

// mergeStrata checks the strata and sums those with the same mean, sorted
// by mean.
func mergeStrata(strata []MeanSums) ([]MeanSums, error) {
	byMean := make(map[int64]MeanSums, len(strata))
	for i, st := range strata {
		if err := checkStratum(st.Samples, st.Tail, st.MeanBytes); err != nil {
			return nil, fmt.Errorf("stratum %d: %w", i, err)
		}
		m := byMean[st.MeanBytes]
		m.MeanBytes = st.MeanBytes
		if m.Samples > math.MaxInt64-st.Samples || m.Tail > math.MaxInt64-st.Tail {
			return nil, fmt.Errorf("estimate: sums of the strata with mean %d overflow", st.MeanBytes)
		}
		m.Samples += st.Samples
		m.Tail += st.Tail
		if m.Samples > negbin.MaxSamples {
			return nil, fmt.Errorf("estimate: %d samples with mean %d is above %d", m.Samples, st.MeanBytes, int64(negbin.MaxSamples))
		}
		byMean[st.MeanBytes] = m
	}
	out := make([]MeanSums, 0, len(byMean))
	for _, m := range byMean {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MeanBytes < out[j].MeanBytes })
	return out, nil
}

func checkStratum(s, u, mean int64) error {
	if s < 0 {
		return fmt.Errorf("estimate: number of samples %d is negative", s)
	}
	if s > negbin.MaxSamples {
		return fmt.Errorf("estimate: number of samples %d is above %d", s, int64(negbin.MaxSamples))
	}
	if u < s {
		return fmt.Errorf("estimate: tail sum %d is smaller than the number of samples %d (each event contributes at least 1 byte)", u, s)
	}
	return checkMean(mean)
}

// maxConfidence is the largest confidence accepted: the CDF is exact to
// about 1e-12, so quantiles further out than that are not meaningful.
const maxConfidence = 1 - 1e-9

func checkConfidence(c float64) error {
	if !(c > 0 && c < 1) {
		return fmt.Errorf("estimate: confidence %v is not in (0, 1)", c)
	}
	if c > maxConfidence {
		return fmt.Errorf("estimate: confidence %v is above %v, beyond the precision of the computation", c, maxConfidence)
	}
	return nil
}
