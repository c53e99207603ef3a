package arenajson

import (
	"reflect"
	"sync"
	"unsafe"

	"github.com/arenaprof/arenaprof/arena"
)

// Where decoded values live.
//
// The arena's API is generic: arena.New[T] and arena.MakeSlice[T] need T at
// compile time, and values whose type holds pointers must live in the
// arena's typed slabs, which the garbage collector scans as T. A decoder
// driven by reflect knows its types only at run time, so:
//
//   - values and slice backings of pointer-free types (numbers, bools,
//     arrays and structs of them) and string bytes are carved from the
//     arena's byte chunks, as []uint64 memory seen as the type through
//     reflect.NewAt (every Go type's alignment divides 8);
//   - values and slice backings of types with pointers come from the
//     arena's typed slab of that type when the type is registered
//     (Register[T], and the types listed in builtinTypes), and from the
//     heap otherwise;
//   - maps, and whatever a type's own UnmarshalJSON or UnmarshalText
//     allocates, stay on the heap.

// allocFuncs allocate one registered type in an arena.
type allocFuncs struct {
	new func(a *arena.Arena) unsafe.Pointer
	// grow returns a new backing array of c elements whose first n are
	// copied from old (typed copies, with write barriers).
	grow func(a *arena.Arena, old unsafe.Pointer, n, c int) unsafe.Pointer
}

// typeAlloc is what the decoder knows about allocating a type.
type typeAlloc struct {
	words    int  // 8-byte words of one value
	ptrFree  bool // no pointers: byte chunks serve it
	zeroSize bool
	funcs    *allocFuncs // nil: not registered
}

var (
	registered sync.Map // reflect.Type -> *allocFuncs
	allocs     typeCache[*typeAlloc]
)

// Register makes Unmarshal allocate values of type T, and the backing
// arrays of []T, in the arena's typed slab for T. Types without pointers
// need no registration; a type with pointers (a struct with a string or
// slice field, a pointer, a slice) that is not registered is allocated on
// the heap, as encoding/json allocates it. Register the element types of
// the slices and the targets of the pointers a request type holds:
//
//	arenajson.Register[Item]()  // for []Item
//	arenajson.Register[*Item]() // for []*Item
//
// Register is safe for concurrent use; registering a type twice does
// nothing.
func Register[T any]() {
	t := reflect.TypeFor[T]()
	registered.LoadOrStore(t, &allocFuncs{
		new: func(a *arena.Arena) unsafe.Pointer { return unsafe.Pointer(arena.New[T](a)) },
		grow: func(a *arena.Arena, old unsafe.Pointer, n, c int) unsafe.Pointer {
			s := arena.MakeSlice[T](a, c, c)
			if n > 0 {
				copy(s, unsafe.Slice((*T)(old), n))
			}
			return unsafe.Pointer(unsafe.SliceData(s))
		},
	})
	allocs.forget(t)
}

func init() {
	// The types a decode into any makes, and common element types.
	Register[string]()
	Register[any]()
	Register[[]any]()
	Register[map[string]any]()
	Register[[]string]()
	Register[[]int]()
	Register[[]int64]()
	Register[[]float64]()
	Register[*string]()
}

// allocOf returns how values of t are allocated.
func allocOf(t reflect.Type) *typeAlloc {
	return allocs.get(t, func(t reflect.Type) *typeAlloc {
		ta := &typeAlloc{
			words:    int((t.Size() + 7) / 8),
			ptrFree:  !hasPointers(t),
			zeroSize: t.Size() == 0,
		}
		if f, ok := registered.Load(t); ok {
			ta.funcs = f.(*allocFuncs)
		}
		return ta
	})
}

// hasPointers reports whether values of type t hold pointers the garbage
// collector must see.
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.UnsafePointer, reflect.Map, reflect.Chan,
		reflect.Func, reflect.Interface, reflect.String, reflect.Slice:
		return true
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

// newPtr returns a pointer to a new zero value of type t, like reflect.New.
func (d *decodeState) newPtr(t reflect.Type) reflect.Value {
	if d.a == nil {
		return reflect.New(t)
	}
	ta := allocOf(t)
	switch {
	case ta.zeroSize:
		return reflect.New(t) // the runtime's zero-size base: no allocation
	case ta.ptrFree:
		w := arena.MakeSlice[uint64](d.a, ta.words, ta.words)
		return reflect.NewAt(t, unsafe.Pointer(unsafe.SliceData(w)))
	case ta.funcs != nil:
		return reflect.NewAt(t, ta.funcs.new(d.a))
	}
	d.onHeap(t)
	return reflect.New(t)
}

// heapHook, when set (by tests), is told of each value or slice backing of
// type t made on the heap because t has pointers and is not registered.
var heapHook func(t reflect.Type)

func (d *decodeState) onHeap(t reflect.Type) {
	d.heapAllocs++
	if heapHook != nil {
		heapHook(t)
	}
}

// sliceHeader is the layout of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// setSlice makes the addressable slice v a new slice of length n <= v.Len()
// and capacity c whose first n elements are a copy of v's first n.
func (d *decodeState) setSlice(v reflect.Value, n, c int) {
	et := v.Type().Elem()
	if d.a != nil && v.CanAddr() {
		h := (*sliceHeader)(v.Addr().UnsafePointer())
		var p unsafe.Pointer
		ta := allocOf(et)
		switch {
		case ta.ptrFree && !ta.zeroSize:
			size := et.Size()
			w := int((uintptr(c)*size + 7) / 8)
			p = unsafe.Pointer(unsafe.SliceData(arena.MakeSlice[uint64](d.a, w, w)))
			copy(unsafe.Slice((*byte)(p), uintptr(n)*size), unsafe.Slice((*byte)(h.data), uintptr(n)*size))
		case ta.funcs != nil:
			p = ta.funcs.grow(d.a, h.data, n, c)
		}
		if p != nil {
			h.data = p // a typed store of an unsafe.Pointer: the write barrier sees it
			h.len, h.cap = n, c
			return
		}
	}
	if d.a != nil && et.Size() != 0 {
		d.onHeap(et)
	}
	ns := reflect.MakeSlice(v.Type(), n, c)
	reflect.Copy(ns, v)
	v.Set(ns)
}

// emptyBase is the data pointer of the empty, non-nil slices Unmarshal
// makes (encoding/json makes [] into an empty slice, not nil).
var emptyBase uint64

// setEmpty sets the slice v to an empty, non-nil slice.
func (d *decodeState) setEmpty(v reflect.Value) {
	if v.CanAddr() {
		h := (*sliceHeader)(v.Addr().UnsafePointer())
		h.data = unsafe.Pointer(&emptyBase)
		h.len, h.cap = 0, 0
		return
	}
	v.Set(reflect.MakeSlice(v.Type(), 0, 0))
}

// str returns a copy of b in the arena.
func (d *decodeState) str(b []byte) string {
	if d.a == nil {
		return string(b)
	}
	return arena.String(d.a, unsafe.String(unsafe.SliceData(b), len(b)))
}

// bytes returns a new []byte of length n in the arena.
func (d *decodeState) bytes(n int) []byte {
	if d.a == nil {
		return make([]byte, n)
	}
	return arena.MakeSlice[byte](d.a, n, n)
}

// eface is the layout of an empty interface.
type eface struct {
	typ, data unsafe.Pointer
}

func typeWord(x any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&x)).typ }

var (
	stringWord  = typeWord("")
	float64Word = typeWord(float64(0))
	anysWord    = typeWord([]any(nil))
)

// makeAny returns the interface value of type word typ and data word data.
func makeAny(typ, data unsafe.Pointer) (x any) {
	e := (*eface)(unsafe.Pointer(&x))
	e.typ, e.data = typ, data
	return x
}

// anyString returns s as an any whose boxed string header is in the arena.
func (d *decodeState) anyString(s string) any {
	if d.a == nil {
		return s
	}
	p := arena.New[string](d.a)
	*p = s
	return makeAny(stringWord, unsafe.Pointer(p))
}

// anyFloat returns f as an any whose box is in the arena.
func (d *decodeState) anyFloat(f float64) any {
	if d.a == nil {
		return f
	}
	p := arena.New[float64](d.a)
	*p = f
	return makeAny(float64Word, unsafe.Pointer(p))
}

// anySlice returns s as an any whose boxed slice header is in the arena.
func (d *decodeState) anySlice(s []any) any {
	if d.a == nil {
		return s
	}
	p := arena.New[[]any](d.a)
	*p = s
	return makeAny(anysWord, unsafe.Pointer(p))
}
