//go:build (amd64 || arm64) && !arenaprof_nofp

package unwind

import (
	"runtime"
	"strings"
	"sync/atomic"
	"unsafe"
)

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
// pointers, as the runtime's execution tracer does, instead of decoding
// the unwinding tables: a 20-frame stack costs a few hundred nanoseconds
// instead of microseconds. The inlined calls of each physical frame are
// looked up once per program counter and cached. On other
// architectures, and while [SetFramePointerUnwinding] is off, it is built
// on runtime.Callers.
//
//go:noinline
func FastCallers(skip int, pcs []uintptr) int {
	if !framePointers.Load() {
		return portableCallers(skip, pcs)
	}
	fp := getfp() // FastCallers' own frame; its return address is in the caller
	for ; skip > 0 && fp != nil; skip-- {
		fp = nextFrame(fp)
	}
	n := 0
	for n < len(pcs) && fp != nil {
		pc := *(*uintptr)(unsafe.Add(fp, unsafe.Sizeof(uintptr(0))))
		n += expandPC(pc, pcs[n:])
		fp = nextFrame(fp)
	}
	return n
}

// haveFramePointers says whether this build can follow frame pointers.
const haveFramePointers = true

// physicalCallers writes the return pcs of the physical frames of the stack
// of FastStack's caller into pcs, skipping skip physical frames as
// FastCallers does, and returns how many it wrote.
//
//go:noinline
func physicalCallers(skip int, pcs []uintptr) int {
	// physicalCallers' own frame, then FastStack's.
	fp := nextFrame(getfp())
	for ; skip > 0 && fp != nil; skip-- {
		fp = nextFrame(fp)
	}
	n := 0
	for n < len(pcs) && fp != nil {
		pcs[n] = *(*uintptr)(unsafe.Add(fp, unsafe.Sizeof(uintptr(0))))
		n++
		fp = nextFrame(fp)
	}
	return n
}

// physicalRepeat is physicalCallers comparing with the n pcs of a
// previous walk as it writes: it returns how many it wrote and whether
// they are the same n.
//
//go:noinline
func physicalRepeat(skip int, pcs []uintptr, n int) (int, bool) {
	// physicalRepeat's own frame, then RepeatPhysicalStack's.
	fp := nextFrame(getfp())
	for ; skip > 0 && fp != nil; skip-- {
		fp = nextFrame(fp)
	}
	same := true
	i := 0
	for i < len(pcs) && fp != nil {
		pc := *(*uintptr)(unsafe.Add(fp, unsafe.Sizeof(uintptr(0))))
		if pcs[i] != pc {
			pcs[i] = pc
			same = false
		}
		i++
		fp = nextFrame(fp)
	}
	return i, same && i == n
}

// nextFrame returns the frame pointer saved in the frame at fp: the
// caller's frame, or nil at the bottom of the stack. A caller's frame lies
// above its callee's on the stack, so a saved pointer that does not move
// up (or is misaligned) ends the walk instead of being followed.
func nextFrame(fp unsafe.Pointer) unsafe.Pointer {
	next := *(*unsafe.Pointer)(fp)
	if uintptr(next) <= uintptr(fp) || uintptr(next)%unsafe.Sizeof(uintptr(0)) != 0 {
		return nil
	}
	return next
}

// inlineCacheSize is the number of entries of the inlining cache (a power
// of two): a process whose sampled stacks pass through more distinct call
// sites than this still works, at the cost of more misses.
const inlineCacheSize = 1 << 12

// inlineEntry is the expansion of one physical frame's return pc into the
// pcs runtime.Callers reports for it: the pc itself for the innermost
// logical frame, then one pc per enclosing function it was inlined into.
// Entries are immutable once published.
type inlineEntry struct {
	pc  uintptr
	pcs []uintptr
}

var inlineCache [inlineCacheSize]atomic.Pointer[inlineEntry]

// expandPC writes the logical pcs of the physical frame whose return pc is
// pc into dst, as many as fit, and returns how many it wrote.
func expandPC(pc uintptr, dst []uintptr) int {
	return copy(dst, inlineExpansion(pc))
}

// inlineExpansion returns the logical pcs of the physical frame whose
// return pc is pc, from the inlining cache. The result must not be
// modified.
func inlineExpansion(pc uintptr) []uintptr {
	slot := &inlineCache[(uint64(pc)*0x9e3779b97f4a7c15)>>(64-12)]
	e := slot.Load()
	if e == nil || e.pc != pc {
		e = &inlineEntry{pc: pc, pcs: expandSlow(pc)}
		slot.Store(e)
	}
	return e.pcs
}

// expandSlow symbolizes pc with runtime.CallersFrames. The pc is passed
// twice so that CallersFrames, which expands the inlined calls of a pc
// only when more pcs follow, expands the first copy; the expansion ends at
// the frame of the physical function (the one with a Func).
func expandSlow(pc uintptr) []uintptr {
	frames := runtime.CallersFrames([]uintptr{pc, pc})
	var out []uintptr
	for {
		f, more := frames.Next()
		if f.Function == "" {
			// Not Go code the runtime knows: keep the pc as it is.
			return append(out[:0], pc)
		}
		if f.Func != nil {
			// The physical function. runtime.Callers leaves out the
			// compiler-generated wrappers (method wrappers, the closures
			// behind generic function values, the functions that run go
			// and defer statements); so does this.
			if isWrapper(f.Function, f.File) {
				return out
			}
			return append(out, f.PC+1)
		}
		out = append(out, f.PC+1)
		if !more {
			return out
		}
	}
}

// isWrapper reports whether a function is one the compiler generated to
// adapt a call: in "<autogenerated>" code, or named like the wrappers of go
// and defer statements ("pkg.f.gowrap1", "pkg.f.deferwrap2").
func isWrapper(function, file string) bool {
	if file == "<autogenerated>" {
		return true
	}
	name := function[strings.LastIndexByte(function, '.')+1:]
	for _, prefix := range []string{"gowrap", "deferwrap"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok && rest != "" &&
			strings.Trim(rest, "0123456789") == "" {
			return true
		}
	}
	return false
}
