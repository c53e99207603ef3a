package arena

import (
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

type valPlain struct{ A, B int64 }

type valPtrs struct {
	N int64
	S string
	P *int64
	L []string
}

// runtimeStruct is a struct type reflect makes at run time: the binary has
// no descriptor of it or of its pointer type.
var runtimeStruct = reflect.StructOf([]reflect.StructField{
	{Name: "S", Type: reflect.TypeFor[string]()},
	{Name: "P", Type: reflect.TypeFor[*int64]()},
	{Name: "N", Type: reflect.TypeFor[int32]()},
})

var valueTypes = []struct {
	name string
	typ  reflect.Type
}{
	{"int64", reflect.TypeFor[int64]()},
	{"byte", reflect.TypeFor[byte]()},
	{"[3]int16", reflect.TypeFor[[3]int16]()},
	{"plain struct", reflect.TypeFor[valPlain]()},
	{"string", reflect.TypeFor[string]()},
	{"*int", reflect.TypeFor[*int]()},
	{"any", reflect.TypeFor[any]()},
	{"[]string", reflect.TypeFor[[]string]()},
	{"struct with pointers", reflect.TypeFor[valPtrs]()},
	{"run-time struct", runtimeStruct},
	{"struct{}", reflect.TypeFor[struct{}]()},
	{"[0]*int", reflect.TypeFor[[0]*int]()},
	{"large pointer-free", reflect.TypeFor[[1 << 17]byte]()},
	{"large with pointers", reflect.TypeFor[[1 << 14]*int]()},
}

// TestNewValue checks that NewValue hands out zeroed, settable values of
// the type asked for, from the memory New would use: the typed slab of a
// type with pointers, the byte chunks otherwise, the zero base for
// zero-size types; and that a value reused after Reset is zero again.
func TestNewValue(t *testing.T) {
	for _, checked := range []bool{false, true} {
		a := NewArena(WithChecked(checked))
		for _, c := range valueTypes {
			for round := range 3 {
				p := NewValue(a, c.typ)
				if p.Type() != reflect.PointerTo(c.typ) {
					t.Fatalf("%s: type %v, want %v", c.name, p.Type(), reflect.PointerTo(c.typ))
				}
				v := p.Elem()
				if !v.IsZero() || !v.CanSet() {
					t.Fatalf("%s round %d: zero %v, settable %v", c.name, round, v.IsZero(), v.CanSet())
				}
				ti := infoOfType(c.typ)
				switch {
				case c.typ.Size() == 0:
					if p.UnsafePointer() != unsafe.Pointer(&zeroBase) {
						t.Errorf("%s: zero-size value not at the zero base", c.name)
					}
				case hasPointers(c.typ):
					if r := a.slabs[ti.key]; r == nil || r.ti.typ != c.typ {
						t.Errorf("%s: no typed slab for the type", c.name)
					}
				default:
					if a.slabs[ti.key] != nil {
						t.Errorf("%s: a pointer-free type got a slab", c.name)
					}
				}
				if c.typ.Size() != 0 && c.typ.Size() < 1<<10 {
					// Write something, so that the next round sees the reset.
					v.Set(nonZero(c.typ))
				}
			}
			a.Reset()
		}
		a.Free()
	}
}

// nonZero returns a non-zero value of t (t small and not zero-size).
func nonZero(t reflect.Type) reflect.Value {
	v := reflect.New(t).Elem()
	b := unsafe.Slice((*byte)(v.Addr().UnsafePointer()), t.Size())
	if !hasPointers(t) {
		for i := range b {
			b[i] = 0xa5
		}
		return v
	}
	switch t.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Pointer:
		v.Set(reflect.New(t.Elem()))
	case reflect.Interface:
		v.Set(reflect.ValueOf(1))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(t, 1, 1))
	case reflect.Struct:
		v.Field(0).Set(nonZero(t.Field(0).Type))
		v.Field(1).Set(nonZero(t.Field(1).Type))
	}
	return v
}

// TestValueKeyIsNewKey checks that NewValue's key of a type the binary has
// is New's (the descriptor of *T), so that both share one region, and that
// the key of a type reflect makes is stable.
func TestValueKeyIsNewKey(t *testing.T) {
	cases := []struct {
		name string
		got  uintptr
		want uintptr
	}{
		{"int64", infoOfType(reflect.TypeFor[int64]()).key, typeKey[int64]()},
		{"valPtrs", infoOfType(reflect.TypeFor[valPtrs]()).key, typeKey[valPtrs]()},
		{"[]string", infoOfType(reflect.TypeFor[[]string]()).key, typeKey[[]string]()},
		{"map", infoOfType(reflect.TypeFor[map[string]int]()).key, typeKey[map[string]int]()},
		{"run-time struct", infoOfType(runtimeStruct).key, infoOfType(reflect.StructOf(
			[]reflect.StructField{
				{Name: "S", Type: reflect.TypeFor[string]()},
				{Name: "P", Type: reflect.TypeFor[*int64]()},
				{Name: "N", Type: reflect.TypeFor[int32]()},
			})).key},
	}
	for _, c := range cases {
		if c.got != c.want || c.got == 0 {
			t.Errorf("%s: key %#x, want %#x", c.name, c.got, c.want)
		}
	}
	a := NewArena()
	defer a.Free()
	p := New[valPtrs](a)
	q := NewValue(a, reflect.TypeFor[valPtrs]()).Interface().(*valPtrs)
	if len(a.slabs) != 1 || uintptr(unsafe.Pointer(q))-uintptr(unsafe.Pointer(p)) != unsafe.Sizeof(valPtrs{}) {
		t.Errorf("New and NewValue of one type: %d slabs, values %p and %p", len(a.slabs), p, q)
	}
}

// TestMakeSliceValue checks lengths, capacities, zeroing and placement, and
// that the header is a settable value in the arena.
func TestMakeSliceValue(t *testing.T) {
	for _, c := range valueTypes {
		if c.typ.Size() > 1<<12 {
			continue
		}
		st := reflect.SliceOf(c.typ)
		for _, lc := range [][2]int{{0, 0}, {0, 5}, {3, 3}, {2, 70000}} {
			a := NewArena()
			s := MakeSliceValue(a, st, lc[0], lc[1])
			if s.Type() != st || s.Len() != lc[0] || s.Cap() != lc[1] || !s.CanSet() {
				t.Fatalf("%s %v: %v len %d cap %d settable %v", c.name, lc, s.Type(), s.Len(), s.Cap(), s.CanSet())
			}
			full := s.Slice(0, s.Cap())
			for i := range full.Len() {
				if !full.Index(i).IsZero() {
					t.Fatalf("%s %v: element %d not zero", c.name, lc, i)
				}
			}
			ti := infoOfType(c.typ)
			if lc[1] > 0 && c.typ.Size() > 0 && hasPointers(c.typ) && a.slabs[ti.key] == nil {
				t.Errorf("%s: no typed slab for the backing", c.name)
			}
			if a.slabs[infoOfType(st).key] == nil {
				t.Errorf("%s: the header is not in the slab of its type", c.name)
			}
			a.Free()
		}
	}
}

// TestValueSurvivesGC keeps values with pointers, reached only through the
// arena's memory, across collections and checks them afterwards.
func TestValueSurvivesGC(t *testing.T) {
	a := NewArena(WithChunkSize(4096))
	defer a.Free()
	const n = 2000
	vals := make([]reflect.Value, n)
	slices := make([]reflect.Value, n)
	for i := range n {
		v := NewValue(a, runtimeStruct).Elem()
		v.Field(0).SetString(strings.Repeat("s", i%7+1) + string(rune('a'+i%26)))
		p := new(int64)
		*p = int64(i)
		v.Field(1).Set(reflect.ValueOf(p))
		vals[i] = v.Addr()
		s := MakeSliceValue(a, reflect.TypeFor[[]*int64](), 1, 3)
		q := new(int64)
		*q = int64(-i)
		s.Index(0).Set(reflect.ValueOf(q))
		slices[i] = s
		if i%100 == 0 {
			runtime.GC()
		}
	}
	for range 3 {
		runtime.GC()
	}
	for i := range n {
		v := vals[i].Elem()
		if got := *(v.Field(1).Interface().(*int64)); got != int64(i) || !strings.HasSuffix(v.Field(0).String(), string(rune('a'+i%26))) {
			t.Fatalf("value %d: %d %q", i, got, v.Field(0).String())
		}
		if got := *(slices[i].Index(0).Interface().(*int64)); got != int64(-i) {
			t.Fatalf("slice %d: %d", i, got)
		}
	}
}

// TestValueEvents checks that NewValue's and MakeSliceValue's sampled
// events at mean 1 name the type and have the caller as leaf frame.
func TestValueEvents(t *testing.T) {
	rec := record(t, 1, true)
	a := NewArena()
	defer a.Free()
	const leaf = "github.com/arenaprof/arenaprof/arena.TestValueEvents.func"
	cases := []struct {
		name  string
		alloc func()
		types []string // the events' types, in order
	}{
		{"pointer-free", func() { NewValue(a, reflect.TypeFor[valPlain]()) }, []string{"arena.valPlain"}},
		{"pointers", func() { NewValue(a, reflect.TypeFor[valPtrs]()) }, []string{"arena.valPtrs"}},
		{"run-time struct", func() { NewValue(a, runtimeStruct) }, []string{runtimeStruct.String()}},
		{"large", func() { NewValue(a, reflect.TypeFor[[1 << 17]byte]()) }, []string{"[131072]uint8"}},
		{"slice pointer-free", func() { MakeSliceValue(a, reflect.TypeFor[[]int32](), 1, 9) },
			[]string{"[]int32", "[]int32"}},
		{"slice pointers", func() { MakeSliceValue(a, reflect.TypeFor[[]valPtrs](), 4, 4) },
			[]string{"[]arena.valPtrs", "[]arena.valPtrs"}},
	}
	for _, c := range cases {
		ref := userRef(c.alloc)
		ev := rec.take()
		if len(ev) != len(c.types) {
			t.Fatalf("%s: %d events, want %d", c.name, len(ev), len(c.types))
		}
		for i, e := range ev {
			if e.TypeName != c.types[i] {
				t.Errorf("%s: event %d of type %q, want %q", c.name, i, e.TypeName, c.types[i])
			}
			refNames := frameNames(ref)
			if len(e.frames) != len(refNames)+1 || !strings.HasPrefix(e.frames[0], leaf) ||
				e.frames[1] != refNames[0] || uintptrsDiffer(e.Stack[2:], ref[1:]) {
				t.Errorf("%s: event %d stack %q,\nwant the closure then %q", c.name, i, e.frames, refNames)
			}
		}
	}
}

func uintptrsDiffer(a, b []uintptr) bool {
	if len(a) != len(b) {
		return true
	}
	for i := range a {
		if a[i] != b[i] {
			return true
		}
	}
	return false
}

// TestValuePanics checks the panics of bad arguments and of a freed arena.
func TestValuePanics(t *testing.T) {
	freed := NewArena()
	freed.Free()
	a := NewArena()
	defer a.Free()
	cases := []struct {
		name string
		fn   func()
		want string
	}{
		{"nil type", func() { NewValue(a, nil) }, "nil type"},
		{"freed", func() { NewValue(freed, reflect.TypeFor[int]()) }, "used after Free"},
		{"freed pointers", func() { NewValue(freed, reflect.TypeFor[valPtrs]()) }, "used after Free"},
		{"freed zero-size", func() { NewValue(freed, reflect.TypeFor[struct{}]()) }, "used after Free"},
		{"freed slice", func() { MakeSliceValue(freed, reflect.TypeFor[[]int](), 0, 0) }, "used after Free"},
		{"not a slice", func() { MakeSliceValue(a, reflect.TypeFor[int](), 0, 0) }, "non-slice"},
		{"nil slice type", func() { MakeSliceValue(a, nil, 0, 0) }, "non-slice"},
		{"negative len", func() { MakeSliceValue(a, reflect.TypeFor[[]int](), -1, 0) }, "len out of range"},
		{"negative cap", func() { MakeSliceValue(a, reflect.TypeFor[[]int](), 0, -1) }, "cap out of range"},
		{"len > cap", func() { MakeSliceValue(a, reflect.TypeFor[[]int](), 2, 1) }, "larger than cap"},
		{"overflow", func() { MakeSliceValue(a, reflect.TypeFor[[]int](), 0, math.MaxInt/4) }, "size overflows"},
	}
	for _, c := range cases {
		got := func() (msg string) {
			defer func() { msg, _ = recover().(string) }()
			c.fn()
			return ""
		}()
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: panic %q, want one containing %q", c.name, got, c.want)
		}
	}
}

// FuzzMakeSliceValue checks that MakeSliceValue accepts and refuses the
// lengths and capacities MakeSlice does, with the same panics.
func FuzzMakeSliceValue(f *testing.F) {
	for _, c := range [][2]int{{0, 0}, {1, 1}, {3, 8}, {-1, 3}, {4, 3}, {0, -1}, {1 << 20, 1 << 20}, {0, math.MaxInt}, {5, 70000}} {
		f.Add(c[0], c[1])
	}
	a := NewArena(WithChunkSize(4096))
	f.Fuzz(func(t *testing.T, n, c int) {
		const limit = 1 << 24 // bytes the fuzzer may really allocate
		valid := n >= 0 && n <= c && uint64(c) <= maxAlloc/8
		if valid && c*8 > limit {
			return
		}
		catch := func(fn func()) (msg string) {
			defer func() { msg, _ = recover().(string) }()
			fn()
			return ""
		}
		for _, typ := range []reflect.Type{reflect.TypeFor[[]int64](), reflect.TypeFor[[]*int64]()} {
			var s reflect.Value
			got := catch(func() { s = MakeSliceValue(a, typ, n, c) })
			want := catch(func() {
				if typ.Elem().Kind() == reflect.Pointer {
					MakeSlice[*int64](a, n, c)
				} else {
					MakeSlice[int64](a, n, c)
				}
			})
			if strings.Replace(got, "MakeSliceValue", "MakeSlice", 1) != want {
				t.Fatalf("%v (%d, %d): panic %q, MakeSlice's %q", typ, n, c, got, want)
			}
			if (got == "") != valid {
				t.Fatalf("%v (%d, %d): panic %q, valid %v", typ, n, c, got, valid)
			}
			if got == "" && (s.Len() != n || s.Cap() != c) {
				t.Fatalf("%v (%d, %d): len %d cap %d", typ, n, c, s.Len(), s.Cap())
			}
		}
		a.Reset()
	})
}

// TestInfoOfTypeManyTypes asks for more types than infoOfType's cache has
// slots, twice over, and checks every answer is the type's own, and that
// asking again allocates nothing.
func TestInfoOfTypeManyTypes(t *testing.T) {
	var types []reflect.Type
	for i := range 600 {
		types = append(types, reflect.ArrayOf(i, reflect.TypeFor[*byte]()))
	}
	for _, c := range valueTypes {
		types = append(types, c.typ)
	}
	for range 2 {
		for _, typ := range types {
			if ti := infoOfType(typ); ti.typ != typ || ti.size != typ.Size() {
				t.Fatalf("infoOfType(%v) = info of %v", typ, ti.typ)
			}
		}
	}
	// Known types whose cache slots others took are found without
	// allocating (a decoder's steady state).
	if n := testing.AllocsPerRun(3, func() {
		for _, typ := range types {
			infoOfType(typ)
		}
	}); n != 0 {
		t.Errorf("%v allocations per pass over known types, want 0", n)
	}
}

// BenchmarkNewValue compares NewValue and MakeSliceValue with New and
// MakeSlice of the same types, sampling off (the cost of a reflect-typed
// allocation: the type lookup, the call, the Value).
func BenchmarkNewValue(b *testing.B) {
	b.Run("type=plain/impl=New", func(b *testing.B) {
		a := NewArena()
		defer a.Free()
		for i := 0; b.Loop(); i++ {
			if i%1024 == 0 {
				a.Reset()
			}
			_ = New[valPlain](a)
		}
	})
	b.Run("type=plain/impl=NewValue", func(b *testing.B) {
		a := NewArena()
		defer a.Free()
		t := reflect.TypeFor[valPlain]()
		for i := 0; b.Loop(); i++ {
			if i%1024 == 0 {
				a.Reset()
			}
			_ = NewValue(a, t)
		}
	})
	b.Run("type=ptrs/impl=New", func(b *testing.B) {
		a := NewArena()
		defer a.Free()
		for i := 0; b.Loop(); i++ {
			if i%1024 == 0 {
				a.Reset()
			}
			_ = New[valPtrs](a)
		}
	})
	b.Run("type=ptrs/impl=NewValue", func(b *testing.B) {
		a := NewArena()
		defer a.Free()
		t := reflect.TypeFor[valPtrs]()
		for i := 0; b.Loop(); i++ {
			if i%1024 == 0 {
				a.Reset()
			}
			_ = NewValue(a, t)
		}
	})
	b.Run("type=[]string/impl=MakeSlice", func(b *testing.B) {
		a := NewArena()
		defer a.Free()
		for i := 0; b.Loop(); i++ {
			if i%256 == 0 {
				a.Reset()
			}
			_ = MakeSlice[string](a, 8, 8)
		}
	})
	b.Run("type=[]string/impl=MakeSliceValue", func(b *testing.B) {
		a := NewArena()
		defer a.Free()
		t := reflect.TypeFor[[]string]()
		for i := 0; b.Loop(); i++ {
			if i%256 == 0 {
				a.Reset()
			}
			_ = MakeSliceValue(a, t, 8, 8)
		}
	})
}
