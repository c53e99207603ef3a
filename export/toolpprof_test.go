package export_test

import (
	"os"
	"os/exec"
	"testing"
)

// toolPprof returns the runners of the real go tool pprof (the go binary
// goBin) on the profile at path: pprof returns the output and the error,
// run fails the test on an error.
func toolPprof(t *testing.T, goBin, path string) (pprof func(args ...string) (string, error), run func(args ...string) string) {
	pprof = func(args ...string) (string, error) {
		cmd := exec.Command(goBin, append([]string{"tool", "pprof"}, append(args, path)...)...)
		cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	run = func(args ...string) string {
		t.Helper()
		out, err := pprof(args...)
		if err != nil {
			t.Fatalf("go tool pprof %v: %v\n%s", args, err, out)
		}
		return out
	}
	return pprof, run
}
