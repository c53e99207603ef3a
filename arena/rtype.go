package arena

import (
	"reflect"
	"unsafe"
)

// The fast path tells pointer-free types from types with pointers without
// a lookup: it reads the pointer-prefix length of T from T's runtime type
// descriptor, which the instantiation's dictionary holds (a constant of the
// instantiation, so the branch on it is always predicted). The descriptor's
// layout belongs to the runtime; rtypeHeader mirrors the part of it that is
// read (internal/abi.Type and abi.PtrType, the same in Go 1.26 and 1.27).
//
// No build tag guesses which releases keep that layout. At init,
// checkLayout compares what the mirror reads from the descriptors of a
// table of types (pointer-free, with pointers, zero-size, large) with what
// package reflect says of them, and records the verdict in layoutOK. If it
// disagrees, every arena's byte region is slow-only (its combined limit
// stays 0, so the fast path's first compare fails before any descriptor is
// read) and the slow path decides with reflect alone: a release whose
// layout differs runs the slow path, never a wrong one. The type word is
// read from an interface, as everywhere else; no //go:linkname is used.

// rtypeHeader mirrors the start of internal/abi.Type.
type rtypeHeader struct {
	size     uintptr
	ptrBytes uintptr // bytes of the type's prefix that can hold pointers
	hash     uint32
	tflag    uint8
	align    uint8
	falign   uint8
	kind     uint8
	equal    unsafe.Pointer
	gcdata   unsafe.Pointer
	str      int32
	ptrTo    int32
}

// ptrTypeHeader mirrors internal/abi.PtrType: a pointer type's descriptor
// followed by its element type's.
type ptrTypeHeader struct {
	rtypeHeader
	elem *rtypeHeader
}

// typeKey returns an identity of T that costs one load: the type word of an
// interface holding a *T, the descriptor of *T, a constant of the
// instantiation's dictionary.
func typeKey[T any]() uintptr {
	var x any = (*T)(nil)
	return *(*uintptr)(unsafe.Pointer(&x))
}

// descOf returns the runtime type descriptor of *T.
func descOf[T any]() *ptrTypeHeader {
	var x any = (*T)(nil)
	return *(**ptrTypeHeader)(unsafe.Pointer(&x))
}

// newFast is New's body: the bump of the byte region for a pointer-free T,
// else the slow path, which arrives as a parameter. The inliner charges a
// call to a parameter much less than a call to a named function; that is
// what lets New inline (its cost is at the budget of 80: check with
// go build -gcflags=-m=2 under every supported release when changing
// anything here; TestFastPathInlines does). Once inlined, the parameter is
// the constant newSlowKey and the call a direct one.
//
// The conditions, in order: the object fits before the region's combined
// limit (the chunk's end or the next sampled byte), and T holds no
// pointers (read from T's descriptor: a constant of the instantiation, so
// the branch is always predicted). The first is written off+size-1 <
// combined, which for size > 0 is off+size <= combined (size is a
// constant, so it costs the same) and for a zero-size T is off <= combined
// with off > 0: a zero-size T is served here once the region has handed
// out a byte (it gets the address of the next free byte, never past the 8
// bytes of slack every byte chunk has after its end), and by the slow path
// at offset 0. So no T, zero-size or not, reaches the descriptor read in a
// slow-only region (combined 0), which is what makes a failed layout check
// safe.
func newFast[T any](a *Arena, slow func(*Arena, any) unsafe.Pointer) unsafe.Pointer {
	var x any = (*T)(nil) // its type word is *T's descriptor (see descOf)
	if r := &a.bytes; r.off+unsafe.Sizeof(rounded[T]{})-1 < r.combined && (*(**ptrTypeHeader)(unsafe.Pointer(&x))).elem.ptrBytes == 0 {
		r.allocs++
		r.off += unsafe.Sizeof(rounded[T]{})
		return unsafe.Add(r.base, r.off-unsafe.Sizeof(rounded[T]{}))
	}
	return slow(a, x)
}

// pointerFree reports whether values of T hold no pointers, reading T's
// descriptor. Callers reach it only where layoutOK holds: behind a bump
// that a slow-only region refuses (see newFast), or after testing layoutOK.
func pointerFree[T any]() bool {
	return descOf[T]().elem.ptrBytes == 0
}

// layoutOK records that init found the descriptors laid out as
// rtypeHeader says. Only slow paths read it; the fast paths are kept away
// from the descriptors by the byte region's slowOnly (see newFast).
var layoutOK = checkLayout(mirror)

// descLayout gives the offsets the layout check reads at: in a pointer
// type's descriptor, that of its element's descriptor; in a descriptor,
// those of its size, pointer-prefix length and alignment.
type descLayout struct {
	elem, size, ptrBytes, align uintptr
}

// mirror is the layout rtypeHeader and ptrTypeHeader say.
var mirror = descLayout{
	elem:     unsafe.Offsetof(ptrTypeHeader{}.elem),
	size:     unsafe.Offsetof(rtypeHeader{}.size),
	ptrBytes: unsafe.Offsetof(rtypeHeader{}.ptrBytes),
	align:    unsafe.Offsetof(rtypeHeader{}.align),
}

// layoutProbes are the types checkLayout reads: each kind whose pointer
// prefix differs (none, all, some, a pointer deep inside), zero-size, and
// large, as pairs of *T's descriptor and T's reflect.Type.
func layoutProbes() []layoutProbe {
	//lint:ignore U1000 the fields give the type its layout, which the check compares; no value is made
	type mixed struct {
		a int64
		p *int
		b [3]int64
	}
	//lint:ignore U1000 as mixed
	type plain struct{ a, b, c, d int64 }
	//lint:ignore U1000 as mixed
	type tailPtr struct {
		a [100]int64
		s string
	}
	return []layoutProbe{
		probe[int64](), probe[*int](), probe[string](), probe[[]byte](),
		probe[any](), probe[map[int]int](), probe[mixed](), probe[plain](),
		probe[[7]byte](), probe[[2]*int](), probe[struct{}](), probe[[0]*int](),
		probe[[1 << 20]byte](), probe[[1 << 12]*int](), probe[tailPtr](),
		probe[complex128](), probe[[3]int16](),
	}
}

type layoutProbe struct {
	desc unsafe.Pointer // *T's descriptor
	typ  reflect.Type   // T
}

func probe[T any]() layoutProbe {
	return layoutProbe{unsafe.Pointer(descOf[T]()), reflect.TypeFor[T]()}
}

// checkLayout reports whether descriptors read at the offsets of l say what
// reflect says of every probe: *T's element is reflect's own descriptor of
// T (compared before anything is read through it, so a wrong elem offset
// is refused without a wild read), and T's size, alignment and whether it
// holds pointers agree; and *T itself is one pointer-sized pointer.
func checkLayout(l descLayout) bool {
	word := unsafe.Sizeof(uintptr(0))
	for _, p := range layoutProbes() {
		var x any = p.typ // reflect's *rtype for T is the interface's data word
		e := *(*unsafe.Pointer)(unsafe.Add(p.desc, l.elem))
		if e != (*[2]unsafe.Pointer)(unsafe.Pointer(&x))[1] {
			return false
		}
		t := p.typ
		if *(*uintptr)(unsafe.Add(e, l.size)) != t.Size() ||
			uintptr(*(*uint8)(unsafe.Add(e, l.align))) != uintptr(t.Align()) ||
			(*(*uintptr)(unsafe.Add(e, l.ptrBytes)) == 0) == hasPointers(t) ||
			*(*uintptr)(unsafe.Add(p.desc, l.size)) != word ||
			*(*uintptr)(unsafe.Add(p.desc, l.ptrBytes)) != word {
			return false
		}
	}
	return true
}
