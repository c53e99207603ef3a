package profiler_test

import (
	"fmt"

	"github.com/arenaprof/arenaprof/profiler"
)

// Eight sample events whose tail sums (size - offset) add up to 10908 bytes,
// drawn under the default mean, in a window that starts and ends on events.
func ExampleComputeInterval() {
	iv, err := profiler.ComputeInterval(8, 10908, profiler.DefaultMeanBytes, 0.95, profiler.WindowAligned)
	if err != nil {
		panic(err)
	}
	fmt.Printf("estimate %.0f bytes, 95%% interval [%.0f, %.0f]\n", iv.Estimate, iv.Lo, iv.Hi)
	fmt.Printf("failed trials [%d, %d]\n", iv.FailuresLo, iv.FailuresHi)
	// Output:
	// estimate 830100 bytes, 95% interval [364574, 1487779]
	// failed trials [353666, 1476871]
}
