package arenajson

import (
	"reflect"
	"unsafe"

	"github.com/arenaprof/arenaprof/arena"
)

// Where decoded values live: every value and slice backing the decoder
// makes comes from the arena through arena.NewValue and
// arena.MakeSliceValue, which place a type with pointers in the arena's
// typed slab of that type (scanned by the garbage collector as that type)
// and a pointer-free one in its byte chunks, and sample them as arena.New
// and arena.MakeSlice do; string bytes come from arena.String. Maps and
// whatever a type's own UnmarshalJSON or UnmarshalText allocates stay on
// the heap.

// newPtr returns a pointer to a new zero value of type t, like reflect.New.
func (d *decodeState) newPtr(t reflect.Type) reflect.Value {
	if d.a == nil {
		return reflect.New(t)
	}
	return arena.NewValue(d.a, t)
}

// sliceHeader is the layout of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// setSlice makes the addressable slice v a new slice of length n <= v.Len()
// and capacity c whose first n elements are a copy of v's first n.
func (d *decodeState) setSlice(v reflect.Value, n, c int) {
	if d.a == nil || !v.CanAddr() {
		ns := reflect.MakeSlice(v.Type(), n, c)
		reflect.Copy(ns, v)
		v.Set(ns)
		return
	}
	// v may be reached through an unexported embedded field, which
	// reflect would not let Copy and Set use: copy and store through v's
	// address (typed copies, with write barriers).
	h := (*sliceHeader)(v.Addr().UnsafePointer())
	ns := arena.MakeSliceValue(d.a, v.Type(), n, c)
	reflect.Copy(ns, reflect.NewAt(v.Type(), unsafe.Pointer(h)).Elem())
	*h = *(*sliceHeader)(ns.Addr().UnsafePointer())
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
