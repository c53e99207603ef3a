package arena

import (
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"
)

// NewValue returns a Value representing a pointer to a new zero value of
// type t allocated in a, like reflect.New(t). It is [New] for a type known
// only at run time (a decoder's, say): the value is placed and sampled
// exactly as New[T] places and samples it (a type with pointers in the
// arena's slab of that type, which the garbage collector scans as t, a
// pointer-free one in the arena's byte chunks, a zero-size one at a
// shared address), and a sampled event names t and has the caller of
// NewValue as its leaf frame. It panics if t is nil or a was freed.
//
// For a type the program also allocates with New, both share the arena's
// memory of that type. NewValue costs a lookup of t that New does not.
func NewValue(a *Arena, t reflect.Type) reflect.Value {
	if t == nil {
		panic("arenaprof: arena.NewValue: nil type")
	}
	ti := infoOfType(t)
	return pointerValue(ti, newValue(a, ti, 0))
}

// MakeSliceValue returns a new slice of the slice type t with the given
// length and capacity allocated in a, like reflect.MakeSlice(t, len, cap):
// [MakeSlice] for an element type known only at run time, placed and
// sampled as MakeSlice places and samples it. The slice header the Value
// refers to is itself a value of type t in a (reflect.MakeSlice puts it on
// the heap), so the result is addressable and settable. It panics if t is
// not a slice type, if len or cap is negative, if len > cap, if the size
// overflows, or if a was freed.
func MakeSliceValue(a *Arena, t reflect.Type, len, cap int) reflect.Value {
	if t == nil || t.Kind() != reflect.Slice {
		panic("arenaprof: arena.MakeSliceValue of a non-slice type")
	}
	ti := infoOfType(t)
	return pointerValue(ti, makeSliceValue(a, ti, infoOfType(t.Elem()), len, cap)).Elem()
}

// pointerValue returns p as a Value of type *T, T the type of ti, as
// reflect.NewAt does, without its look-up of *T: an interface whose type
// word is ti's key (the descriptor of *T, see infoOfType) and whose data
// word is p, which reflect.ValueOf unpacks without allocating.
func pointerValue(ti *typeInfo, p unsafe.Pointer) reflect.Value {
	var x any
	(*[2]uintptr)(unsafe.Pointer(&x))[0] = ti.key // a descriptor reflect or the binary keeps
	(*[2]unsafe.Pointer)(unsafe.Pointer(&x))[1] = p
	return reflect.ValueOf(x)
}

// byType maps a reflect.Type to its type information; typeSlots caches
// recent answers where a lookup costs two loads and a compare: a decoder
// asks for the same few types again and again. A slot holds the type
// information itself (whose typ is the type asked for), so that replacing
// an answer allocates nothing.
var (
	byType    sync.Map // reflect.Type -> *typeInfo
	typeSlots [256]atomic.Pointer[typeInfo]
)

// descOfType returns the data word of t: reflect's *rtype, which
// identifies the type (only *rtype implements reflect.Type, whose methods
// include unexported ones).
func descOfType(t *reflect.Type) unsafe.Pointer {
	return (*[2]unsafe.Pointer)(unsafe.Pointer(t))[1]
}

// infoOfType returns the type information of t. Its key, like New's, is
// the descriptor of *t: reflect.PointerTo(t) is the descriptor the
// compiler emitted when the program has *t (reflect finds it through t or
// the binary's type links), and one reflect makes at run time otherwise,
// which reflect keeps and returns for t from then on. Either way the key is
// fixed for t. Should reflect ever make *t though the compiler emitted it
// too, New[T] and NewValue would keep two regions of the same type: more
// memory, never memory of the wrong type.
func infoOfType(t reflect.Type) *typeInfo {
	desc := descOfType(&t)
	slot := &typeSlots[(uint64(uintptr(desc))*0x9e3779b97f4a7c15)>>56]
	if ti := slot.Load(); ti != nil && descOfType(&ti.typ) == desc {
		return ti
	}
	var ti *typeInfo
	if v, ok := byType.Load(t); ok {
		ti = v.(*typeInfo)
	} else {
		var x any = reflect.PointerTo(t) // reflect's *rtype is the descriptor, the data word
		key := (*[2]uintptr)(unsafe.Pointer(&x))[1]
		v, _ := byType.LoadOrStore(t, infoByKey(key))
		ti = v.(*typeInfo)
	}
	if descOfType(&ti.typ) == desc { // always so: ti.typ is t
		slot.Store(ti)
	}
	return ti
}

// newValue is the body of NewValue: it hands out one value of type ti.
// skip is the number of physical frames between newValue and the
// allocator's entry point.
//
//go:noinline
func newValue(a *Arena, ti *typeInfo, skip int) unsafe.Pointer {
	if ti.size == 0 {
		a.check()
		a.bytes.allocs++ // counted like New's zero-size objects
		return unsafe.Pointer(&zeroBase)
	}
	if p := a.bumpValue(ti, 1); p != nil {
		return p
	}
	return a.alloc(ti, 1, kindObject, skip+1)
}

// makeSliceValue is the body of MakeSliceValue: it returns the address of
// a new slice header of type hti whose backing array of elements of type
// eti it allocates.
//
//go:noinline
func makeSliceValue(a *Arena, hti, eti *typeInfo, len, cap int) unsafe.Pointer {
	switch {
	case len < 0:
		panic("arenaprof: arena.MakeSliceValue: len out of range")
	case cap < 0:
		panic("arenaprof: arena.MakeSliceValue: cap out of range")
	case len > cap:
		panic("arenaprof: arena.MakeSliceValue: len larger than cap")
	case eti.size > 0 && uintptr(cap) > maxAlloc/eti.size:
		panic("arenaprof: arena.MakeSliceValue: cap out of range (size overflows)")
	}
	var p unsafe.Pointer
	if cap == 0 || eti.size == 0 {
		a.check()
		a.bytes.allocs++
		p = unsafe.Pointer(&zeroBase)
	} else if p = a.bumpValue(eti, uintptr(cap)); p == nil {
		p = a.alloc(eti, uintptr(cap), kindSlice, skipString)
	}
	h := (*sliceHeader)(newValue(a, hti, 1))
	h.data = p // a typed store: the write barrier sees it
	h.len, h.cap = len, cap
	return unsafe.Pointer(h)
}

// bumpValue hands out count > 0 values of type ti (count*size not
// overflowing) by the bump New's and MakeSlice's fast paths and the type
// table make: from the table's region of a type with pointers, from the
// byte region for a pointer-free type. It returns nil when alloc must
// serve them (a new chunk or slab, a sampled object, no table entry, an
// alignment over 8, a slow-only byte region, a freed arena).
func (a *Arena) bumpValue(ti *typeInfo, count uintptr) unsafe.Pointer {
	r := &a.bytes
	n := count * ti.size
	if ti.ptrs {
		r = a.lookup(ti.key) // an entry's size is the element size, a multiple of 8
	} else if ti.align > 8 {
		return nil // alloc pads the offset
	} else {
		n = fastSize(n)
	}
	if off := r.off; off+n <= r.combined {
		r.off = off + n
		r.allocs++
		return unsafe.Add(r.base, off)
	}
	return nil
}
