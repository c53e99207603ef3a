package arena

import (
	"runtime"
	"runtime/metrics"
	"sync/atomic"

	"github.com/arenaprof/arenaprof/hooks"
)

// An arena dropped without Reset or Free is released by the garbage
// collector: once the arena is unreachable, consumers are told (through
// [hooks.Release]) that its objects are gone, as Reset or Free would have
// told them, so in-use profiles do not keep counting them, and its record
// leaves the registry of live arenas.
//
// The registry already holds a weak pointer to every arena, and the
// garbage collector clears it when the arena is collected; so instead of a
// cleanup per arena (runtime.AddCleanup: an allocation and a record on
// the arena's span, about a fifth of NewArena), one cleanup per garbage
// collection sweeps the registry for arenas whose weak pointer is now nil.
// It runs after every collection while the registry holds arenas, and
// releases an arena only if an event was emitted since its last release.
// It also tells the registry that a collection ended (gcEpoch), for the
// live and dead split of the arenas' heap bytes.

// sweepArmed is whether a sweep will run after the next collection.
var sweepArmed atomic.Bool

// armSweep makes sure the registry is swept after the next collection.
func armSweep() {
	if sweepArmed.Load() || !sweepArmed.CompareAndSwap(false, true) {
		return
	}
	// No sweep was armed: gcEpoch may be many collections old.
	refreshEpoch()
	runtime.AddCleanup(new(gcSentinel), sweepDropped, 0)
}

// gcEpoch is the number of completed garbage collections as last read
// from runtime/metrics: by the sweep after each collection while the
// registry holds arenas, and when an arena arms the sweep. It never
// exceeds the true count; it lags it between the end of a collection and
// the sweep's run (the cleanup goroutine's scheduling), or by one
// collection when the sweep was armed while a collection was marking
// (its sentinel survives that one). A chunk is stamped with it (see
// noteReserved), so a chunk made in such a lag counts as made before the
// last collection.
//
// Reading /gc/cycles/total:gc-cycles at each chunk instead would be exact
// but costs about 90 ns and a process-wide semaphore per chunk (a fifth
// of a small slab's allocation); gcEpoch costs the slow path one load.
var gcEpoch atomic.Uint64

// refreshEpoch sets gcEpoch to the completed collections now.
func refreshEpoch() {
	s := [1]metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s[:])
	if s[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	n := s[0].Value.Uint64()
	for {
		old := gcEpoch.Load()
		if n <= old || gcEpoch.CompareAndSwap(old, n) {
			return
		}
	}
}

// gcSentinel is an object nothing points to: its cleanup runs after the
// next collection. It holds a pointer so that it is not combined with
// other small objects (a cleanup on such an object may never run).
type gcSentinel struct {
	_ *gcSentinel
	_ [8]byte
}

// sweepDropped updates gcEpoch, releases the arenas the garbage collector
// has collected, and arms the next sweep while arenas remain. It runs on
// the runtime's cleanup goroutine.
func sweepDropped(int) {
	refreshEpoch()
	// Disarm first: an arena registered from now on arms the next sweep
	// itself, or is seen below.
	sweepArmed.Store(false)
	var dropped []*holding
	registry.mu.Lock()
	for _, h := range registry.all {
		if h.arena.Value() == nil {
			dropped = append(dropped, h)
		}
	}
	remain := len(registry.all) > len(dropped)
	registry.mu.Unlock()
	for _, h := range dropped {
		releaseDropped(h)
	}
	// gcEpoch is fresh: arm without reading it again.
	if remain && sweepArmed.CompareAndSwap(false, true) {
		runtime.AddCleanup(new(gcSentinel), sweepDropped, 0)
	}
}

// releaseDropped unregisters the collected arena of h and releases its
// objects.
func releaseDropped(h *holding) {
	unregister(h)
	if h.unreleased.Load() {
		h.unreleased.Store(false)
		hooks.Release(h.id)
	}
}
