package arena

import (
	"math"
	"strings"
	"testing"
)

// FuzzMakeSlice checks MakeSlice against make for any len and cap: either
// a slice of that length and capacity, zeroed, or a panic starting with
// "arenaprof:" exactly when make would panic.
func FuzzMakeSlice(f *testing.F) {
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
		var s []int64
		msg := func() (msg string) {
			defer func() {
				if r := recover(); r != nil {
					msg, _ = r.(string)
					if msg == "" {
						msg = "non-string panic"
					}
				}
			}()
			s = MakeSlice[int64](a, n, c)
			return ""
		}()
		if valid {
			if msg != "" || len(s) != n || cap(s) != c {
				t.Fatalf("MakeSlice(%d, %d): len %d cap %d panic %q", n, c, len(s), cap(s), msg)
			}
			for _, v := range s[:c] {
				if v != 0 {
					t.Fatal("not zeroed")
				}
			}
			for i := range s[:c] {
				s[:c][i] = 1
			}
		} else if !strings.HasPrefix(msg, "arenaprof: arena.MakeSlice: ") {
			t.Fatalf("MakeSlice(%d, %d): panic %q, want an arenaprof panic", n, c, msg)
		}
		a.Reset()
	})
}

// FuzzChunkSize checks that WithChunkSize accepts exactly the sizes in
// [minChunkSize, maxChunkSize] and that an arena works with every one.
func FuzzChunkSize(f *testing.F) {
	for _, n := range []int{0, -1, minChunkSize - 1, minChunkSize, 1000, defaultChunkSize, maxChunkSize + 1} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, n int) {
		ok := n >= minChunkSize && n <= maxChunkSize
		var opt Option
		func() {
			defer func() {
				if r := recover(); r != nil && ok {
					t.Fatalf("WithChunkSize(%d) panicked: %v", n, r)
				}
			}()
			opt = WithChunkSize(n)
		}()
		if !ok {
			if opt != nil {
				t.Fatalf("WithChunkSize(%d) accepted", n)
			}
			return
		}
		if n > 1<<22 {
			return // valid, but too much memory for a fuzz iteration
		}
		a := NewArena(opt)
		for i := range 100 {
			p := New[obj256](a)
			p.a[31] = int64(i)
			_ = MakeSlice[byte](a, i*37, i*37)
		}
		a.Free()
	})
}

// FuzzLargeRetain checks that WithLargeRetain accepts exactly the
// non-negative bounds, and that an arena never keeps more large-buffer
// bytes across Reset than its bound, for any mix of request sizes.
func FuzzLargeRetain(f *testing.F) {
	f.Add(0, uint32(70000), uint32(300000))
	f.Add(-1, uint32(1), uint32(2))
	f.Add(defaultLargeRetain, uint32(1<<20), uint32(65537))
	f.Add(200000, uint32(100000), uint32(100001))
	f.Fuzz(func(t *testing.T, n int, s1, s2 uint32) {
		var opt Option
		func() {
			defer func() {
				if r := recover(); r != nil && n >= 0 {
					t.Fatalf("WithLargeRetain(%d) panicked: %v", n, r)
				}
			}()
			opt = WithLargeRetain(n)
		}()
		if n < 0 {
			if opt != nil {
				t.Fatalf("WithLargeRetain(%d) accepted", n)
			}
			return
		}
		a := NewArena(opt, WithChunkSize(minChunkSize))
		defer a.Free()
		sizes := []int{int(s1 % (4 << 20)), int(s2 % (4 << 20))}
		for round := range 3 {
			for _, sz := range sizes {
				b := MakeSlice[byte](a, sz, sz)
				for i := range b {
					if b[i] != 0 {
						t.Fatalf("round %d: byte %d of a %d-byte buffer not zero", round, i, sz)
					}
				}
				if sz > 0 {
					b[sz-1] = 1
				}
				_ = MakeSlice[*int](a, sz/64, sz/64)
			}
			a.Reset()
			if a.largeKept > uintptr(n) {
				t.Fatalf("round %d: kept %d bytes, bound %d", round, a.largeKept, n)
			}
		}
	})
}
