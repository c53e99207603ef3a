package arenaprof_test

import (
	"os"
	"testing"

	"github.com/arenaprof/arenaprof/internal/testkit/quietlog"
)

// TestMain holds back the agents' log lines (a Start without a Logger warns
// through slog.Default) unless a test fails.
func TestMain(m *testing.M) { os.Exit(quietlog.Run(m)) }
