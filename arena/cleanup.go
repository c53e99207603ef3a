package arena

import (
	"runtime"

	"github.com/arenaprof/arenaprof/hooks"
)

// addCleanup makes the garbage collector release an arena that is dropped
// without Reset or Free: once the arena is unreachable, consumers are told
// (through [hooks.Release]) that its objects are gone, as Reset or Free
// would have told them, so in-use profiles do not keep counting them. The
// cleanup sees only the arena's record in the registry of live arenas
// (its ID and unreleased flag), never the arena itself, and releases only
// if an event was emitted since the arena's last release. The record is
// passed as one pointer, so AddCleanup allocates nothing for it.
func (a *Arena) addCleanup() {
	runtime.AddCleanup(a, releaseDropped, a.hold)
}

func releaseDropped(h *holding) {
	unregister(h)
	if h.unreleased.Load() {
		h.unreleased.Store(false)
		hooks.Release(h.id)
	}
}
