package arena

import (
	"testing"
	"unsafe"
)

func TestLargeClass(t *testing.T) {
	for _, c := range []struct{ n, want uintptr }{
		{1, 8}, {8, 8}, {65537, 81920}, {72 << 10, 80 << 10}, {80 << 10, 80 << 10},
		{96 << 10, 96 << 10}, {96<<10 + 1, 112 << 10}, {128 << 10, 128 << 10}, {128<<10 + 1, 160 << 10},
	} {
		if got := largeClass(c.n); got != c.want {
			t.Errorf("largeClass(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	for n := uintptr(65537); n < 1<<22; n += 4093 {
		if s := largeClass(n); s < n || s > n+n/4 {
			t.Fatalf("largeClass(%d) = %d: not in [n, 1.25n]", n, s)
		}
	}
}

func TestLargeReuse(t *testing.T) {
	a := NewArena(WithChecked(false)) // normal mode: checked mode keeps nothing
	defer a.Free()
	const n = 72 << 10
	s := MakeSlice[byte](a, n, n)
	for i := range s {
		s[i] = 0xff
	}
	p := unsafe.SliceData(s)
	a.Reset()
	s2 := MakeSlice[byte](a, n-100, n-100)
	if unsafe.SliceData(s2) != p {
		t.Error("a large buffer of the same class was not reused after Reset")
	}
	for i, b := range s2 {
		if b != 0 {
			t.Fatalf("reused buffer not zeroed at %d", i)
		}
	}
	// Two buffers of the class in use at once: the second is new.
	s3 := MakeSlice[byte](a, n, n)
	if unsafe.SliceData(s3) == p {
		t.Error("a buffer in use was handed out again")
	}
	a.Reset()
	if a.largeKept != 2*largeClass(n) {
		t.Errorf("kept %d bytes, want %d", a.largeKept, 2*largeClass(n))
	}

	// Steady state: no allocation per request.
	allocs := testing.AllocsPerRun(100, func() {
		sinkB = MakeSlice[byte](a, n, n)
		a.Reset()
	})
	if allocs != 0 {
		t.Errorf("%v allocations per large request and Reset, want 0", allocs)
	}
}

func TestLargeRetainBound(t *testing.T) {
	for _, c := range []struct {
		name  string
		opt   []Option
		bound uintptr
	}{
		{"default", nil, defaultLargeRetain},
		{"none", []Option{WithLargeRetain(0)}, 0},
		{"4 MiB", []Option{WithLargeRetain(4 << 20)}, 4 << 20},
	} {
		a := NewArena(append(c.opt, WithChecked(false))...) // checked mode keeps nothing
		for round := range 3 {
			for i := range 8 {
				sinkB = MakeSlice[byte](a, 300<<10+i, 300<<10+i)
			}
			a.Reset()
			if a.largeKept > c.bound {
				t.Errorf("%s, round %d: kept %d bytes, bound %d", c.name, round, a.largeKept, c.bound)
			}
		}
		if c.bound >= 8*largeClass(300<<10) && a.largeKept != 8*largeClass(300<<10) {
			t.Errorf("%s: kept %d bytes, want all 8 buffers", c.name, a.largeKept)
		}
		a.Free()
		if a.largeKept != 0 {
			t.Errorf("%s: %d bytes kept after Free", c.name, a.largeKept)
		}
	}
	mustPanic(t, "negative retain", "negative", func() { WithLargeRetain(-1) })
}

func TestLargeTypedReuse(t *testing.T) {
	a := NewArena(WithChecked(false)) // normal mode: checked mode keeps nothing
	defer a.Free()
	const n = 20 << 10 // 160 KiB of pointers
	s := MakeSlice[*int](a, n, n)
	for i := range s {
		v := i
		s[i] = &v
	}
	p := unsafe.SliceData(s)
	a.Reset()
	s2 := MakeSlice[*int](a, n, n)
	if unsafe.SliceData(s2) != p {
		t.Error("a typed large buffer was not reused")
	}
	for i, q := range s2 {
		if q != nil {
			t.Fatalf("reused typed buffer holds a pointer at %d", i)
		}
	}
	// Another type of the same size class gets its own buffer.
	s3 := MakeSlice[[]byte](a, n/3, n/3)
	if unsafe.Pointer(unsafe.SliceData(s3)) == unsafe.Pointer(p) {
		t.Error("a typed buffer was reused for another type")
	}
}

// TestSteadyStateNoAllocs: a warm arena allocates nothing, for every entry
// point, typed slabs (cleared at Reset) included.
func TestSteadyStateNoAllocs(t *testing.T) {
	type typed struct {
		s string
		p *int
	}
	a := NewArena(WithChecked(false)) // normal mode: checked mode maps memory at every Reset
	defer a.Free()
	src := []byte("abc")
	round := func() {
		for range 100 {
			sink32 = New[obj32](a)
			_ = New[typed](a)
			sinkS = String(a, "abc")
			sinkB = Bytes(a, src)
			sinkB = MakeSlice[byte](a, 10, 10)
			_ = MakeSlice[*int](a, 3, 3)
		}
		a.Reset()
	}
	round()
	if n := testing.AllocsPerRun(20, round); n != 0 {
		t.Errorf("%v allocations per round, want 0", n)
	}
}
