package arena

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Checked mode (see the package documentation, "Finding a use after Reset")
// trades speed and memory for catching the use of arena memory after Reset,
// Put or Free:
//
//   - the byte chunks and large buffers of pointer-free values are mapped
//     memory of their own (mapChecked); Reset, Put and Free make them
//     inaccessible (retire) and never hand them out again, so a later read
//     or write faults;
//   - slabs and large buffers of types with pointers stay ordinary typed
//     memory the garbage collector scans; Reset clears them (every pointer
//     word becomes nil) and drops them instead of keeping them for reuse,
//     so a stale value reads zeros and following a pointer read from it
//     panics.
//
// The fast path does not know about any of this: it bumps in whatever
// chunk the slow path installed. Only NewArena, the chunk refill, the
// large-object path, Reset and Free look at a.checked.

// checkedEnv is the environment variable that turns checked mode on for
// every arena made without WithChecked: ARENAPROF_CHECKED=1 (or any value
// strconv.ParseBool reads as true). It is read once, when the program
// starts.
const checkedEnv = "ARENAPROF_CHECKED"

// checkedDefault is the checked mode of arenas made without WithChecked.
var checkedDefault = checkedFromEnv(os.Getenv(checkedEnv), os.Stderr)

// checkedFromEnv reads the value of checkedEnv; it says so on w when the
// value is not a boolean (checked mode then stays off).
func checkedFromEnv(v string, w io.Writer) bool {
	if v == "" {
		return false
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		fmt.Fprintf(w, "arenaprof: %s=%q is not a boolean (1, true, 0, false): checked mode stays off\n", checkedEnv, v)
	}
	return on
}

// WithChecked turns checked mode on or off for the arena, or for every
// arena of a pool, whatever the environment variable ARENAPROF_CHECKED
// says (ARENAPROF_CHECKED=1, read once when the program starts, turns it
// on for every arena made without WithChecked). In checked mode a read or
// write of pointer-free arena memory (values of [New] and [MakeSlice]
// without pointers, [String], [Bytes], [Append]) after the arena's Reset,
// Put or Free stops the program with a fault, and values with pointers
// are cleared and never handed out again. It is a debugging aid: see the
// package documentation for what it catches and what it costs.
func WithChecked(on bool) Option {
	return func(c *config) {
		c.checked = -1
		if on {
			c.checked = 1
		}
	}
}

// checkedArena is the checked-mode state of an arena. It never points to
// the arena, so that the cleanup of a dropped arena can retire its memory.
type checkedArena struct {
	mu   sync.Mutex // the cleanup of a dropped arena runs on another goroutine
	made []uintptr  // the stack of the NewArena (or first Pool.Get) that made the arena
	live []span     // mapped pointer-free memory handed to the arena since its last release
}

// checkedMapped counts the bytes checked mode has mapped, and
// checkedReleases the releases of checked arenas, for tests and benchmarks.
var checkedMapped, checkedReleases atomic.Uint64

// span is a mapped region of pointer-free memory.
type span struct {
	base unsafe.Pointer
	size uintptr // bytes mapped
}

// newChecked returns the checked-mode state of a new arena, or nil when
// the arena is not checked. mode is config.checked.
func newChecked(a *Arena, mode int8) *checkedArena {
	if mode < 0 || mode == 0 && !checkedDefault {
		return nil
	}
	var pcs [32]uintptr
	n := runtime.Callers(3, pcs[:]) // Callers, newChecked, NewArena
	c := &checkedArena{made: append([]uintptr(nil), pcs[:n]...)}
	runtime.AddCleanup(a, func(c *checkedArena) { c.release(howDropped, nil) }, c)
	return c
}

// How an arena's memory was released, for the report of a fault.
const (
	howReset   = "Reset"
	howPut     = "Pool.Put"
	howFree    = "Free"
	howDropped = "the garbage collector (its arena was dropped without Free or Put)"
)

// mapChunk returns a new mapped chunk of at least n bytes, with the 8
// bytes of slack newChunk gives every byte chunk.
func (c *checkedArena) mapChunk(n uintptr) unsafe.Pointer {
	size := pageRound(n + 8)
	p := mapChecked(size)
	checkedMapped.Add(uint64(size))
	c.mu.Lock()
	c.live = append(c.live, span{p, size})
	c.mu.Unlock()
	return p
}

// release retires every mapped region of the arena: it can no longer be
// read or written. how and the stack pcs say who released it.
func (c *checkedArena) release(how string, pcs []uintptr) {
	c.mu.Lock()
	for _, s := range c.live {
		retire(s, how, c.made, pcs)
	}
	clear(c.live)
	c.live = c.live[:0]
	c.mu.Unlock()
	checkedReleases.Add(1)
}

// pageRound rounds n up to a multiple of the page size.
func pageRound(n uintptr) uintptr {
	p := uintptr(os.Getpagesize())
	return (n + p - 1) &^ (p - 1)
}

// resetChecked is Reset (and Free) in checked mode: pointer-free memory is
// retired, memory with pointers is cleared and dropped; nothing is kept for
// reuse.
func (a *Arena) resetChecked(how string) {
	var pcs [32]uintptr
	n := runtime.Callers(3, pcs[:]) // Callers, resetChecked, Reset or Free
	if how == howReset && a.pooled {
		how = howPut
	}
	a.checked.release(how, pcs[:n])
	a.dropChecked(&a.bytes)
	for _, r := range a.slabs {
		a.dropChecked(r)
	}
}

// dropChecked empties a region of a checked arena. Its pointer-free memory
// was retired; typed memory is cleared, so that the garbage collector
// frees what it pointed to and a stale pointer read from it is nil, and
// dropped, so that it is never handed out again.
func (a *Arena) dropChecked(r *region) {
	if r.ti != nil {
		if len(r.chunks) > 0 {
			r.chunks[r.cur].used = r.off
		}
		for _, c := range r.chunks {
			if c.used > 0 {
				r.ti.clear(c.base, int(c.used/r.ti.size), &r.scratch)
			}
		}
		for _, b := range r.largeUsed {
			r.ti.clear(b.base, int(b.used/r.ti.size), &r.scratch)
		}
	}
	clear(r.largeUsed)
	r.largeUsed = r.largeUsed[:0]
	r.chunks = nil
	r.next = 0 // the next chunk or slab starts small again
	// Carry the stream over, as resetRegion does.
	if r.sampleAt != noSample {
		r.sampleAt -= uint64(r.off)
	}
	r.cur, r.off, r.limit = 0, 0, 0
	if r.ti == nil {
		r.base = unsafe.Pointer(&zeroBase) // never nil: see newFast
	} else {
		r.base = nil
	}
	r.combined = combined(r)
}

// checkedChunk is newChunk for the byte region of a checked arena: mapped
// memory, one page at first after every Reset, then doubling up to the
// chunk size, so that an arena that serves small requests maps one page
// per request.
func (a *Arena) checkedChunk(r *region, n uintptr) chunk {
	if r.next == 0 {
		r.next = min(uintptr(os.Getpagesize())-8, a.chunkSize)
	}
	size := max(r.next, n)
	r.next = min(2*r.next+8, a.chunkSize)
	return chunk{base: a.checked.mapChunk(size), size: size}
}

// takeChecked is takeLarge in checked mode: a buffer of exactly n bytes,
// mapped for pointer-free values, never kept by Reset.
func (a *Arena) takeChecked(r *region, ti *typeInfo, count, n uintptr) unsafe.Pointer {
	b := largeBuf{size: n, used: n}
	if ti.ptrs {
		b.base = ti.newSlab(int(count))
	} else {
		b.base = a.checked.mapChunk(n)
	}
	r.largeUsed = append(r.largeUsed, b)
	return b.base
}
