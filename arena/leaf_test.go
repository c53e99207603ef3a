package arena

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/arenaprof/arenaprof/internal/unwind"
)

// The event path captures stacks by frame-pointer unwinding and skips a
// fixed number of physical frames; these tests pin that count for every
// entry point, with the entry point inlined into the user's function or
// not, and catch a change in the compiler's inlining of the arena's own
// functions: every pc of an event's stack must equal what runtime.Callers
// reports from the user's function, except the leaf pc (another call site
// in the same function).

// userRef captures its own stack, then allocates with fn, and returns the
// stack. It is not inlined.
//
//go:noinline
func userRef(fn func()) []uintptr {
	ref := make([]uintptr, 64)
	ref = ref[:runtime.Callers(1, ref)]
	fn()
	return ref
}

// inlinedUser is small enough to be inlined into its caller: the event's
// leaf frame is still inlinedUser.
func inlinedUser(a *Arena) *obj32 { return New[obj32](a) }

func inlinedUserString(a *Arena) string { return String(a, "inlined") }

func inlinedUserSlice(a *Arena) []int { return MakeSlice[int](a, 2, 2) }

func TestLeafFrameMatchesRuntimeCallers(t *testing.T) {
	rec := record(t, 1, true)
	a := NewArena()
	defer a.Free()
	newValue := New[obj32]        // a generic function value: called through a wrapper
	makeValue := MakeSlice[uint8] // MakeSlice not inlined into the caller
	cases := []struct {
		name  string
		alloc func()
	}{
		{"New", func() { sink32 = New[obj32](a) }},
		{"New pointers", func() { sinkStr = New[objStr](a) }},
		{"tryNew then New", func() {
			p := tryNew[obj8](a)
			if p == nil {
				p = New[obj8](a)
			}
			sink8 = p
		}},
		{"New through a function value", func() { sink32 = newValue(a) }},
		{"MakeSlice", func() { sinkB = MakeSlice[byte](a, 10, 10) }},
		{"MakeSlice through a function value", func() { sinkB = makeValue(a, 10, 10) }},
		{"MakeSlice pointers", func() { _ = MakeSlice[*int](a, 4, 4) }},
		{"String", func() { _ = String(a, "abc") }},
		{"Bytes", func() { sinkB = Bytes(a, []byte("abc")) }},
		{"large", func() { sinkB = MakeSlice[byte](a, 1<<20, 1<<20) }},
		{"large pointers", func() { _ = MakeSlice[*int](a, 1<<17, 1<<17) }},
	}
	for _, c := range cases {
		ref := userRef(c.alloc)
		ev := rec.take()
		if len(ev) != 1 {
			t.Fatalf("%s: %d events, want 1", c.name, len(ev))
		}
		got := ev[0].Stack
		// The closure c.alloc is the leaf, then userRef (at another call
		// site than ref's leaf), then the same pcs.
		refNames := frameNames(ref)
		gotNames := ev[0].frames
		if len(gotNames) != len(refNames)+1 || !slices.Equal(gotNames[1:], refNames) ||
			!slices.Equal(got[2:], ref[1:]) {
			t.Errorf("%s: event stack %q,\nwant the closure then %q", c.name, gotNames, refNames)
		}
		if !strings.HasPrefix(gotNames[0], "github.com/arenaprof/arenaprof/arena.TestLeafFrameMatchesRuntimeCallers.func") {
			t.Errorf("%s: leaf %s, want the test's closure", c.name, gotNames[0])
		}
	}
}

func TestLeafFrameInlinedUser(t *testing.T) {
	rec := record(t, 1, true)
	a := NewArena()
	defer a.Free()
	for _, c := range []struct {
		name  string
		alloc func()
		leaf  string
	}{
		{"New", func() { sink32 = inlinedUser(a) }, "inlinedUser"},
		{"String", func() { _ = inlinedUserString(a) }, "inlinedUserString"},
		{"MakeSlice", func() { _ = inlinedUserSlice(a) }, "inlinedUserSlice"},
	} {
		c.alloc()
		ev := rec.take()
		if len(ev) != 1 {
			t.Fatalf("%s: %d events, want 1", c.name, len(ev))
		}
		f := ev[0].frames
		if len(f) < 3 || f[0] != "github.com/arenaprof/arenaprof/arena."+c.leaf ||
			!strings.HasPrefix(f[1], "github.com/arenaprof/arenaprof/arena.TestLeafFrameInlinedUser.func") ||
			f[2] != "github.com/arenaprof/arenaprof/arena.TestLeafFrameInlinedUser" {
			t.Errorf("%s: frames %q, want %s, the closure, the test", c.name, f[:min(4, len(f))], c.leaf)
		}
	}
}

// deepAlloc allocates depth frames below its caller.
//
//go:noinline
func deepAlloc(a *Arena, depth int) {
	if depth == 0 {
		sink32 = New[obj32](a)
		return
	}
	deepAlloc(a, depth-1)
}

func TestLeafFrameDeepStack(t *testing.T) {
	rec := record(t, 1, true)
	a := NewArena()
	defer a.Free()
	deepAlloc(a, 200)
	ev := rec.take()
	if len(ev) != 1 {
		t.Fatalf("%d events, want 1", len(ev))
	}
	f := ev[0].frames
	if len(ev[0].Stack) != unwind.MaxStackDepth || len(f) != unwind.MaxStackDepth {
		t.Errorf("stack of %d pcs, %d frames; want %d", len(ev[0].Stack), len(f), unwind.MaxStackDepth)
	}
	for i, fn := range f {
		if fn != "github.com/arenaprof/arenaprof/arena.deepAlloc" {
			t.Fatalf("frame %d is %s, want deepAlloc", i, fn)
		}
	}
}

// frameNames symbolizes a stack.
func frameNames(pcs []uintptr) []string {
	var names []string
	frames := runtime.CallersFrames(pcs)
	for len(pcs) > 0 {
		f, more := frames.Next()
		names = append(names, f.Function)
		if !more {
			break
		}
	}
	return names
}
