package arena

import (
	"runtime"
	"sync/atomic"

	"github.com/arenaprof/arenaprof/hooks"
)

// addCleanup makes the garbage collector release an arena that is dropped
// without Reset or Free: once the arena is unreachable, consumers are told
// (through [hooks.Release]) that its objects are gone, as Reset or Free
// would have told them, so in-use profiles do not keep counting them. The
// cleanup sees only the arena's ID and the shared unreleased flag, never
// the arena itself, and releases only if an event was emitted since the
// arena's last release.
func (a *Arena) addCleanup() {
	a.unreleased = new(atomic.Bool)
	runtime.AddCleanup(a, releaseDropped, dropped{a.id, a.unreleased, a.hold})
}

type dropped struct {
	id         uint64
	unreleased *atomic.Bool
	hold       *holding
}

func releaseDropped(d dropped) {
	unregister(d.hold)
	if d.unreleased.Load() {
		d.unreleased.Store(false)
		hooks.Release(d.id)
	}
}
