package profbuild

import (
	"fmt"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/profiler"
)

// Peak returns the profile of a peak (see [profiler.Profiler.Peak] and
// [profiler.Profiler.WatchPeak]), as package export's PeakHandler and the
// agent's PeakSource serve it: the profile of its snapshot, in package
// export's Build format, timed at the peak, whose in-use values are those
// at the peak and whose alloc values are cumulative from the profiler's
// start up to it. Its intervals (arenaprof top -sample inuse) are the
// in-use intervals at that moment. A comment gives the peak's estimated
// live bytes and time. It returns nil if no object was live during the
// peak's span.
func Peak(pk profiler.Peak) (*profile.Profile, error) { return new(Builder).Peak(pk) }

// Peak returns what [Peak] returns for pk, in the Builder's memory.
func (r *Builder) Peak(pk profiler.Peak) (*profile.Profile, error) {
	if pk.Snapshot == nil {
		return nil, nil
	}
	prof, err := r.Build(pk.Snapshot)
	if err != nil {
		return nil, err
	}
	prof.DefaultSampleType = "inuse_space"
	// A profile of one moment, the peak: a series of peaks (the agent's
	// uploads) is placed at their moments.
	prof.TimeNanos, prof.DurationNanos = pk.Snapshot.End.UnixNano(), 0
	prof.Comments = append(prof.Comments, fmt.Sprintf("%s%.0f bytes at %s (the highest since %s)",
		pprofmt.PeakCommentPrefix, pk.Bytes, pk.Snapshot.End.Format(time.RFC3339Nano), pk.Start.Format(time.RFC3339Nano)))
	return prof, nil
}
