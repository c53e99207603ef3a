//go:build !go1.27

package arena

import "unsafe"

// layoutKnown: the runtime type descriptor layout mirrored by rtypeHeader
// was checked for this Go release. Later releases build rtype_unknown.go
// until someone checks them; they serve pointer-free types through the
// per-arena type table instead, a little slower.
const layoutKnown = true

// newFast is New's body: the bump of the byte region for a pointer-free T,
// else the slow path, which arrives as a parameter. The inliner charges a
// call to a parameter much less than a call to a named function; that is
// what lets New inline (its cost is 80, the budget: check with
// go build -gcflags=-m=2 when changing anything here). Once inlined, the
// parameter is the constant newSlowKey and the call a direct one.
//
// The conditions, in order: the object fits before the region's combined
// limit (the chunk's end or the next sampled byte), and T holds no
// pointers (read from T's descriptor: a constant of the instantiation, so
// the branch is always predicted). A zero-size T is served here too: it
// gets the address of the region's next free byte, which is &zeroBase
// before the first chunk, and never past the 8 bytes of slack every byte
// chunk has after its end.
func newFast[T any](a *Arena, slow func(*Arena, any) unsafe.Pointer) unsafe.Pointer {
	var x any = (*T)(nil) // its type word is *T's descriptor (see descOf)
	if r := &a.bytes; r.off+unsafe.Sizeof(rounded[T]{}) <= r.combined && (*(**ptrTypeHeader)(unsafe.Pointer(&x))).elem.ptrBytes == 0 {
		r.allocs++
		r.off += unsafe.Sizeof(rounded[T]{})
		return unsafe.Add(r.base, r.off-unsafe.Sizeof(rounded[T]{}))
	}
	return slow(a, x)
}

// pointerFree reports whether values of T hold no pointers, reading T's
// descriptor. It is only true when the layout is known, so it never sends
// a type with pointers to untyped memory; and if the layout check failed,
// the byte region is never used by the fast path at all.
func pointerFree[T any]() bool {
	return descOf[T]().elem.ptrBytes == 0
}
