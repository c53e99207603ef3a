package quietlog

import (
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Run(m)) }

// TestChild logs a warning through slog.Default, then passes or fails as
// QUIETLOG_CHILD says; it runs only as a child of TestRun.
func TestChild(t *testing.T) {
	mode := os.Getenv("QUIETLOG_CHILD")
	if mode == "" {
		t.Skip("runs only as a child of TestRun")
	}
	slog.Warn("upload failed", "err", "connection refused")
	if mode == "fail" {
		t.Error("failing on purpose")
	}
}

// TestRun: a passing run prints no log line; a failing one prints them
// after its results.
func TestRun(t *testing.T) {
	for _, c := range []struct {
		mode     string
		wantLogs bool
	}{{"pass", false}, {"fail", true}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "QUIETLOG_CHILD="+c.mode)
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != (c.mode == "fail") {
			t.Fatalf("%s: child exit %v:\n%s", c.mode, err, out)
		}
		if got := strings.Contains(string(out), "connection refused"); got != c.wantLogs {
			t.Errorf("%s: the log line shown: %v, want %v:\n%s", c.mode, got, c.wantLogs, out)
		}
	}
}
