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
// read (internal/abi.Type and abi.PtrType). It is read only on the Go
// releases whose layout was checked (rtype_known.go; later releases build
// rtype_unknown.go and serve every type through the type table), and init
// checks it again against package reflect for a table of types before any
// arena exists. If that check fails, the byte region's fast path is
// switched off (its combined limit stays 0) and pointer-free allocations
// take the slow path, which decides with reflect alone. The type word is
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

// layoutOK records that init found the descriptors laid out as
// rtypeHeader says. Only the slow path reads it (see combined).
var layoutOK = checkLayout()

// checkLayout compares what the descriptors say with what reflect says.
func checkLayout() bool {
	if !layoutKnown {
		return false
	}
	//lint:ignore U1000 the fields give the type its layout, which the check compares; no value is made
	type mixed struct {
		a int64
		p *int
		b [3]int64
	}
	//lint:ignore U1000 as mixed
	type plain struct{ a, b, c, d int64 }
	ok := true
	check := func(pt *ptrTypeHeader, t reflect.Type) {
		e := pt.elem
		// The element descriptor is reflect's own *rtype for T.
		var x any = t
		if unsafe.Pointer(e) != (*[2]unsafe.Pointer)(unsafe.Pointer(&x))[1] ||
			e.size != t.Size() || uintptr(e.align) != uintptr(t.Align()) ||
			(e.ptrBytes == 0) == hasPointers(t) ||
			pt.size != unsafe.Sizeof(uintptr(0)) || pt.ptrBytes != unsafe.Sizeof(uintptr(0)) {
			ok = false
		}
	}
	check(descOf[int64](), reflect.TypeFor[int64]())
	check(descOf[*int](), reflect.TypeFor[*int]())
	check(descOf[string](), reflect.TypeFor[string]())
	check(descOf[[]byte](), reflect.TypeFor[[]byte]())
	check(descOf[any](), reflect.TypeFor[any]())
	check(descOf[map[int]int](), reflect.TypeFor[map[int]int]())
	check(descOf[mixed](), reflect.TypeFor[mixed]())
	check(descOf[plain](), reflect.TypeFor[plain]())
	check(descOf[[7]byte](), reflect.TypeFor[[7]byte]())
	check(descOf[[2]*int](), reflect.TypeFor[[2]*int]())
	check(descOf[struct{}](), reflect.TypeFor[struct{}]())
	return ok
}
