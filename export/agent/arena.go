package agent

import (
	"context"
	"errors"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/profiler"
)

// ProfilerSource returns the arena allocation profile source, named
// "arena", of a running profiler: it snapshots p when the agent starts and
// every interval, and reports [export.Build] of the [profiler.Delta] of the previous and the
// current snapshot: alloc values and the raw sums (alloc_samples,
// alloc_tail) over the interval, in-use values absolute at its end, the
// window marked "arenaprof window=both". The profiler stays the caller's
// to stop.
func ProfilerSource(p *profiler.Profiler) Source { return &profilerSource{p: p} }

type profilerSource struct {
	p    *profiler.Profiler
	prev *profiler.Snapshot
}

func (s *profilerSource) Name() string { return "arena" }

func (s *profilerSource) Start(context.Context) error {
	if s.p == nil {
		return errors.New("nil profiler")
	}
	s.prev = s.p.Snapshot()
	return nil
}

func (s *profilerSource) Collect(context.Context) (*profile.Profile, error) {
	cur := s.p.Snapshot()
	prev := s.prev
	s.prev = cur
	d, err := profiler.Delta(prev, cur)
	if err != nil {
		return nil, err
	}
	return export.Build(d)
}
