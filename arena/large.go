package arena

import (
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/arenaprof/arenaprof/internal/sizeclass"
)

// Objects larger than a chunk get memory of their own: a large buffer.
// Reset keeps the large buffers of the arena, up to a bound on their total
// size ([WithLargeRetain]), and later large requests of the same size
// class reuse them, so that a service that needs a large buffer per
// request stops allocating once warm. Size classes are four per doubling
// (at most 25% larger than the request). Buffers of a type with pointers
// are typed memory of that type, kept by that type's region, and cleared
// at Reset like its slabs; pointer-free buffers are cleared at Reset too.
// Free, or the garbage collector dropping an idle arena, drops them all.

// defaultLargeRetain is the default bound on the bytes of large buffers an
// arena keeps across Reset (see [WithLargeRetain]).
const defaultLargeRetain = 1 << 20

// WithLargeRetain sets the bound on the total size in bytes of the large
// buffers (objects larger than a chunk) the arena keeps across Reset for
// reuse; 0 keeps none. The default is 1 MiB. It panics if n is negative.
func WithLargeRetain(n int) Option {
	if n < 0 {
		panic(fmt.Sprintf("arenaprof: arena.WithLargeRetain(%d): the bound must not be negative", n))
	}
	return func(c *config) { c.largeRetain = uintptr(n) }
}

// largeBuf is a large buffer of a region.
type largeBuf struct {
	base unsafe.Pointer
	size uintptr // bytes: its size class
	used uintptr // bytes handed out
}

// largeClass returns the size class of a request of n > 0 bytes: n
// rounded up to a quarter of the power of two above it.
func largeClass(n uintptr) uintptr {
	k := bits.Len64(uint64(n - 1)) // n <= 1<<k
	if k < 3 {
		return 8
	}
	step := uintptr(1) << (k - 3)
	return (n + step - 1) &^ (step - 1)
}

// takeLarge returns a zeroed large buffer for count values of type ti
// (n bytes), reusing one kept by Reset if there is one.
func (a *Arena) takeLarge(r *region, ti *typeInfo, count, n uintptr) unsafe.Pointer {
	if a.checked != nil {
		a.noteLoose(n) // never kept by Reset
		return a.takeChecked(r, ti, count, n)
	}
	size := largeClass(n)
	if size > a.largeRetain {
		// Never kept: exactly the size asked for, as the heap would.
		a.noteLoose(n)
		if ti.ptrs {
			return ti.newSlab(int(count))
		}
		return unsafe.Pointer(unsafe.SliceData(make([]uint64, (n+7)/8)))
	}
	if free := r.largeFree[size]; len(free) > 0 {
		b := free[len(free)-1]
		r.largeFree[size] = free[:len(free)-1]
		a.largeKept -= b.size
		if a.poison && !ti.ptrs {
			clear(unsafe.Slice((*byte)(b.base), n))
		}
		b.used = n
		r.largeUsed = append(r.largeUsed, b)
		a.noteClosed(n)
		return b.base
	}
	b := largeBuf{size: size, used: n}
	a.noteReserved(int64(size), sizeclass.HeapBytes(int64(size), ti.ptrs))
	a.noteClosed(n)
	if ti.ptrs {
		b.base = ti.newSlab(int(size / ti.size))
	} else {
		b.base = unsafe.Pointer(unsafe.SliceData(make([]uint64, size/8)))
	}
	r.largeUsed = append(r.largeUsed, b)
	return b.base
}

// resetLarge keeps the region's large buffers for reuse, cleared, while
// the arena's bound allows, and drops the others.
func (a *Arena) resetLarge(r *region) {
	for i, b := range r.largeUsed {
		r.largeUsed[i] = largeBuf{}
		if a.largeKept+b.size > a.largeRetain {
			a.noteReserved(-int64(b.size), -sizeclass.HeapBytes(int64(b.size), r.ti != nil)) // dropped: the garbage collector reclaims it
			continue
		}
		switch {
		case r.ti != nil:
			r.ti.clear(b.base, int(b.used/r.ti.size), &r.scratch)
		case a.poison:
			fill(unsafe.Slice((*byte)(b.base), b.used), 0xa5)
		default:
			clear(unsafe.Slice((*byte)(b.base), b.used))
		}
		if r.largeFree == nil {
			r.largeFree = make(map[uintptr][]largeBuf)
		}
		r.largeFree[b.size] = append(r.largeFree[b.size], largeBuf{base: b.base, size: b.size})
		a.largeKept += b.size
	}
	r.largeUsed = r.largeUsed[:0]
}

// fill sets every byte of b to v.
func fill(b []byte, v byte) {
	for i := range b {
		b[i] = v
	}
}
