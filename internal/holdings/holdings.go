// Package holdings is what the process's arenas hold now, as package
// arena's registry of live arenas reports it, for the live-arenas profile
// (package export) and the agent that uploads it. Package arena installs
// the reader when it is linked in; a program without it has no arenas.
package holdings

import (
	"sync/atomic"
	"time"
)

// Labels is an arena's label set as a Holding carries it: package hooks'
// *Labels, seen through the two methods the live-arenas profile needs (so
// that this package does not import hooks).
type Labels interface {
	// Key is a canonical encoding of the set: equal sets, equal keys.
	Key() string
	// All calls yield for each label in key order.
	All(yield func(key, value string) bool)
}

// Holding is what one live arena holds, or, for the idle arenas of a pool,
// what they hold together.
type Holding struct {
	// Stack is where the arena was made (the caller of NewArena) or taken
	// (the caller of Pool.Get), as runtime.Callers gives it; for the idle
	// arenas of a pool, where the pool's first arena was taken. It may
	// start with frames of package arena. It must not be modified.
	Stack []uintptr
	// Labels are the arena's labels: nil for none (idle arenas, arenas
	// without labels).
	Labels Labels
	// Age is the time since the arena was made or taken (for idle arenas,
	// zero). Taken arenas read a clock refreshed every 100 ms, so their
	// ages may be up to about 0.2 s too old.
	Age time.Duration
	// Arenas is 1 for a live arena, the number of idle arenas for a pool.
	Arenas int64
	// Reserved is the bytes of chunks and large buffers held.
	Reserved int64
	// Heap is the bytes of the Go heap the chunks and the large buffers
	// Reset keeps take: each allocation's size class and malloc header
	// included. Checked mode's chunks are mapped off the heap and take
	// none; large buffers Reset does not keep are the caller's (the arena
	// holds no reference to them) and are not counted.
	Heap int64
	// Fresh is the part of Heap taken since the garbage collection
	// numbered Cycle completed (of /gc/cycles/total:gc-cycles), as far as
	// package arena knows: it learns of a collection after it ends, so
	// memory taken in between counts as taken before (Fresh errs low).
	Fresh int64
	// Cycle is the number of completed garbage collections Fresh is
	// counted from. Package arena's count may lag the runtime's: where
	// Cycle is below the runtime's, Fresh says nothing of the runtime's
	// last collection.
	Cycle uint64
	// Used is the bytes handed out since the last Reset (for idle arenas,
	// zero): exact for an arena not in use while the registry is read, and
	// off by at most a chunk per type of value for one being allocated
	// from at that moment.
	Used int64
	// Loose is the part of Used handed out in large buffers Reset does
	// not keep (see Heap).
	Loose int64
	// Pool is, for idle arenas, a number that tells their pool apart from
	// the process's other pools; zero for a live arena.
	Pool uint64
}

var reader atomic.Pointer[func() []Holding]

// SetReader installs the function Read calls and returns the one it
// replaces (nil if none). Package arena calls it at init; tests install
// fixed holdings with it.
func SetReader(f func() []Holding) func() []Holding {
	var p *func() []Holding
	if f != nil {
		p = &f
	}
	old := reader.Swap(p)
	if old == nil {
		return nil
	}
	return *old
}

// Read returns what the process's arenas hold now: one Holding per live
// arena (made and not freed, or taken from a pool and not put back), then
// one per pool that has idle arenas. An arena is listed from the first
// time it takes memory (a chunk or a large buffer); one that has never
// allocated holds nothing and is not. Freed arenas, and arenas the
// garbage collector dropped, are not listed. The counts and bytes are exact, not
// sampled. It returns nil when package arena is not linked in.
func Read() []Holding {
	if f := reader.Load(); f != nil {
		return (*f)()
	}
	return nil
}
