// Package goheap holds the Go runtime's heap sampling model as far as
// arenaprof needs it: the weight of a sampled object, and the raw sample
// count behind the scaled values runtime/pprof writes.
package goheap

import (
	"errors"
	"math"
)

// Weight is w(S) = S/(1-exp(-S/R)): the bytes a sampled object of S
// bytes stands for.
func Weight(size, rate int64) float64 {
	s := float64(size)
	return s / -math.Expm1(-s/float64(rate))
}

// Slack is how far a Go heap sample's values may be from the scaled
// value of its raw count: runtime/pprof truncates each record's scaled
// values, and one sample may sum several records (stacks that differ only
// in hidden runtime frames, merged or subtracted profiles such as
// net/http/pprof's ?seconds=N), each off by less than one.
const Slack = 64

// ErrValues means a sample's values are not those runtime/pprof writes
// for any raw count.
var ErrValues = errors.New("a Go heap sample's values match no raw count at the profile's MemProfileRate; was it written by another tool, or scaled?")

// RawCount recovers the raw count of sampled objects of a sample with
// scaled values objects and bytes, object size size, at rate: the counts c
// whose scaled bytes c*w(size) lie within Slack of bytes, and whose
// scaled objects lie within Slack of objects. Since w(size) >= rate,
// that is one count whenever rate > 2*Slack.
func RawCount(objects, bytes, size, rate int64) (lo, hi int64, err error) {
	if objects < 0 || bytes < 0 {
		return 0, 0, errors.New("a Go heap sample has negative values; subtract profiles only in time order")
	}
	if objects == 0 && bytes == 0 {
		return 0, 0, nil
	}
	if size <= 0 {
		return 0, 0, errors.New("a Go heap sample has no object size (the numeric label bytes)")
	}
	if rate <= 1 { // unscaled: the values are the raw ones
		if objects > math.MaxInt64/size || objects*size != bytes {
			return 0, 0, ErrValues
		}
		return objects, objects, nil
	}
	w := Weight(size, rate)
	k := w / float64(size)
	lo = max(0, int64(math.Ceil((float64(bytes)-Slack)/w-1e-9)))
	hi = int64(math.Floor((float64(bytes)+Slack+1)/w + 1e-9))
	// The objects value must agree with some count in range.
	if float64(objects) < float64(lo)*k-Slack-1 || float64(objects) > float64(hi)*k+Slack+1 || hi < lo {
		return 0, 0, ErrValues
	}
	return lo, hi, nil
}
