package agent

import (
	"context"
	"errors"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/export/internal/profbuild"
	"github.com/arenaprof/arenaprof/profiler"
)

// ProfilerSource returns the arena allocation profile source, named
// "arena", of a running profiler: from the agent's start (or, without
// Start, from the first Collect) it reports, every interval, [export.Build]
// of the window since the interval before ([profiler.Profiler.Deltas]):
// alloc values and the raw sums (alloc_samples, alloc_tail) over the
// interval, in-use values absolute at its end, the window marked
// "arenaprof window=both". The profiler stays the caller's to stop.
func ProfilerSource(p *profiler.Profiler) Source { return &profilerSource{p: p} }

type profilerSource struct {
	p *profiler.Profiler
	// deltas gives the window of each interval, and b builds the
	// profiles the agent encodes: each reuses its memory every interval
	// (docs/agent-cost.md).
	deltas func() *profiler.Snapshot
	b      profbuild.Builder
}

func (s *profilerSource) Name() string { return "arena" }

func (s *profilerSource) Start(context.Context) error {
	if s.p == nil {
		return errors.New("nil profiler")
	}
	s.deltas = s.p.Deltas()
	return nil
}

func (s *profilerSource) Collect(context.Context) (*profile.Profile, error) {
	d, err := s.next()
	if err != nil {
		return nil, err
	}
	return export.Build(d)
}

// collectEncoded is Collect with the profile built in the source's
// Builder: valid until the next interval, which the agent encodes at
// once (see reusedEncodable).
func (s *profilerSource) collectEncoded(context.Context) (encodable, error) {
	d, err := s.next()
	if err != nil {
		return nil, err
	}
	p, err := s.b.Build(d)
	if err != nil {
		return nil, err
	}
	return reusedEncodable{profileEncodable{p}}, nil
}

// next returns the delta of the interval: valid until the next call.
func (s *profilerSource) next() (*profiler.Snapshot, error) {
	if s.p == nil {
		return nil, errors.New("nil profiler")
	}
	if s.deltas == nil { // Collect without Start: the window starts now
		s.deltas = s.p.Deltas()
	}
	return s.deltas(), nil
}

// reusedEncodable is a profile built in a source's memory, which the
// source reuses at its next interval: the decoded profile an uploader
// keeps (see encodable.profile) is a copy.
type reusedEncodable struct{ profileEncodable }

func (e reusedEncodable) profile() (*profile.Profile, error) { return e.p.Copy(), nil }
