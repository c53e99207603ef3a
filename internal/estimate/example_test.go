package estimate_test

import (
	"fmt"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
)

// Eight sample events whose tail sums (size - offset) add up to 10908 bytes,
// drawn under the default mean, in a window that starts and ends on events.
func ExampleSingleMeanInterval() {
	iv, err := estimate.SingleMeanInterval(8, 10908, samplingstate.DefaultMeanBytes, 0.95, estimate.WindowAligned)
	if err != nil {
		panic(err)
	}
	fmt.Printf("estimate %.0f bytes, 95%% interval [%.0f, %.0f]\n", iv.Estimate, iv.Lo, iv.Hi)
	fmt.Printf("unsampled bytes [%d, %d]\n", iv.UnsampledLo, iv.UnsampledHi)
	// Output:
	// estimate 830100 bytes, 95% interval [364574, 1487779]
	// unsampled bytes [353666, 1476871]
}
