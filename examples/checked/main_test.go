package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
)

// TestChecked runs the example twice: without checked mode the stale read
// returns the second request's data; with ARENAPROF_CHECKED=1 it stops at
// the read with the runtime's fault and the report naming Pool.Put (Linux
// amd64/arm64, where checked mode faults; elsewhere it poisons instead).
func TestChecked(t *testing.T) {
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skip("checked mode faults on Linux amd64/arm64 only")
	}
	bin := filepath.Join(t.TempDir(), "checked")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tests := []struct {
		name    string
		checked string
		fails   bool
		want    string
	}{
		{"off", "", false, `bob's request: ada's address is "bob@example.test"`},
		{"on", "1", true, `(?s)ada's request: ada's address is "ada@example.test"\n.*fatal error: fault.*main\.handle.*arena memory used after its release by Pool\.Put\..*released by Pool\.Put at:`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin)
			cmd.Env = append(os.Environ(), "ARENAPROF_CHECKED="+tc.checked)
			out, err := cmd.CombinedOutput()
			if (err != nil) != tc.fails {
				t.Fatalf("exit error %v, want failure %v:\n%s", err, tc.fails, out)
			}
			if !regexp.MustCompile(tc.want).Match(out) {
				t.Fatalf("output does not match %q:\n%s", tc.want, out)
			}
		})
	}
}
