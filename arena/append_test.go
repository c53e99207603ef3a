package arena

import (
	"bytes"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

type ptrElem struct {
	p *int64
	s string
	n int64
}

type zeroElem struct{}

// appendModel checks Append against the built-in append on a random
// sequence of operations: appends of 0 to 40 elements (sometimes 300),
// shortening the slice, taking a tail, switching to a slice from the heap,
// allocating something else in the arena (which stops in-place growth) and
// Reset. A guard slice allocated in the arena must never change, so that
// growth in place never overwrites other memory. Every few steps a garbage
// collection runs, so that values with pointers must have been kept alive.
func appendModel[T any](t *testing.T, seed uint64, gen func(r *rand.Rand) T, eq func(x, y T) bool, opts ...Option) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	a := NewArena(opts...)
	defer a.Free()
	var s, ref []T
	var guards [][]T
	var guardRefs [][]T
	check := func(step int) {
		t.Helper()
		if len(s) != len(ref) || cap(s) < len(s) {
			t.Fatalf("step %d: len %d cap %d, want len %d", step, len(s), cap(s), len(ref))
		}
		for i := range ref {
			if !eq(s[i], ref[i]) {
				t.Fatalf("step %d: s[%d] = %v, want %v", step, i, s[i], ref[i])
			}
		}
		for g := range guards {
			for i := range guardRefs[g] {
				if !eq(guards[g][i], guardRefs[g][i]) {
					t.Fatalf("step %d: guard %d changed at %d", step, g, i)
				}
			}
		}
	}
	for step := range 3000 {
		switch op := r.IntN(100); {
		case op < 70:
			k := r.IntN(41)
			if r.IntN(50) == 0 {
				k = 300
			}
			elems := make([]T, k)
			for i := range elems {
				elems[i] = gen(r)
			}
			s = Append(a, s, elems...)
			ref = append(ref, elems...)
		case op < 78 && len(s) > 0:
			n := r.IntN(len(s) + 1)
			s, ref = s[:n], ref[:n]
		case op < 84 && len(s) > 0:
			lo := r.IntN(len(s) + 1)
			s, ref = s[lo:], ref[lo:]
		case op < 88:
			h := make([]T, r.IntN(10), 10+r.IntN(10))
			for i := range h {
				h[i] = gen(r)
			}
			s, ref = h, slices.Clone(h)
		case op < 95:
			g := MakeSlice[T](a, 3, 3)
			for i := range g {
				g[i] = gen(r)
			}
			guards = append(guards, g)
			guardRefs = append(guardRefs, slices.Clone(g))
		case op < 97:
			a.Reset()
			s, ref, guards, guardRefs = nil, nil, nil, nil
		default:
			runtime.GC()
		}
		check(step)
	}
}

func TestAppendMatchesBuiltin(t *testing.T) {
	genPtr := func(r *rand.Rand) ptrElem {
		v := r.Int64()
		return ptrElem{p: &v, s: strings.Repeat("x", r.IntN(4)) + "y", n: v}
	}
	eqPtr := func(x, y ptrElem) bool { return *x.p == x.n && *x.p == *y.p && x.s == y.s && x.n == y.n }
	for _, c := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"int64", func(t *testing.T) {
			appendModel(t, 1, func(r *rand.Rand) int64 { return r.Int64() }, func(x, y int64) bool { return x == y })
		}},
		{"byte", func(t *testing.T) {
			appendModel(t, 2, func(r *rand.Rand) byte { return byte(r.Uint32()) }, func(x, y byte) bool { return x == y })
		}},
		{"byte small chunks", func(t *testing.T) {
			appendModel(t, 3, func(r *rand.Rand) byte { return byte(r.Uint32()) }, func(x, y byte) bool { return x == y },
				WithChunkSize(minChunkSize))
		}},
		{"[3]int16", func(t *testing.T) {
			appendModel(t, 4, func(r *rand.Rand) [3]int16 { return [3]int16{int16(r.Int()), 1, 2} },
				func(x, y [3]int16) bool { return x == y })
		}},
		{"pointers", func(t *testing.T) { appendModel(t, 5, genPtr, eqPtr) }},
		{"pointers small chunks", func(t *testing.T) { appendModel(t, 6, genPtr, eqPtr, WithChunkSize(minChunkSize)) }},
		{"zero size", func(t *testing.T) {
			appendModel(t, 7, func(*rand.Rand) zeroElem { return zeroElem{} }, func(x, y zeroElem) bool { return true })
		}},
		{"int64 poison", func(t *testing.T) {
			appendModel(t, 8, func(r *rand.Rand) int64 { return r.Int64() }, func(x, y int64) bool { return x == y },
				WithPoison(true))
		}},
	} {
		t.Run(c.name, c.run)
	}
}

func TestAppendInPlace(t *testing.T) {
	a := NewArena()
	defer a.Free()
	s := MakeSlice[int64](a, 2, 2)
	s[0], s[1] = 1, 2
	t1 := Append(a, s, 3)
	if &t1[0] != &s[0] || cap(t1) != 4 || !slices.Equal(t1, []int64{1, 2, 3}) {
		t.Fatalf("not grown in place: %v cap %d", t1, cap(t1))
	}
	// Room left: written into the backing array, like append.
	t2 := Append(a, t1[:1], 9)
	if t1[1] != 9 || &t2[0] != &s[0] {
		t.Errorf("Append with room did not write into the backing array: %v", t1)
	}
	// Something allocated after t1: the next growth copies.
	_ = New[obj8](a)
	t3 := Append(a, t1, 4, 5)
	if &t3[0] == &t1[0] || !slices.Equal(t3, []int64{1, 9, 3, 4, 5}) {
		t.Errorf("grown in place past another object: %v", t3)
	}
	// A tail of the last allocation grows in place too.
	u := MakeSlice[byte](a, 8, 8)
	v := Append(a, u[5:], 'x')
	if &v[0] != &u[5] || len(v) != 4 || v[3] != 'x' {
		t.Errorf("tail not grown in place: %q", v)
	}
	// A slice with a shortened capacity does not end at the free byte.
	w := MakeSlice[int32](a, 4, 4)
	x := Append(a, w[:3:3], 7)
	if &x[0] == &w[0] || w[3] != 0 {
		t.Errorf("capacity-limited slice grown over memory past its capacity")
	}
	// Pointers: grown in place in the type's slab.
	p := MakeSlice[*int](a, 1, 1)
	q := Append(a, p, new(int))
	if &q[0] != &p[0] || cap(q) != 2 {
		t.Errorf("slice with pointers not grown in place")
	}
}

func TestAppendHeapSlice(t *testing.T) {
	a := NewArena()
	defer a.Free()
	h := []int64{1, 2, 3}
	s := Append(a, h, 4)
	if &s[0] == &h[0] || !slices.Equal(h, []int64{1, 2, 3}) || !slices.Equal(s, []int64{1, 2, 3, 4}) {
		t.Fatalf("heap slice: %v %v", h, s)
	}
	// A heap slice with room is written into, like append.
	h2 := make([]int64, 1, 4)
	s2 := Append(a, h2, 5)
	if &s2[0] != &h2[0] || h2[:2][1] != 5 {
		t.Errorf("heap slice with room not appended in place")
	}
	if got := Append[int64](a, nil); got != nil {
		t.Errorf("Append(nil) = %v, want nil", got)
	}
	if got := Append(a, h); &got[0] != &h[0] || len(got) != 3 {
		t.Errorf("Append(s) did not return s")
	}
	z := Append(a, nil, zeroElem{}, zeroElem{})
	if len(z) != 2 {
		t.Errorf("zero size: len %d", len(z))
	}
}

func TestAppendPanics(t *testing.T) {
	a := NewArena()
	full := make([]zeroElem, math.MaxInt)
	for _, c := range []struct {
		name  string
		fn    func()
		panic bool
	}{
		{"len overflows", func() { Append(a, full, zeroElem{}) }, true},
		{"too large", func() { Append(a, []int64{1}, make([]int64, 1)...); Append(a, make([]byte, 0), make([]byte, 0)...) }, false},
		{"freed, no room", func() { b := NewArena(); b.Free(); Append(b, []int64{1}, 2) }, true},
		{"freed, room", func() { b := NewArena(); b.Free(); Append(b, make([]int64, 0, 1), 2) }, false},
	} {
		func() {
			defer func() {
				if r := recover(); (r != nil) != c.panic {
					t.Errorf("%s: panic %v, want panic %v", c.name, r, c.panic)
				}
			}()
			c.fn()
		}()
	}
}

func TestAppendResetReusesMemory(t *testing.T) {
	a := NewArena(WithChecked(false)) // normal mode: checked mode never reuses memory
	defer a.Free()
	var s []int64
	for i := range 100 {
		s = Append(a, s, int64(i))
	}
	first := unsafe.SliceData(s)
	a.Reset()
	var u []int64
	for i := range 100 {
		u = Append(a, u, int64(-i))
	}
	if unsafe.SliceData(u) != first {
		t.Errorf("memory not reused after Reset")
	}
	// s was used after Reset: it silently reads the later data.
	if s[5] != -5 {
		t.Errorf("s[5] = %d, want -5 (the later data)", s[5])
	}
}

// TestAppendSampled checks, at mean 1, that every allocation Append makes
// (a growth in place, a copy) is sampled with its size and the slice type,
// that the events' sizes add up to the bytes the arena handed out, and
// that the leaf frame is the caller of Append.
func TestAppendSampled(t *testing.T) {
	rec := record(t, 1, true)
	a := NewArena(WithChunkSize(1 << 20))
	defer a.Free()
	s := MakeSlice[int64](a, 0, 4)
	rec.take()
	s = Append(a, s, 1, 2, 3, 4, 5) // in place: 4 more elements
	ev := rec.take()
	if len(ev) != 1 || ev[0].Size != 32 || ev[0].Offset != 0 || ev[0].TypeName != "[]int64" {
		t.Fatalf("in-place growth: events %+v", ev)
	}
	leaf := "github.com/arenaprof/arenaprof/arena.TestAppendSampled"
	if ev[0].frames[0] != leaf {
		t.Errorf("leaf frame %q, want %s", ev[0].frames[0], leaf)
	}
	_ = New[obj8](a)
	rec.take()
	s = Append(a, s, 6, 7, 8, 9) // copied: 16 elements
	ev = rec.take()
	if len(ev) != 1 || ev[0].Size != 128 || ev[0].TypeName != "[]int64" || ev[0].frames[0] != leaf {
		t.Fatalf("copy: events %+v", ev)
	}
	p := MakeSlice[*int](a, 1, 1)
	rec.take()
	_ = Append(a, p, nil)
	if ev = rec.take(); len(ev) != 1 || ev[0].Size != 8 || ev[0].TypeName != "[]*int" || ev[0].frames[0] != leaf {
		t.Fatalf("in-place growth with pointers: events %+v", ev)
	}

	// Every byte handed out is in exactly one sampled object.
	b := NewArena(WithChunkSize(1 << 20))
	defer b.Free()
	r := rand.New(rand.NewPCG(9, 9))
	var u []byte
	for range 2000 {
		u = Append(b, u[:r.IntN(len(u)+1)], make([]byte, r.IntN(70))...)
		if r.IntN(10) == 0 {
			_ = String(b, "interleaved")
		}
	}
	var sum int64
	for _, e := range rec.take() {
		sum += e.Size
	}
	if len(b.bytes.chunks) != 1 || sum != int64(b.bytes.off) {
		t.Errorf("events add up to %d bytes, the arena handed out %d in %d chunks", sum, b.bytes.off, len(b.bytes.chunks))
	}
}

// TestAppendSampledEstimate checks at a mean of 64 bytes that the events
// of in-place growths estimate the bytes Append handed out without bias.
// Each growth of n bytes is sampled with probability 1-(1-p)^n and
// weighted by the inverse; the bound is 6 standard deviations of the
// estimate (computed from the same weights), so a correct implementation
// fails it with probability below 1e-8 (the seed is fixed, so it never
// does).
func TestAppendSampledEstimate(t *testing.T) {
	const mean = 64
	rec := record(t, mean, false)
	a := NewArena(WithChunkSize(1<<20), WithSeed(3, 4))
	defer a.Free()
	var total int64
	var s []int64
	for round := range 2000 {
		if round%20 == 0 {
			a.Reset()
			s = nil
		}
		before := a.bytes.off
		s = Append(a, s, int64(round))
		total += int64(a.bytes.off - before)
	}
	p := 1.0 / mean
	var est, variance float64
	for _, e := range rec.take() {
		q := 1 - math.Pow(1-p, float64(e.Size))
		w := float64(e.Size) / q
		est += w
		variance += w * w * (1 - q) // an unbiased estimate of the variance term
	}
	if d := math.Abs(est - float64(total)); d > 6*math.Sqrt(variance)+1 {
		t.Errorf("estimate %.0f bytes, handed out %d (6 sigma %.0f)", est, total, 6*math.Sqrt(variance))
	}
}

// TestCopiesSurviveReset: values copied out of an arena with
// strings.Clone, slices.Clone or copy keep their contents after Reset,
// while the arena's own memory reads the next user's data.
func TestCopiesSurviveReset(t *testing.T) {
	a := NewArena(WithChecked(false)) // normal mode: the stale string faults in checked mode
	defer a.Free()
	name := String(a, "alice@example.test")
	ids := Append(a, MakeSlice[int64](a, 0, 2), 1, 2, 3)
	kept := strings.Clone(name)
	keptIDs := slices.Clone(ids)
	copied := make([]int64, len(ids))
	copy(copied, ids)
	a.Reset()
	_ = String(a, "mallory@evil.test!")
	_ = Append(a, MakeSlice[int64](a, 0, 2), 7, 8, 9)
	if kept != "alice@example.test" || !slices.Equal(keptIDs, []int64{1, 2, 3}) || !slices.Equal(copied, []int64{1, 2, 3}) {
		t.Errorf("copies changed: %q %v %v", kept, keptIDs, copied)
	}
	if name != "mallory@evil.test!" {
		t.Errorf("the arena's string reads %q after Reset, want the later data", name)
	}
}

func FuzzAppend(f *testing.F) {
	for _, c := range [][5]int{{0, 0, 0, 0, 0}, {1, 1, 1, 0, 0}, {3, 8, 6, 0, 1}, {4, 4, 300, 1, 0}, {0, 0, 10000, 0, 0}, {5, 9, 2, 2, 1}} {
		f.Add(c[0], c[1], c[2], c[3], c[4])
	}
	a := NewArena(WithChunkSize(4096))
	f.Fuzz(func(t *testing.T, n, c, k, origin, lo int) {
		const limit = 1 << 16 // elements the fuzzer may allocate
		if n < 0 || c < n || c > limit || k < 0 || k > limit || lo < 0 || lo > n {
			return
		}
		s := fuzzSlice(a, n, c, origin)
		s = s[lo:]
		for i := range s {
			s[i] = int64(i)
		}
		ref := slices.Clone(s)
		elems := make([]int64, k)
		for i := range elems {
			elems[i] = int64(-i)
		}
		got := Append(a, s, elems...)
		ref = append(ref, elems...)
		if !slices.Equal(got, ref) || cap(got) < len(got) {
			t.Fatalf("Append(len %d cap %d, %d elems) = len %d cap %d", len(s), cap(s), k, len(got), cap(got))
		}
		if k <= cap(s)-len(s) && len(got) > 0 && &got[0] != unsafe.SliceData(s) {
			t.Fatalf("Append with room did not write into s")
		}
		if a.bytes.off > defaultChunkSize {
			a.Reset()
		}
	})
}

// fuzzSlice returns a slice of length n and capacity c for the fuzz
// targets, by origin: the arena's last allocation (it can grow in place),
// from the heap, or from the arena with another object after it.
func fuzzSlice(a *Arena, n, c, origin int) []int64 {
	switch origin % 3 {
	case 0:
		return MakeSlice[int64](a, n, c)
	case 1:
		return make([]int64, n, c)
	}
	s := MakeSlice[int64](a, n, c)
	_ = New[obj8](a)
	return s
}

// TestAppendStack checks that the stack of every event Append,
// AppendString, Grow and ReadAll cause is the caller's, as runtime.Callers
// reports it, whether they grow in place or copy, with or without pointers.
func TestAppendStack(t *testing.T) {
	rec := record(t, 1, true)
	a := NewArena()
	defer a.Free()
	var ints []int64
	var ptrs []*int
	appendValue := Append[int64] // not inlined into the caller: called through a wrapper
	var bs []byte
	appendStringValue := AppendString
	growValue := Grow[int64]
	readAllValue := ReadAll
	for _, c := range []struct {
		name  string
		setup func()
		alloc func()
	}{
		{"copy", func() { ints = []int64{1} }, func() { ints = Append(a, ints, 2) }},
		{"in place", func() { ints = MakeSlice[int64](a, 1, 1) }, func() { ints = Append(a, ints, 2) }},
		{"copy pointers", func() { ptrs = []*int{nil} }, func() { ptrs = Append(a, ptrs, nil) }},
		{"in place pointers", func() { ptrs = MakeSlice[*int](a, 1, 1) }, func() { ptrs = Append(a, ptrs, nil) }},
		{"copy through a function value", func() { ints = []int64{1} }, func() { ints = appendValue(a, ints, 2) }},
		{"in place through a function value", func() { ints = MakeSlice[int64](a, 1, 1) }, func() { ints = appendValue(a, ints, 2) }},
		{"AppendString copy", func() { bs = []byte("x") }, func() { bs = AppendString(a, bs, "y") }},
		{"AppendString in place", func() { bs = MakeSlice[byte](a, 8, 8) }, func() { bs = AppendString(a, bs, "y") }},
		{"AppendString through a function value", func() { bs = []byte("x") }, func() { bs = appendStringValue(a, bs, "y") }},
		{"Grow copy", func() { ints = []int64{1} }, func() { ints = Grow(a, ints, 1) }},
		{"Grow in place", func() { ints = MakeSlice[int64](a, 1, 1) }, func() { ints = Grow(a, ints, 1) }},
		{"Grow in place pointers", func() { ptrs = MakeSlice[*int](a, 1, 1) }, func() { ptrs = Grow(a, ptrs, 1) }},
		{"Grow through a function value", func() { ints = []int64{1} }, func() { ints = growValue(a, ints, 1) }},
		{"ReadAll", func() {}, func() { bs, _ = ReadAll(a, strings.NewReader("x"), 10) }},
		{"ReadAll through a function value", func() {}, func() { bs, _ = readAllValue(a, strings.NewReader("x"), 10) }},
	} {
		c.setup()
		rec.take()
		ref := userRef(c.alloc)
		ev := rec.take()
		if len(ev) != 1 {
			t.Fatalf("%s: %d events, want 1", c.name, len(ev))
		}
		refNames := frameNames(ref)
		gotNames := ev[0].frames
		if len(gotNames) != len(refNames)+1 || !slices.Equal(gotNames[1:], refNames) ||
			!strings.HasPrefix(gotNames[0], "github.com/arenaprof/arenaprof/arena.TestAppendStack.func") {
			t.Errorf("%s: event stack %q,\nwant the closure then %q", c.name, gotNames, refNames)
		}
	}
}

// TestAppendOverlap appends elements that overlap s's own backing array,
// growing in place and by copying: the result is append's.
func TestAppendOverlap(t *testing.T) {
	a := NewArena()
	defer a.Free()
	for _, inPlace := range []bool{true, false} {
		x := MakeSlice[int64](a, 4, 4)
		copy(x, []int64{1, 2, 3, 4})
		if !inPlace {
			_ = New[obj8](a)
		}
		ref := append([]int64{1, 2}, []int64{2, 3, 4}...)
		got := Append(a, x[:2], x[1:4]...)
		if !slices.Equal(got, ref) {
			t.Errorf("in place %v: got %v, want %v", inPlace, got, ref)
		}
		got = Append(a, got, got...)
		if ref = append(ref, ref...); !slices.Equal(got, ref) {
			t.Errorf("in place %v: self append got %v, want %v", inPlace, got, ref)
		}
	}
}

func TestAppendString(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, opts := range [][]Option{nil, {WithChunkSize(minChunkSize)}, {WithPoison(true)}} {
		a := NewArena(opts...)
		var b, ref []byte
		guard := String(a, "guard!")
		for step := range 3000 {
			switch op := r.IntN(10); {
			case op < 7:
				s := strings.Repeat(string(rune('a'+r.IntN(26))), r.IntN(90))
				b = AppendString(a, b, s)
				ref = append(ref, s...)
			case op < 8:
				n := r.IntN(len(b) + 1)
				b, ref = b[:n], ref[:n]
			case op < 9:
				guard = String(a, "guard!")
			default:
				b, ref = []byte("heap"), []byte("heap")
			}
			if !bytes.Equal(b, ref) || guard != "guard!" {
				t.Fatalf("step %d: %q, want %q; guard %q", step, b, ref, guard)
			}
		}
		a.Free()
	}

	a := NewArena()
	defer a.Free()
	s := MakeSlice[byte](a, 0, 8)
	if got := AppendString(a, s, "12345678"); &got[0] != unsafe.SliceData(s) {
		t.Errorf("AppendString with room did not write into b")
	}
	if got := AppendString(a, nil, ""); got != nil {
		t.Errorf(`AppendString(nil, "") = %v, want nil`, got)
	}
	g := AppendString(a, s[:8], "9")
	if &g[0] != unsafe.SliceData(s) || string(g) != "123456789" {
		t.Errorf("not grown in place: %q", g)
	}
}

func TestGrow(t *testing.T) {
	a := NewArena()
	defer a.Free()
	for _, c := range []struct {
		name    string
		s       func() []int64
		n       int
		inPlace bool // the result shares s's first element
	}{
		{"nil, 0", func() []int64 { return nil }, 0, false},
		{"nil", func() []int64 { return nil }, 10, false},
		{"room", func() []int64 { return MakeSlice[int64](a, 1, 5) }, 4, true},
		{"in place", func() []int64 { return MakeSlice[int64](a, 2, 2) }, 3, true},
		{"copied", func() []int64 { s := MakeSlice[int64](a, 2, 2); _ = New[obj8](a); return s }, 3, false},
		{"heap", func() []int64 { return []int64{1, 2} }, 1, false},
		{"heap with room", func() []int64 { return make([]int64, 2, 4) }, 2, true},
		{"large", func() []int64 { return MakeSlice[int64](a, 3, 3) }, 100000, false},
	} {
		s := c.s()
		for i := range s {
			s[i] = int64(i + 1)
		}
		ref := slices.Clone(s)
		got := Grow(a, s, c.n)
		if !slices.Equal(got, ref) || cap(got)-len(got) < c.n {
			t.Errorf("%s: Grow(len %d cap %d, %d) = len %d cap %d", c.name, len(s), cap(s), c.n, len(got), cap(got))
		}
		if len(s) > 0 && (&got[0] == &s[0]) != c.inPlace {
			t.Errorf("%s: shares s: %v, want %v", c.name, &got[0] == &s[0], c.inPlace)
		}
		for i, v := range got[len(got):cap(got)] {
			if v != 0 {
				t.Fatalf("%s: element %d past the length is %d", c.name, len(got)+i, v)
			}
		}
		if c.n > 0 && len(got) > 0 {
			// The room is the caller's: append does not allocate.
			if p := append(got, make([]int64, c.n)...); &p[0] != &got[0] {
				t.Errorf("%s: append of %d after Grow allocated", c.name, c.n)
			}
		}
	}
	if z := Grow(a, []zeroElem{{}}, 5); len(z) != 1 || cap(z) < 6 {
		t.Errorf("zero size: len %d cap %d", len(z), cap(z))
	}
	p := MakeSlice[*int](a, 1, 1)
	if q := Grow(a, p, 1); &q[0] != &p[0] || cap(q) < 2 {
		t.Errorf("slice with pointers not grown in place")
	}
}

func TestGrowPanics(t *testing.T) {
	a := NewArena()
	defer a.Free()
	for _, c := range []struct {
		name  string
		fn    func()
		panic bool
	}{
		{"negative", func() { Grow(a, []int64{1}, -1) }, true},
		{"negative, room", func() { Grow(a, make([]int64, 0, 4), -1) }, true},
		{"too large", func() { Grow(a, []int64{1}, math.MaxInt) }, true},
		{"too large for the size", func() { Grow(a, []int64{1}, maxAlloc/8) }, true},
		{"freed, no room", func() { b := NewArena(); b.Free(); Grow(b, []int64{1}, 1) }, true},
		{"freed, room", func() { b := NewArena(); b.Free(); Grow(b, make([]int64, 0, 1), 1) }, false},
	} {
		func() {
			defer func() {
				r := recover()
				if (r != nil) != c.panic {
					t.Errorf("%s: panic %v, want panic %v", c.name, r, c.panic)
				}
				if s, _ := r.(string); r != nil && !strings.HasPrefix(s, "arenaprof: arena") {
					t.Errorf("%s: panic %v, want an arenaprof panic", c.name, r)
				}
			}()
			c.fn()
		}()
	}
}

// FuzzGrow checks Grow for any n and starting slice: either room for n more
// elements with s's contents kept, or an arenaprof panic exactly when n is
// negative or the capacity too large.
func FuzzGrow(f *testing.F) {
	for _, c := range [][4]int{{0, 0, 0, 0}, {1, 1, 1, 0}, {3, 8, 5, 1}, {2, 2, -1, 0}, {0, 0, math.MaxInt, 2}, {4, 4, 1 << 14, 0}} {
		f.Add(c[0], c[1], c[2], c[3])
	}
	a := NewArena(WithChunkSize(4096))
	f.Fuzz(func(t *testing.T, n, c, k, origin int) {
		const limit = 1 << 16 // elements the fuzzer may allocate
		if n < 0 || c < n || c > limit || k > limit && k <= maxAlloc/8 {
			return
		}
		s := fuzzSlice(a, n, c, origin)
		for i := range s {
			s[i] = int64(i)
		}
		ref := slices.Clone(s)
		var got []int64
		msg := func() (msg string) {
			defer func() {
				if r := recover(); r != nil {
					if msg, _ = r.(string); msg == "" {
						msg = "non-string panic"
					}
				}
			}()
			got = Grow(a, s, k)
			return ""
		}()
		valid := k >= 0 && k <= cap(s)-len(s) || k >= 0 && uint64(len(s))+uint64(k) <= maxAlloc/8
		if !valid {
			if !strings.HasPrefix(msg, "arenaprof: arena.Grow: ") {
				t.Fatalf("Grow(len %d cap %d, %d): panic %q, want an arenaprof panic", len(s), cap(s), k, msg)
			}
			return
		}
		if msg != "" || !slices.Equal(got, ref) || cap(got)-len(got) < k {
			t.Fatalf("Grow(len %d cap %d, %d) = len %d cap %d, panic %q", len(s), cap(s), k, len(got), cap(got), msg)
		}
		if a.bytes.off > defaultChunkSize {
			a.Reset()
		}
	})
}
