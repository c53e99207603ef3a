//go:build !unix

package profiler

import "time"

// benchCPUTime returns 0 where the process's CPU time is not available;
// the benchmarks' cpu-ns/event metric then reads 0.
func benchCPUTime() time.Duration { return 0 }
