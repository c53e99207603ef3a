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
	// The memory of the snapshot before prev and of the last delta, and
	// the builder of the profiles the agent encodes: reused each
	// interval (docs/agent-cost.md).
	spare, delta *profiler.Snapshot
	b            profbuild.Builder
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

// next takes the current snapshot and returns the delta of the
// interval, in the memory of the snapshot before the previous one and of
// the last delta: neither is used any more.
func (s *profilerSource) next() (*profiler.Snapshot, error) {
	cur := s.p.SnapshotReuse(s.spare)
	prev := s.prev
	s.spare, s.prev = nil, cur
	d, err := profiler.DeltaReuse(s.delta, prev, cur)
	s.delta = nil
	if err != nil {
		return nil, err
	}
	if d != cur {
		// Without Start, the first delta is cur itself: its memory
		// is not the delta's to give.
		s.delta = d
	}
	s.spare = prev
	return d, nil
}

// reusedEncodable is a profile built in a source's memory, which the
// source reuses at its next interval: the decoded profile an uploader
// keeps (see encodable.profile) is a copy.
type reusedEncodable struct{ profileEncodable }

func (e reusedEncodable) profile() (*profile.Profile, error) { return e.p.Copy(), nil }
