package report

import (
	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/profiler"
)

// WindowOf returns the window marking of an arenaprof profile: the union of
// the flags of every "arenaprof window=W" comment (a merged profile carries
// the comments of its parts), or WindowBoth, the conservative choice, if
// there is none or one cannot be read.
//
// How the marking is used: the interval of a group of samples is computed
// from its raw sums (alloc_samples, alloc_tail per sampling_mean) with
// [profiler.GroupInterval] at this window. A window whose start is not on a
// sample event lowers the lower bound as if one event fewer had been seen;
// one whose end is not on an event raises the upper bound as if one more had.
func WindowOf(p *profile.Profile) profiler.Window { return pprofmt.WindowOf(p) }
