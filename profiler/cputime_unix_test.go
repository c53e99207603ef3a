//go:build unix

package profiler

import (
	"syscall"
	"time"
)

// benchCPUTime returns the CPU time (user and system) the process used.
func benchCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
