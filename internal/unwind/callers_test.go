package unwind

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// frameNames symbolizes a stack with runtime.CallersFrames.
func frameNames(pcs []uintptr) []string {
	var names []string
	if len(pcs) == 0 {
		return nil
	}
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		names = append(names, f.Function)
		if !more {
			return names
		}
	}
}

// both captures the stack of its caller twice, with FastCallers and with
// runtime.Callers, skipping skip physical frames above its caller (which
// must not inline any of them). Both captures start at the same call site,
// so every pc must agree.
//
//go:noinline
func both(skip, size int) (fast, slow []uintptr) {
	fast = make([]uintptr, size)
	slow = make([]uintptr, size)
	fast = fast[:FastCallers(skip+1, fast)]
	slow = slow[:runtime.Callers(skip+2, slow)]
	return fast, slow
}

// bothStack is both with FastStack in place of FastCallers. It captures
// the stack twice with FastStack, so that the second capture comes from
// the table of expanded stacks, and fails if the two differ.
//
//go:noinline
func bothStack(skip, size int) (fast, slow []uintptr) {
	slow = make([]uintptr, size)
	scratch := make([]uintptr, size)
	var first []uintptr
	for i := range 2 {
		st, _ := FastStack(skip+1, scratch)
		fast = slices.Clone(st)
		if i == 0 {
			first = fast
		}
	}
	slow = slow[:runtime.Callers(skip+2, slow)]
	if !slices.Equal(first, fast) {
		return nil, slow
	}
	return fast, slow
}

// sameStack reports how two captures of one stack differ. The leaf pcs
// differ when both were taken in the same frame (two call sites); the
// leaf's function must still agree.
func sameStack(t *testing.T, name string, fast, slow []uintptr, sameLeafPC bool) {
	t.Helper()
	fn, sn := frameNames(fast), frameNames(slow)
	if len(fast) != len(slow) || !slices.Equal(fn, sn) {
		t.Fatalf("%s: FastCallers gave %d pcs %q,\nruntime.Callers %d pcs %q", name, len(fast), fn, len(slow), sn)
	}
	if len(fast) == 0 {
		return
	}
	from := 1
	if sameLeafPC {
		from = 0
	}
	if !slices.Equal(fast[from:], slow[from:]) {
		t.Fatalf("%s: pcs differ:\n%x\n%x", name, fast, slow)
	}
}

// deep calls fn below depth more physical frames.
//
//go:noinline
func deep(depth int, fn func()) {
	if depth <= 0 {
		fn()
		return
	}
	deep(depth-1, fn)
}

// inlinedLeaf and inlinedMiddle are small enough to be inlined into their
// caller: the frames of the captured stack hold inlined calls.
func inlinedLeaf(fast, slow []uintptr) (int, int) {
	return FastCallers(0, fast), runtime.Callers(1, slow)
}

func inlinedMiddle(fast, slow []uintptr) (int, int) { return inlinedLeaf(fast, slow) }

//go:noinline
func notInlined(fast, slow []uintptr) (int, int) { return inlinedMiddle(fast, slow) }

type inner struct{}

//go:noinline
func (inner) Capture(skip, size int) ([]uintptr, []uintptr) { return both(skip, size) }

type outer struct{ inner } // outer.Capture is a compiler-generated wrapper

type capturer interface {
	Capture(skip, size int) ([]uintptr, []uintptr)
}

func TestFastCallersMatchesRuntimeCallers(t *testing.T) {
	// Both settings of SetFramePointerUnwinding must give the stacks
	// runtime.Callers gives.
	for _, fp := range []bool{true, false} {
		prev := SetFramePointerUnwinding(fp)
		t.Run(fmt.Sprintf("framepointers=%v", fp), testFastCallersMatches)
		SetFramePointerUnwinding(prev)
	}
}

func testFastCallersMatches(t *testing.T) {
	for _, c := range []struct {
		name  string
		depth int // extra physical frames below the test
		skip  int
		size  int
	}{
		{"shallow", 0, 0, 64},
		{"depth 5", 5, 0, 64},
		{"depth 20", 20, 0, 64},
		{"skip 1", 5, 1, 64},
		{"skip 3", 5, 3, 64},
		{"deeper than the buffer", 200, 0, 64},
		{"deeper than the buffer, skip 7", 200, 7, 64},
		{"tiny buffer", 20, 0, 1},
		{"buffer of 3", 20, 2, 3},
		{"large buffer", 300, 0, 1024},
	} {
		for _, impl := range []struct {
			name    string
			capture func(skip, size int) (fast, slow []uintptr)
		}{{"FastCallers", both}, {"FastStack", bothStack}} {
			name := impl.name + ", " + c.name
			var fast, slow []uintptr
			deep(c.depth, func() { fast, slow = impl.capture(c.skip, c.size) })
			sameStack(t, name, fast, slow, true)
			if c.skip == 0 && !strings.HasSuffix(frameNames(fast)[0], ".testFastCallersMatches.func1") {
				t.Errorf("%s: leaf %s, want the closure that called both", name, frameNames(fast)[0])
			}
		}
	}
}

func TestFastCallersInlined(t *testing.T) {
	fast, slow := make([]uintptr, 64), make([]uintptr, 64)
	var nf, ns int
	deep(3, func() { nf, ns = inlinedMiddle(fast, slow) })
	sameStack(t, "inlined into a closure", fast[:nf], slow[:ns], false)
	nf, ns = notInlined(fast, slow)
	sameStack(t, "inlined into a noinline function", fast[:nf], slow[:ns], false)
	names := frameNames(fast[:nf])
	want := []string{"inlinedLeaf", "inlinedMiddle", "notInlined", "TestFastCallersInlined"}
	for i, w := range want {
		if i >= len(names) || !strings.HasSuffix(names[i], "."+w) {
			t.Fatalf("frames %q, want %q first", names, want)
		}
	}
}

func TestFastCallersWrapper(t *testing.T) {
	var c capturer = outer{}
	fast, slow := c.Capture(1, 64)
	sameStack(t, "method wrapper", fast, slow, true)
	fast, slow = c.Capture(0, 64)
	sameStack(t, "method wrapper, skip 0", fast, slow, true)
	if names := frameNames(fast); !strings.HasSuffix(names[0], "inner.Capture") {
		t.Errorf("leaf %s, want inner.Capture", names[0])
	}
}

func TestFastCallersGoroutineBottom(t *testing.T) {
	for _, depth := range []int{0, 1, 10} {
		var fast, slow []uintptr
		done := make(chan struct{})
		go func() {
			defer close(done)
			deep(depth, func() { fast, slow = both(0, 256) })
		}()
		<-done
		sameStack(t, "goroutine", fast, slow, true)
		if names := frameNames(fast); names[len(names)-1] != "runtime.goexit" {
			t.Errorf("depth %d: bottom frame %s, want runtime.goexit", depth, names[len(names)-1])
		}
	}
}

func TestFastCallersEdges(t *testing.T) {
	if n := FastCallers(0, nil); n != 0 {
		t.Errorf("nil buffer: %d", n)
	}
	if n := FastCallers(1<<20, make([]uintptr, 8)); n != 0 {
		t.Errorf("skip beyond the stack: %d", n)
	}
	var a, b [16]uintptr
	na := FastCallers(-5, a[:])
	nb := FastCallers(0, b[:])
	if na != nb || !slices.Equal(frameNames(a[:na]), frameNames(b[:nb])) {
		t.Errorf("negative skip: %q, skip 0: %q", frameNames(a[:na]), frameNames(b[:nb]))
	}
}

func TestFastCallersConcurrent(t *testing.T) {
	// Many goroutines fill and read the inlining cache at once; the race
	// detector checks the publication.
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				var fast, slow []uintptr
				capture := both
				if i%2 == 1 {
					capture = bothStack
				}
				deep((g+i)%13, func() { fast, slow = capture(0, 64) })
				if !slices.Equal(frameNames(fast), frameNames(slow)) || !slices.Equal(fast[1:], slow[1:]) {
					errs <- strings.Join(frameNames(fast), ",") + " vs " + strings.Join(frameNames(slow), ",")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func FuzzFastCallers(f *testing.F) {
	for _, s := range []struct{ skip, size int }{{0, 0}, {0, 1}, {0, 64}, {1, 2}, {3, 500}, {-1, 8}, {1 << 30, 8}, {-1 << 30, 3}} {
		f.Add(s.skip, s.size)
	}
	f.Fuzz(func(t *testing.T, skip, size int) {
		size = int(uint(size) % 2048)
		pcs := make([]uintptr, size)
		n := FastCallers(skip, pcs)
		if n < 0 || n > size {
			t.Fatalf("FastCallers(%d, [%d]) = %d", skip, size, n)
		}
		if skip <= 0 && size > 0 && n == 0 {
			t.Fatalf("FastCallers(%d, [%d]) found no frame", skip, size)
		}
		for i, pc := range pcs[:n] {
			if pc == 0 {
				t.Fatalf("pc %d of %d is 0", i, n)
			}
		}
	})
}

func BenchmarkCallers(b *testing.B) {
	for _, c := range []struct {
		name string
		fn   func(int, []uintptr) int
	}{{"impl=fast", FastCallers}, {"impl=runtime", Callers}} {
		b.Run(c.name, func(b *testing.B) {
			var pcs [MaxStackDepth]uintptr
			deep(20, func() {
				b.ResetTimer()
				for range b.N {
					c.fn(0, pcs[:])
				}
			})
		})
	}
}

//go:noinline
func callersLeaf(skip int) string {
	var pcs [8]uintptr
	n := Callers(skip, pcs[:])
	f, _ := runtime.CallersFrames(pcs[:n]).Next()
	return f.Function
}

//go:noinline
func callersMiddle() string { return callersLeaf(1) }

func TestCallersSkip(t *testing.T) {
	if got := callersLeaf(0); !strings.HasSuffix(got, ".callersLeaf") {
		t.Errorf("skip 0: leaf %s, want callersLeaf", got)
	}
	if got := callersMiddle(); !strings.HasSuffix(got, ".callersMiddle") {
		t.Errorf("skip 1: leaf %s, want callersMiddle", got)
	}
}
