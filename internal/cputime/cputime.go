// Package cputime reads the CPU time the process has used, for benchmarks
// that report CPU time beside wall time: on a shared machine a benchmark
// waiting for a core inflates its wall time, not its CPU time.
package cputime

import "time"

// Process returns the CPU time (user and system) the process has used, or
// 0 where the platform does not say.
func Process() time.Duration { return process() }
