package estimate

import (
	"fmt"
	"math"

	"github.com/arenaprof/arenaprof/internal/samplingstate"
)

// maxMeanBytes is the largest mean accepted (2^40).
const maxMeanBytes = samplingstate.MaxMeanBytes

// WeightedBytes returns the unbiased weight of one sampled object of size
// bytes drawn under mean: size/(1-q^size) with q = 1-1/mean, the bytes it
// stands for. The object is sampled with probability 1-q^size, so the
// weight's expectation is exactly size.
//
// It is computed as size / -expm1(size*log1p(-1/mean)), with no
// cancellation: it is mean (to the last bit or two) for size 1, tends to
// size for huge objects, and keeps full relative precision for every mean
// from 1 to 2^40. Mean 1 samples every byte, so the weight is size.
func WeightedBytes(size, mean int64) (float64, error) {
	if err := checkSizeMean(size, mean); err != nil {
		return 0, err
	}
	return weightedBytes(size, mean), nil
}

func weightedBytes(size, mean int64) float64 {
	if mean == 1 {
		return float64(size)
	}
	if size == 1 {
		return float64(mean) // 1/(1-q) = 1/p exactly
	}
	// 1-q^size = -expm1(size*log1p(-p)).
	return float64(size) / -math.Expm1(float64(size)*math.Log1p(-1/float64(mean)))
}

// WeightedObjects returns the number of objects one sampled object of size
// bytes drawn under mean stands for: 1/(1-q^size) = WeightedBytes/size.
func WeightedObjects(size, mean int64) (float64, error) {
	if err := checkSizeMean(size, mean); err != nil {
		return 0, err
	}
	return weightedBytes(size, mean) / float64(size), nil
}

// BytesFromSums returns the estimate s*(mean-1) + u of the bytes covered
// by s sample events whose tails sum to u, drawn under mean: each event
// stands for the mean-1 bytes whose trials failed before it, on average,
// plus its own tail (q/p = mean-1 with p = 1/mean, q = 1-p). It is unbiased
// and is the center of the negative-binomial interval of
// [SingleMeanInterval]. It differs from the sum of [WeightedBytes] over the
// same events by sampling noise only: both are unbiased, from different
// parts of each event.
//
// It is an error if s < 0, u < s, or the mean is outside [1, 2^40].
func BytesFromSums(s, u, mean int64) (float64, error) {
	if s < 0 {
		return 0, fmt.Errorf("estimate: number of samples %d is negative", s)
	}
	if u < s {
		return 0, fmt.Errorf("estimate: tail sum %d is smaller than the number of samples %d (each event contributes at least 1 byte)", u, s)
	}
	if err := checkMean(mean); err != nil {
		return 0, err
	}
	return float64(s)*float64(mean-1) + float64(u), nil
}

// CheckEvent checks one sample event: size > 0, 0 <= offset < size, mean in
// [1, 2^40].
func CheckEvent(size, offset, mean int64) error {
	if err := checkSizeMean(size, mean); err != nil {
		return err
	}
	if offset < 0 || offset >= size {
		return fmt.Errorf("estimate: offset %d is outside the object of %d bytes", offset, size)
	}
	return nil
}

// EventSums accumulates sample events, each with its own mean, and yields the
// weighted estimates and the per-mean raw sums ([MeanSums]). Because every event carries
// the mean it was drawn under, a mean changed at run time biases nothing:
// each weight is unbiased for its own object.
//
// The zero value holds no events. An EventSums is not safe for concurrent use.
type EventSums struct {
	bytes   float64
	objects float64
	strata  []MeanSums // one per mean, in order of first appearance
}

// Add records one event: an object of size bytes, sampled at offset (the
// 0-based offset of the successful trial), under mean. Invalid events are
// rejected with an error and leave the sums unchanged.
func (t *EventSums) Add(size, offset, mean int64) error {
	if err := CheckEvent(size, offset, mean); err != nil {
		return err
	}
	i := 0
	for i < len(t.strata) && t.strata[i].MeanBytes != mean {
		i++
	}
	if i == len(t.strata) {
		t.strata = append(t.strata, MeanSums{MeanBytes: mean})
	}
	st := &t.strata[i]
	if st.Samples == math.MaxInt64 || st.Tail > math.MaxInt64-(size-offset) {
		return fmt.Errorf("estimate: event sums overflow")
	}
	w := weightedBytes(size, mean)
	t.bytes += w
	t.objects += w / float64(size)
	st.Samples++
	st.Tail += size - offset
	return nil
}

// WeightedBytes returns the sum of the events' weights: the unbiased
// (weighted-samples) estimate of the bytes allocated.
func (t *EventSums) WeightedBytes() float64 { return t.bytes }

// WeightedObjects returns the unbiased estimate of the number of objects
// allocated.
func (t *EventSums) WeightedObjects() float64 { return t.objects }

// Samples returns the number of events added.
func (t *EventSums) Samples() int64 {
	var n int64
	for _, st := range t.strata {
		n += st.Samples
	}
	return n
}

// ByMean returns a copy of the per-mean raw sums, ordered by mean, for
// [GroupInterval].
func (t *EventSums) ByMean() []MeanSums {
	out := append([]MeanSums(nil), t.strata...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].MeanBytes < out[j-1].MeanBytes; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// BytesFromSums returns the sum over means of [BytesFromSums] of each
// mean's sums.
func (t *EventSums) BytesFromSums() float64 {
	var e float64
	for _, st := range t.strata {
		v, _ := BytesFromSums(st.Samples, st.Tail, st.MeanBytes)
		e += v
	}
	return e
}

// Interval returns the confidence interval for the tallied events (see
// [GroupInterval]). Empty sums have has no mean to compute a bound with and
// gives an error.
func (t *EventSums) Interval(confidence float64, w Window) (Interval, error) {
	return GroupInterval(t.strata, confidence, w)
}

// Reset empties the sums.
func (t *EventSums) Reset() { *t = EventSums{strata: t.strata[:0]} }

func checkSizeMean(size, mean int64) error {
	if size <= 0 {
		return fmt.Errorf("estimate: object size %d is not positive", size)
	}
	return checkMean(mean)
}

func checkMean(mean int64) error {
	if mean < 1 || mean > maxMeanBytes {
		return fmt.Errorf("estimate: mean %d bytes is outside [1, %d]", mean, int64(maxMeanBytes))
	}
	return nil
}
