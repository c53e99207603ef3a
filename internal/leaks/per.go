package leaks

import (
	"errors"
	"fmt"
	"math"
)

// PerNew returns the estimator of bytes per unit of count (the leaked
// goroutines) for a series of snapshots at times (seconds, increasing, at
// least MinSnapshots), count[i] read with snapshot i, for groups groups at
// family-wise confidence conf. The fit covers Window(times); the counts
// there must not fall and must take two values at least. Fit's Rate is
// then bytes per unit of count, and T0 the counts' batch-mean centroid.
func PerNew(times, count []float64, groups int, conf float64) (*Estimator, error) {
	if len(count) != len(times) {
		return nil, fmt.Errorf("%d counts for %d snapshots", len(count), len(times))
	}
	if !(conf > 0 && conf < 1) {
		return nil, fmt.Errorf("confidence %v is not strictly between 0 and 1", conf)
	}
	if groups < 1 {
		return nil, errors.New("no group to estimate")
	}
	for i, t := range times {
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, fmt.Errorf("time %v is not a finite number", t)
		}
		if c := count[i]; math.IsNaN(c) || math.IsInf(c, 0) || c < 0 || c > 1<<53 {
			return nil, fmt.Errorf("count %v at snapshot %d is not a count", c, i)
		}
	}
	from, err := Window(times)
	if err != nil {
		return nil, err
	}
	for i := 1; i < len(count); i++ {
		if count[i] < count[i-1] {
			return nil, &CountError{Falls: true, At: i, Before: count[i-1], After: count[i]}
		}
	}
	if count[from] == count[len(count)-1] {
		return nil, &CountError{At: from, Before: count[from], After: count[from]}
	}
	return newEstimator(count, from, groups, conf)
}

// CountError is PerNew's refusal of the counts: they fall (a restart), or
// they take one value over the fit.
type CountError struct {
	// Falls: the count fell from Before to After at snapshot At. Else it
	// is Before over the whole fit, from snapshot At on.
	Falls         bool
	At            int
	Before, After float64
}

func (e *CountError) Error() string {
	if e.Falls {
		return fmt.Sprintf("the count falls from %v to %v at snapshot %d: not one process", e.Before, e.After, e.At)
	}
	return fmt.Sprintf("the count is %v at every snapshot of the fit (from snapshot %d on): no slope against it", e.Before, e.At)
}
