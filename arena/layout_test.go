package arena

import (
	"runtime"
	"testing"
	"unsafe"
)

// TestLayoutRefused: the check at init refuses every layout that differs
// from the runtime's in a field the fast path or the check reads, without
// a wild read (the element's offset is checked by comparing pointers
// before anything is read through it). A release that moved a field
// would be one of these rows.
func TestLayoutRefused(t *testing.T) {
	word := unsafe.Sizeof(uintptr(0))
	for _, tc := range []struct {
		name string
		l    descLayout
	}{
		{"elem one word later", descLayout{elem: mirror.elem + word, size: mirror.size, ptrBytes: mirror.ptrBytes, align: mirror.align}},
		{"elem one word earlier", descLayout{elem: mirror.elem - word, size: mirror.size, ptrBytes: mirror.ptrBytes, align: mirror.align}},
		{"ptrBytes where size is", descLayout{elem: mirror.elem, size: mirror.size, ptrBytes: mirror.size, align: mirror.align}},
		{"ptrBytes one word later", descLayout{elem: mirror.elem, size: mirror.size, ptrBytes: mirror.ptrBytes + word, align: mirror.align}},
		{"size where ptrBytes is", descLayout{elem: mirror.elem, size: mirror.ptrBytes, ptrBytes: mirror.ptrBytes, align: mirror.align}},
		{"align at tflag", descLayout{elem: mirror.elem, size: mirror.size, ptrBytes: mirror.ptrBytes, align: mirror.align - 1}},
		{"align at kind", descLayout{elem: mirror.elem, size: mirror.size, ptrBytes: mirror.ptrBytes, align: mirror.align + 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if checkLayout(tc.l) {
				t.Errorf("checkLayout(%+v) = true, want false (the mirror is %+v)", tc.l, mirror)
			}
		})
	}
	if !checkLayout(mirror) {
		t.Errorf("checkLayout(mirror) = false under %s", runtime.Version())
	}
}

// TestSlowOnlyNeverReadsDescriptor: with the check failed, arenas are
// built slow-only, and every entry point still returns right, zeroed
// memory of the right kind: pointer-free and pointerful values, zero-size
// ones at offset 0 and after a bump, slices, and growth in place. It runs
// the package's arena with layoutOK forced false, as a release with a
// different layout would; the fast paths' compares fail before any
// descriptor read (a wrong read there would send a pointerful type to
// the byte region, which the GC does not scan: the checks below see it).
func TestSlowOnlyNeverReadsDescriptor(t *testing.T) {
	defer func(ok bool) { layoutOK = ok }(layoutOK)
	layoutOK = false
	a := NewArena()
	defer a.Free()
	if !a.bytes.slowOnly || a.bytes.combined != 0 {
		t.Fatalf("byte region: slowOnly %v, combined %d; want true, 0", a.bytes.slowOnly, a.bytes.combined)
	}
	for round := range 3 {
		z := New[struct{}](a)
		p := New[obj32](a)
		*p = obj32{1, 2, 3, 4}
		z2 := New[struct{}](a) // after a bump: off > 0
		s := New[objStr](a)
		s.s = string(rune('a' + round))
		b := MakeSlice[byte](a, 10, 16)
		e := MakeSlice[struct{}](a, 3, 5)
		ps := MakeSlice[*int](a, 2, 2)
		x := 7
		ps[0] = &x
		b = Append(a, b, make([]byte, 100)...)
		if z == nil || z2 == nil || len(e) != 3 || cap(e) != 5 || len(b) != 110 {
			t.Fatalf("round %d: z %p z2 %p e %d/%d b %d", round, z, z2, len(e), cap(e), len(b))
		}
		if *p != (obj32{1, 2, 3, 4}) || *ps[0] != 7 {
			t.Fatalf("round %d: values lost", round)
		}
		// The pointerful values came from typed slabs, never from the
		// byte region (which the GC does not scan).
		for _, ptr := range []unsafe.Pointer{unsafe.Pointer(s), unsafe.Pointer(&ps[0])} {
			if inRegion(&a.bytes, ptr) {
				t.Fatalf("round %d: a value with pointers at %p is in the byte region", round, ptr)
			}
		}
		if a.bytes.combined != 0 {
			t.Fatalf("round %d: combined %d after the slow path, want 0", round, a.bytes.combined)
		}
		runtime.GC()
		if s.s != string(rune('a'+round)) {
			t.Fatalf("round %d: string lost after GC", round)
		}
		a.Reset()
	}
}

// inRegion reports whether p lies in one of r's chunks.
func inRegion(r *region, p unsafe.Pointer) bool {
	for _, c := range r.chunks {
		if uintptr(p) >= uintptr(c.base) && uintptr(p) < uintptr(c.base)+c.size {
			return true
		}
	}
	return false
}
