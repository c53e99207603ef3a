package agent

import (
	"context"
	"errors"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/export/internal/profbuild"
	"github.com/arenaprof/arenaprof/profiler"
)

// ArenasSource returns the live-arenas profile source, named "arenas": at
// each interval's end, [export.BuildArenas] of the arenas live then
// (where arena memory is held: exact counts and bytes, not a delta).
func ArenasSource() Source { return &arenasSource{} }

type arenasSource struct {
	b profbuild.Builder // of the profiles the agent encodes
}

func (*arenasSource) Name() string { return "arenas" }

func (*arenasSource) Collect(context.Context) (*profile.Profile, error) {
	return export.BuildArenas()
}

// collectEncoded is Collect with the profile built in the source's
// Builder (see reusedEncodable).
func (s *arenasSource) collectEncoded(context.Context) (encodable, error) {
	p, err := s.b.Arenas()
	if err != nil {
		return nil, err
	}
	return reusedEncodable{profileEncodable{p}}, nil
}

// PeakSource returns the peak profile source, named "peak", of a running
// profiler: for each interval, the profile of the peak within it (the
// in-use profile at the highest estimated live arena bytes of the
// interval, as [export.PeakHandler] serves it for a seconds=N window), or
// nothing when no sampled object was live in it.
func PeakSource(p *profiler.Profiler) Source { return &peakSource{p: p} }

type peakSource struct {
	p    *profiler.Profiler
	take func() profiler.Peak // of the peak watch started by Start
	b    profbuild.Builder    // of the profiles the agent encodes
}

func (s *peakSource) Name() string { return "peak" }

func (s *peakSource) Start(context.Context) error {
	if s.p == nil {
		return errors.New("nil profiler")
	}
	s.take, _ = s.p.WatchPeak()
	return nil
}

// Collect places each peak at its moment. Two windows whose peaks carry the
// same moment (snapshots taken after the profiler stopped all end at its
// stop), or moments within a millisecond, are set apart by the agent (see
// laterStamp), since Pyroscope keeps one profile per series and
// millisecond.
func (s *peakSource) Collect(context.Context) (*profile.Profile, error) {
	return profbuild.Peak(s.take())
}

// collectEncoded is Collect with the profile built in the source's
// Builder (see reusedEncodable).
func (s *peakSource) collectEncoded(context.Context) (encodable, error) {
	p, err := s.b.Peak(s.take())
	if err != nil || p == nil {
		return nil, err
	}
	return reusedEncodable{profileEncodable{p}}, nil
}
