//go:build !(amd64 || arm64) || arenaprof_nofp

package unwind

// FastCallers fills pcs with the return program counters of the calling
// goroutine's stack, leaf first, and returns how many it wrote. The result
// has the form [runtime.Callers] gives (one entry per logical frame,
// inlined calls included), so [runtime.CallersFrames] symbolizes it and it
// can stand wherever a runtime.Callers stack is expected; like
// runtime.Callers, it stops when pcs is full.
//
// Unlike [Callers], skip counts PHYSICAL frames: skip = 0 makes the caller
// of FastCallers the leaf physical frame, and each further unit drops one
// more physical frame together with every call inlined into it. The
// result therefore depends on the compiler's inlining decisions; callers
// that skip frames of their own mark them //go:noinline. A negative skip
// counts as 0.
//
// On amd64 and arm64 FastCallers follows the chain of saved frame
// pointers. On this architecture it is built on runtime.Callers and
// runtime.CallersFrames (to tell physical frames apart), and costs more
// than runtime.Callers alone.
//
//go:noinline
func FastCallers(skip int, pcs []uintptr) int { return portableCallers(skip, pcs) }

// haveFramePointers says whether this build can follow frame pointers.
const haveFramePointers = false

// physicalCallers is not used where frame pointers are not followed.
func physicalCallers(int, []uintptr) int { return 0 }

// physicalRepeat is not used where frame pointers are not followed.
func physicalRepeat(int, []uintptr, int) (int, bool) { return 0, false }

// inlineExpansion is not used where frame pointers are not followed.
func inlineExpansion(pc uintptr) []uintptr { return []uintptr{pc} }
