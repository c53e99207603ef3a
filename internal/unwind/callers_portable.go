package unwind

import "runtime"

// portableCallers is FastCallers built on runtime.Callers and
// runtime.CallersFrames (to tell physical frames apart): the implementation
// on architectures without a frame-pointer walk, and the one used when
// frame-pointer unwinding is turned off. skip = 0 makes the caller of
// FastCallers the leaf physical frame.
//
//go:noinline
func portableCallers(skip int, pcs []uintptr) int {
	if len(pcs) == 0 {
		return 0
	}
	skip = max(skip, 0)
	// The logical frames of the skipped physical frames are unknown in
	// advance: capture more until the whole stack or plenty is in.
	limit := 16*(skip+len(pcs)) + 64
	buf := make([]uintptr, min(2*(skip+len(pcs))+16, limit))
	var n int
	for {
		n = runtime.Callers(3, buf) // from the caller of FastCallers
		if n < len(buf) || len(buf) >= limit {
			break
		}
		buf = make([]uintptr, min(2*len(buf), limit))
	}
	// runtime.CallersFrames gives one Frame per pc of a runtime.Callers
	// stack; a physical frame ends with the Frame that has a Func.
	i := 0
	frames := runtime.CallersFrames(buf[:n])
	for skip > 0 && i < n {
		f, more := frames.Next()
		i++
		if f.Func != nil || f.Function == "" {
			skip--
		}
		if !more {
			break
		}
	}
	if skip > 0 {
		return 0
	}
	return copy(pcs, buf[i:n])
}
