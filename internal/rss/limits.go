package rss

import (
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// Limits returns the memory limits a resident-memory profile's comments
// state: the process's GOMEMLIMIT (0 when it sets none) and its cgroup's
// memory.max (0 when there is none, or it was not read).
func Limits(p *profile.Profile) (goMemLimit, cgroupMax int64) {
	for _, c := range p.Comments {
		switch {
		case strings.HasPrefix(c, commentLimit):
			goMemLimit, _ = strconv.ParseInt(strings.TrimPrefix(c, commentLimit), 10, 64)
		case strings.HasPrefix(c, commentMax):
			cgroupMax, _ = strconv.ParseInt(strings.TrimPrefix(c, commentMax), 10, 64)
		}
	}
	return max(goMemLimit, 0), max(cgroupMax, 0)
}
