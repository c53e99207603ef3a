package agent

import (
	"os"
	"testing"

	"github.com/arenaprof/arenaprof/internal/testkit/quietlog"
)

// TestMain holds back the agents' log lines (agents without a Logger warn
// through slog.Default) unless a test fails.
func TestMain(m *testing.M) { os.Exit(quietlog.Run(m)) }
