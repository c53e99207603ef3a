package arena

import (
	"unsafe"

	"github.com/arenaprof/arenaprof/internal/samplingstate"
)

// Append appends elems to s and returns the result, like the built-in
// append, with the memory for a longer s taken from a:
//
//   - if s has room for elems (len(s)+len(elems) <= cap(s)), Append writes
//     them into s's backing array and touches nothing else, exactly as
//     append does, and does not look at a;
//   - else, if s's capacity ends exactly at a's next free byte (s is the
//     last thing a handed out from its chunk, or its tail) and the chunk has
//     room, Append grows s in place: it extends the capacity and hands the
//     new bytes out as an allocation of their own, sampled like any other;
//   - else it copies s and elems into a new slice allocated in a, whose
//     capacity grows geometrically as append's does (doubling small slices,
//     about 1.25x large ones), so that appending n elements one at a time
//     costs O(n) in time and arena memory.
//
// A nil s, or an s from the heap or another arena, is never grown in place:
// it is copied into a when it has no room. Appending nothing returns s.
//
// Unlike append, the result of an in-place growth still shares its first
// cap(s) elements with s: as with append, use only the returned slice
// (s = arena.Append(a, s, x)), and do not rely on the result being a copy
// when s was full.
//
// Memory from Append is owned by a: it must not be used after a's Reset or
// Put (see the package documentation; copy a value out with slices.Clone).
// Append panics if the result would be too large, or if a was freed and s
// has no room for elems.
func Append[T any](a *Arena, s []T, elems ...T) []T {
	return appendFast(a, s, elems, appendSlow[T])
}

// appendFast is Append's body: the append into s's spare capacity, else
// the slow path, passed as a parameter so that Append inlines (see
// newFast).
func appendFast[T any](a *Arena, s, elems []T, slow func(*Arena, []T, []T) []T) []T {
	if len(elems) <= cap(s)-len(s) {
		return append(s, elems...) // never grows: the inliner charges it less than copy
	}
	return slow(a, s, elems)
}

// AppendString appends the bytes of s to b and returns the result, like
// append(b, s...), with the memory for a longer b taken from a exactly as
// [Append] takes it: written into b when b has room, else grown in place
// or copied into a, and sampled like any other allocation.
func AppendString(a *Arena, b []byte, s string) []byte {
	// The string's bytes are only read (copied from): no write goes
	// through this slice.
	return appendFast(a, b, unsafe.Slice(unsafe.StringData(s), len(s)), appendSlow[byte])
}

// Grow returns s with its capacity increased, if necessary, to guarantee
// space for another n elements, like [slices.Grow], with the memory taken
// from a: after s = arena.Grow(a, s, n), n elements can be appended to s
// (with append, or [Append] without touching a) without another
// allocation. A longer capacity is found as [Append] finds it: in place
// when s ends at a's next free byte, else by copying s into a new slice of
// a; the new memory is sampled like any other allocation. The result has
// s's length and contents; the elements past its length are zero.
//
// Grow panics if n is negative or the capacity would be too large, or if
// a was freed and s has no room for n elements.
func Grow[T any](a *Arena, s []T, n int) []T {
	return growFast(a, s, n, growSlow[T])
}

// growFast is Grow's body, like appendFast.
func growFast[T any](a *Arena, s []T, n int, slow func(*Arena, []T, int) []T) []T {
	if uint(n) <= uint(cap(s)-len(s)) { // a negative n takes the slow path, which panics
		return s
	}
	return slow(a, s, n)
}

// growSlow is the part of Grow that takes memory from the arena.
//
//go:noinline
func growSlow[T any](a *Arena, s []T, n int) []T {
	return growBy(a, s, n, maxAlloc, "Grow")
}

// appendSlow is the part of Append that takes memory from the arena.
//
//go:noinline
func appendSlow[T any](a *Arena, s, elems []T) []T {
	t := growBy(a, s, len(elems), maxAlloc, "Append")
	t = t[:len(s)+len(elems)]
	copy(t[len(s):], elems)
	return t
}

// growBy returns s, or a copy of it in a, with room for n more elements:
// grown in place when s ends at a's next free byte, else copied into a new
// slice of a, with the capacity Append gives (nextCap), but never more than
// most elements (most >= len(s)+n). fn names the caller in panics.
func growBy[T any](a *Arena, s []T, n, most int, fn string) []T {
	a.check()
	oldLen, oldCap := len(s), cap(s)
	newLen := oldLen + n
	if n < 0 || newLen < oldLen {
		panic("arenaprof: arena." + fn + ": len out of range")
	}
	size := unsafe.Sizeof(*new(T))
	if size == 0 {
		// Like append: every zero-size slice points at one address.
		return unsafe.Slice((*T)(unsafe.Pointer(&zeroBase)), newLen)[:oldLen]
	}
	if uintptr(newLen) > maxAlloc/size {
		panic("arenaprof: arena." + fn + ": len out of range")
	}
	newCap := min(nextCap(newLen, oldCap, size), most)
	if oldCap > 0 {
		if t, ok := growInPlace(a, s, newCap); ok {
			return t[:oldLen]
		}
	}
	t := MakeSlice[T](a, oldLen, newCap)
	copy(t, s)
	return t
}

// nextCap is the capacity Append gives a slice that must hold newLen
// elements of size bytes and holds oldCap: the runtime's growth rule
// (double below 256 elements, then grow by about 1.25x plus 192 elements),
// rounded up so that the slice fills whole 8-byte words, the unit the byte
// chunks hand out.
func nextCap(newLen, oldCap int, size uintptr) int {
	c := newLen
	if dbl := 2 * oldCap; newLen <= dbl {
		if oldCap < 256 {
			c = dbl
		} else {
			c = oldCap
			for uint(c) < uint(newLen) {
				c += (c + 3*256) >> 2
			}
			if c <= 0 { // overflowed
				c = newLen
			}
		}
	}
	if uintptr(c) > maxAlloc/size {
		c = newLen // the geometric step overflows: grow to what is needed
	}
	return int(fastSize(uintptr(c)*size) / size)
}

// growInPlace extends s to capacity newCap in the region s was carved
// from, if s's capacity ends at the region's next free byte and the chunk
// has room. The new bytes are an allocation of their own, with their own
// trials: a bump when they lie before the region's combined limit (they
// hold no successful trial), else extend decides.
//
//go:noinline
func growInPlace[T any](a *Arena, s []T, newCap int) ([]T, bool) {
	var r *region
	var ptrs bool
	if layoutOK {
		ptrs = !pointerFree[T]()
	} else {
		ptrs = infoOf[T]().ptrs
	}
	if !ptrs {
		r = &a.bytes
	} else if r = a.slabs[typeKey[T]()]; r == nil {
		return nil, false
	}
	size := unsafe.Sizeof(*new(T))
	p := unsafe.SliceData(s)
	start := uintptr(unsafe.Pointer(p))
	base := uintptr(r.base)
	// off > 0: base+off is then inside the chunk, or its end, and the last
	// element of s is the chunk's last byte handed out; with off == 0, s
	// could be heap memory that happens to end where the chunk begins.
	if r.off == 0 || start+uintptr(cap(s))*size != base+r.off {
		return nil, false
	}
	end := start - base + uintptr(newCap)*size
	if !ptrs {
		end = fastSize(end) // the byte region's offsets stay 8-aligned
	}
	extra := end - r.off
	if off := r.off; off+extra <= r.combined {
		r.off = off + extra
		r.allocs++
	} else if !a.extend(r, infoOf[T](), extra) {
		return nil, false
	}
	return unsafe.Slice(p, newCap), true
}

// extend hands out the next extra bytes of the region's current chunk as
// the growth of a slice of type ti, as alloc would an object of that size:
// it picks up a change of the sampling state and emits an event if the
// bytes hold the stream's next successful trial. It reports false, and
// changes nothing, when the chunk has no room.
//
//go:noinline
func (a *Arena) extend(r *region, ti *typeInfo, extra uintptr) bool {
	if extra > r.limit-r.off {
		return false
	}
	if st := samplingstate.Current(); st != a.state {
		if a.mean == 0 {
			a.setState(st)
		} else {
			a.state = st
		}
	}
	if a.poison && r.ti == nil {
		clear(unsafe.Slice((*byte)(unsafe.Add(r.base, r.off)), extra))
	}
	if r.sampleAt < uint64(r.off+extra) {
		if a.state.MeanBytes > 0 {
			off := int64(r.sampleAt - uint64(r.off))
			a.emit(ti, kindSlice, int64(extra), off, skipAppend)
		}
		r.sampleAt = uint64(r.off+extra) + uint64(a.sampler.Next())
	}
	r.off += extra
	r.allocs++
	r.combined = combined(r)
	a.pickUpMean()
	return true
}

// skipAppend is the number of physical frames emit skips between extend
// and Append: none, because the frames between (growInPlace, appendSlow,
// and the wrapper the compiler may make for the function value appendFast
// calls) are dropped by name as the allocator's own (see isEntryFrame).
const skipAppend = 0
