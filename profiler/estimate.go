package profiler

import (
	"errors"
	"fmt"
	"math"
)

// WeightedBytes returns the unbiased weight of one sampled object of size
// bytes drawn under mean: size/(1-q^size) with q = 1-1/mean. It is exactly
// mean for size 1 and tends to size for huge objects.
func WeightedBytes(size, mean int64) (float64, error) {
	if err := checkSizeMean(size, mean); err != nil {
		return 0, err
	}
	if mean == 1 {
		return float64(size), nil
	}
	// 1-q^size = -expm1(size*log1p(-p)), with no cancellation.
	return float64(size) / -math.Expm1(float64(size)*math.Log1p(-1/float64(mean))), nil
}

func checkSizeMean(size, mean int64) error {
	if size <= 0 {
		return fmt.Errorf("profiler: object size %d is not positive", size)
	}
	return checkMean(mean)
}

func checkMean(mean int64) error {
	if mean < 1 || mean > MaxMeanBytes {
		return fmt.Errorf("profiler: mean %d bytes is outside [1, %d]", mean, int64(MaxMeanBytes))
	}
	return nil
}

var errTODO = errors.New("profiler: not implemented yet")
