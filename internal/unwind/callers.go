package unwind

import (
	"runtime"
	"sync/atomic"
)

// framePointers says whether FastCallers may follow frame pointers.
var framePointers atomic.Bool

func init() { framePointers.Store(true) }

// SetFramePointerUnwinding turns the frame-pointer walk of [FastCallers]
// (and so of the arena's stack capture) on or off and returns the previous
// setting. It is on by default on amd64 and arm64, where it makes a sample
// event about ten times cheaper.
//
// Turn it off in a program whose Go code called from C (a cgo callback)
// allocates from arenas or emits events: C frames need not keep the
// frame-pointer chain, and the walk could follow a bad pointer. The Go
// runtime's own tracer makes the same exception. With it off, stacks come
// from runtime.Callers, with the same result and a higher cost.
func SetFramePointerUnwinding(on bool) (previous bool) {
	return framePointers.Swap(on)
}

// MaxStackDepth is the number of frames allocators capture per event.
const MaxStackDepth = 64

// Callers fills pcs with the return program counters of the calling
// goroutine's stack, as [runtime.Callers] does, and returns how many it
// wrote. skip = 0 makes the caller of Callers the leaf frame; each further
// unit skips one more logical frame (inlined frames count, so the result
// does not depend on the compiler's inlining decisions). [FastCallers] gives
// the same stacks at a fraction of the cost, but counts physical frames.
func Callers(skip int, pcs []uintptr) int {
	return runtime.Callers(skip+2, pcs)
}
