package profiler

import (
	"testing"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/hooks"
)

// Stats.PoolGets counts the arenas arena.Pool.Get hands out while the
// profiler listens, since Start; a delta counts its window's; Gets before
// Start, after Stop or while sampling is off are not counted.
func TestStatsPoolGets(t *testing.T) {
	setMeanBytes(t, 4096)
	pool := arena.NewPool()
	take := func(n int) {
		for range n {
			pool.Put(pool.Get(nil))
		}
	}
	take(5) // before Start
	p, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	take(7)
	first := p.Snapshot()
	take(3)
	hooks.SetMeanBytes(0) // sampling off: not counted
	take(4)
	hooks.SetMeanBytes(4096)
	take(2)
	p.Stop()
	take(6) // after Stop
	last := p.Snapshot()
	d, err := Delta(first, last)
	if err != nil {
		t.Fatal(err)
	}
	if first.Stats.PoolGets != 7 || last.Stats.PoolGets != 12 || d.Stats.PoolGets != 5 {
		t.Errorf("PoolGets: %d at the first snapshot (want 7), %d at the last (want 12), %d in the delta (want 5)",
			first.Stats.PoolGets, last.Stats.PoolGets, d.Stats.PoolGets)
	}
}
