//go:build !unix

package servicebench

import "time"

// cpuTime returns 0 where the process's CPU time is not available;
// the benchmarks' cpu-ns/event metric then reads 0.
func cpuTime() time.Duration { return 0 }
