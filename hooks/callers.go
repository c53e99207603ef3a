package hooks

import "sync/atomic"

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
