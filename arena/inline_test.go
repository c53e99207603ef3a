package arena

import (
	"os"
	"os/exec"
	"regexp"
	"testing"
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
