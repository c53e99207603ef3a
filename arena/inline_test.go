package arena

import (
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"testing"
	"unsafe"
)

// TestFastPathInlines builds the package's tests with the compiler's inlining
// report and checks that the entry points whose fast path must be inlined
// into their callers are: a not-inlined New costs 1.4 ns more, and an
// increment or a compare too many takes it past the budget of 80 (it
// did, and BenchmarkNew ran 2.5x slower).
func TestFastPathInlines(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the package")
	}
	// The test binary: generic functions are instantiated (their
	// shapes reported) only where something uses them.
	out, err := exec.Command("go", "test", "-c", "-o", os.DevNull, "-gcflags=-m=2", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	for _, fn := range []string{`New\[go\.shape\.`, `String`, `Bytes`, `Append\[go\.shape\.`, `Grow\[go\.shape\.`} {
		if !regexp.MustCompile(`(?m)can inline ` + fn + `[^ ]* with cost`).Match(out) {
			t.Errorf("%s is not inlined", fn)
		}
	}
}

// TestFastPathTaken: New's body serves pointer-free types without its
// slow path, under whatever release runs the test (.ci/run runs it under
// Go 1.26 and 1.27). It counts the calls of the slow path newFast is given
// while 100,000 objects of each type are allocated: a chunk refill or a
// sampled byte (the trial stream runs whether or not anybody listens, at
// a mean of 100 KiB) takes it, about 80 times per 3.2 MB; a fast path
// switched off, as on a release whose descriptor layout failed the check,
// takes it every time. The bound, n/100, is 12 times the expected count
// for 32-byte objects; for 256-byte objects the expected count is 650 of
// a bound of 1000 (its Poisson tail beyond it: below 1e-30).
func TestFastPathTaken(t *testing.T) {
	const n = 100_000
	for _, tc := range []struct {
		name  string
		alloc func(a *Arena, slow func(*Arena, any) unsafe.Pointer) unsafe.Pointer
	}{
		{"8 B", func(a *Arena, s func(*Arena, any) unsafe.Pointer) unsafe.Pointer { return newFast[obj8](a, s) }},
		{"32 B", func(a *Arena, s func(*Arena, any) unsafe.Pointer) unsafe.Pointer { return newFast[obj32](a, s) }},
		{"256 B", func(a *Arena, s func(*Arena, any) unsafe.Pointer) unsafe.Pointer { return newFast[obj256](a, s) }},
		{"[3]int16", func(a *Arena, s func(*Arena, any) unsafe.Pointer) unsafe.Pointer { return newFast[[3]int16](a, s) }},
		{"complex128", func(a *Arena, s func(*Arena, any) unsafe.Pointer) unsafe.Pointer { return newFast[complex128](a, s) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewArena()
			defer a.Free()
			slow := 0
			count := func(a *Arena, x any) unsafe.Pointer { slow++; return newSlowKey(a, x) }
			for range n {
				if tc.alloc(a, count) == nil {
					t.Fatal("nil")
				}
			}
			if slow > n/100 {
				t.Errorf("%s under %s: the slow path took %d of %d allocations (layoutOK %v): New's fast path is off", tc.name, runtime.Version(), slow, n, layoutOK)
			}
			t.Logf("%s: %d slow-path calls in %d", tc.name, slow, n)
		})
	}
}
