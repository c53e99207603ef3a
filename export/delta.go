package export

import (
	"errors"
	"sync"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/profiler"
)

// Deltas hands out consecutive delta profiles of one profiler: each call to
// [Deltas.Next] returns the profile of the window since the previous call
// (the first one, since the profiler started). Consecutive windows tile
// time: merging every profile Next returned gives the alloc values of the
// whole run. It is what a continuous-profiling agent calls once per
// upload interval. A Deltas is safe for concurrent use.
type Deltas struct {
	p    *profiler.Profiler
	mu   sync.Mutex
	prev *profiler.Snapshot
}

// NewDeltas returns a Deltas whose first window starts when p started.
func NewDeltas(p *profiler.Profiler) *Deltas { return &Deltas{p: p} }

// NextSnapshot returns the snapshot of the window since the previous call.
// The first window, since Start, is marked WindowEnd; later ones WindowBoth.
func (d *Deltas) NextSnapshot() (*profiler.Snapshot, error) {
	if d == nil || d.p == nil {
		return nil, errors.New("export: Deltas without a profiler")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	cur := d.p.Snapshot()
	s, err := profiler.Delta(d.prev, cur)
	if err != nil {
		return nil, err
	}
	d.prev = cur
	return s, nil
}

// Next returns the profile of the window since the previous call: alloc
// values and raw sums over the window, in-use values at its end.
func (d *Deltas) Next() (*profile.Profile, error) {
	s, err := d.NextSnapshot()
	if err != nil {
		return nil, err
	}
	return BuildSnapshot(s)
}
