package arena

import (
	"reflect"
	"runtime"
	"testing"
	"unsafe"
)

// TestLayoutChecked: on the Go releases the project supports (1.26 and
// 1.27; .ci/run runs the arena's tests under both), the check at init
// passes and pointerFree agrees with reflect. A release whose layout
// differs fails here and runs the slow path (TestLayoutRefused).
func TestLayoutChecked(t *testing.T) {
	if !layoutOK {
		t.Fatalf("the runtime type descriptors of %s are not laid out as rtypeHeader says: every allocation takes the slow path", runtime.Version())
	}
	check := func(got bool, typ reflect.Type) {
		t.Helper()
		if want := !hasPointers(typ); got != want {
			t.Errorf("pointerFree[%v] = %v, want %v", typ, got, want)
		}
	}
	type inner struct {
		a [2]int32
		s []int
	}
	check(pointerFree[obj32](), reflect.TypeFor[obj32]())
	check(pointerFree[objStr](), reflect.TypeFor[objStr]())
	check(pointerFree[node](), reflect.TypeFor[node]())
	check(pointerFree[[0]*int](), reflect.TypeFor[[0]*int]())
	check(pointerFree[[3]inner](), reflect.TypeFor[[3]inner]())
	check(pointerFree[struct{}](), reflect.TypeFor[struct{}]())
	check(pointerFree[unsafe.Pointer](), reflect.TypeFor[unsafe.Pointer]())
	check(pointerFree[func()](), reflect.TypeFor[func()]())
	check(pointerFree[chan int](), reflect.TypeFor[chan int]())
	check(pointerFree[complex128](), reflect.TypeFor[complex128]())
}

// TestTypeTableCollisionFree: every type with pointers an arena allocates
// gets a slot of its own in the type table, whatever their number.
func TestTypeTableCollisionFree(t *testing.T) {
	a := NewArena()
	defer a.Free()
	arenaPP32(a)
	arenaPP8(a)
	keys := []uintptr{
		typeKey[pp0](), typeKey[pp1](), typeKey[pp7](), typeKey[pp8](),
		typeKey[pp15](), typeKey[pp16](), typeKey[pp30](), typeKey[pp31](),
	}
	if len(a.entries) != 32 {
		t.Fatalf("%d table entries, want 32", len(a.entries))
	}
	seen := map[uintptr]bool{}
	for _, e := range a.entries {
		s := tabSlot(e.key, a.mult, a.shift)
		if seen[s] {
			t.Fatalf("two types share slot %d", s)
		}
		seen[s] = true
		if a.lookup(e.key) != a.slabs[e.key] {
			t.Fatalf("type %#x: the table does not give its slab", e.key)
		}
	}
	for _, k := range keys {
		if a.lookup(k) == &a.none {
			t.Errorf("type %#x has no slot", k)
		}
	}
	if 1<<a.bits > 4096 {
		t.Errorf("table of %d slots for 32 types", 1<<a.bits)
	}
	// A key never installed misses.
	if a.lookup(typeKey[obj32]()) != &a.none {
		t.Error("a pointer-free type found in the table")
	}
}

// TestTypeTableManyKeys drives the table with synthetic keys, spaced like
// type descriptors, past the size where it stops growing: a key either
// finds its own region or misses (the slow path serves it), never another
// key's region; and up to a few hundred keys all have slots.
func TestTypeTableManyKeys(t *testing.T) {
	for _, c := range []struct {
		n       int
		stride  uintptr
		allSlot bool
	}{
		{16, 48, true}, {64, 64, true}, {100, 4096, true}, {1000, 80, false},
	} {
		a := NewArena()
		regs := make([]region, c.n)
		key := func(i int) uintptr { return 0x5a0000 + uintptr(i)*c.stride }
		for i := range regs {
			a.install(key(i), &regs[i], 8)
		}
		missing := 0
		for i := range regs {
			switch r := a.lookup(key(i)); r {
			case &regs[i]:
			case &a.none:
				missing++
			default:
				t.Fatalf("n=%d: key %d finds another key's region", c.n, i)
			}
		}
		if c.allSlot && missing > 0 {
			t.Errorf("n=%d: %d keys without a slot", c.n, missing)
		}
		if 1<<a.bits > 1<<maxTableBits {
			t.Errorf("n=%d: table of %d slots", c.n, 1<<a.bits)
		}
	}
}
