package unwind

import (
	"hash/maphash"
	"slices"
	"sync/atomic"
	"unsafe"
)

// FastStack returns the calling goroutine's stack as [FastCallers] would
// write it into a buffer of len(scratch) pcs, with the same skip (physical
// frames), and a hash of the stack's physical frames, or 0 if it has none
// (see [Event.StackHash]). The stack is valid until scratch is used again;
// do not modify it.
//
// An event needs the stack in the form runtime.Callers gives (one pc per
// logical frame, inlined calls included), but expanding each physical
// frame into its logical ones costs more than the rest of the event. So
// FastStack keeps the expansions of the stacks it has seen: it walks the
// frame pointers into scratch (a few nanoseconds per frame), and looks the
// physical frames up in a process-wide table of expanded stacks. Only a
// stack not seen before, or evicted since, is expanded; its expansion is
// then kept, immutable and shared. A process whose events come from more
// distinct stacks than the table holds (4096) still gets right stacks, at
// the cost of more expansions.
//
// Where FastCallers does not follow frame pointers (see
// [SetFramePointerUnwinding]), FastStack is FastCallers into scratch.
//
//go:noinline
func FastStack(skip int, scratch []uintptr) (stack []uintptr, hash uint64) {
	if len(scratch) == 0 {
		return nil, 0
	}
	if !framePointers.Load() || !haveFramePointers {
		return scratch[:portableCallers(skip, scratch)], 0
	}
	n := physicalCallers(skip, scratch)
	e := internStack(scratch[:n], len(scratch))
	return e.logical, e.hash | 1 // never 0
}

// PhysicalStack writes the return pcs of the calling goroutine's physical
// frames into pcs, skipping skip physical frames as [FastStack] does, and
// returns how many it wrote; it returns 0 where FastStack does not follow
// frame pointers (see [SetFramePointerUnwinding]). The pcs are not
// expanded into logical frames, so they are not a stack in the form
// runtime.Callers gives, but two calls that write the same pcs (with the
// same len(pcs)) would get the same stack from FastStack: an allocator
// that records a stack per operation can walk the frames (a few
// nanoseconds per frame) and skip FastStack when they are those of its
// previous call.
//
//go:noinline
func PhysicalStack(skip int, pcs []uintptr) int {
	if !framePointers.Load() || !haveFramePointers {
		return 0
	}
	return physicalCallers(skip, pcs)
}

// RepeatPhysicalStack is [PhysicalStack] for a caller that keeps the
// frames of its previous call: pcs[:n] holds them on entry. It walks the
// frames into pcs, comparing as it goes, and reports whether they are the
// same n frames; a caller that records a stack per operation pays one walk
// and no copy when the stack did not change. Where PhysicalStack returns
// 0, it returns 0 and false.
//
//go:noinline
func RepeatPhysicalStack(skip int, pcs []uintptr, n int) (int, bool) {
	if !framePointers.Load() || !haveFramePointers {
		return 0, false
	}
	return physicalRepeat(skip, pcs, n)
}

// stackCacheSize is the number of entries of the table of expanded stacks
// (a power of two).
const stackCacheSize = 1 << 12

// stackEntry is the expansion of one physical stack into at most limit
// logical pcs. Entries are immutable once published.
type stackEntry struct {
	hash     uint64
	limit    int
	physical []uintptr
	logical  []uintptr
}

var (
	stackCache [stackCacheSize]atomic.Pointer[stackEntry]
	stackSeed  = maphash.MakeSeed()
)

// internStack returns the entry of the physical stack phys expanded into
// at most limit logical pcs, from the table or made and put there.
func internStack(phys []uintptr, limit int) *stackEntry {
	var h uint64
	if len(phys) > 0 {
		h = maphash.Bytes(stackSeed, unsafe.Slice((*byte)(unsafe.Pointer(&phys[0])), len(phys)*int(unsafe.Sizeof(uintptr(0)))))
	}
	h ^= uint64(limit) * 0x9e3779b97f4a7c15
	slot := &stackCache[h>>(64-12)]
	if e := slot.Load(); e != nil && e.hash == h && e.limit == limit && slices.Equal(e.physical, phys) {
		return e
	}
	logical := make([]uintptr, 0, len(phys)+8)
	for _, pc := range phys {
		if len(logical) >= limit {
			break
		}
		x := inlineExpansion(pc)
		logical = append(logical, x[:min(len(x), limit-len(logical))]...)
	}
	e := &stackEntry{hash: h, limit: limit, physical: slices.Clone(phys), logical: slices.Clip(logical)}
	slot.Store(e)
	return e
}
