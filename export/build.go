package export

import (
	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/export/internal/profbuild"
	"github.com/arenaprof/arenaprof/profiler"
)

// Build returns the pprof profile of a snapshot: p.Snapshot() for
// everything a [profiler.Profiler] has seen since it started, or the
// [profiler.Delta] of two snapshots for a window (alloc values and raw sums
// over the window, in-use values at its end).
// The result passes CheckValid. Samples with equal labels share their label
// maps (as they share locations): copy a map before changing the labels of
// one sample only. Locations, functions and the mapping are shared with
// the other profiles Build returns (their ids are unique across them):
// treat them as read-only, or Copy the profile first.
func Build(s *profiler.Snapshot) (*profile.Profile, error) { return new(profbuild.Builder).Build(s) }
