package agent

import (
	"testing"

	"github.com/arenaprof/arenaprof/hooks"
)

// setMeanBytes sets the process-wide sampling mean for the rest of tb and
// restores the previous one when tb ends. Tests that call it must not run in
// parallel with other tests that sample.
func setMeanBytes(tb testing.TB, n int64) {
	tb.Helper()
	prev := hooks.MeanBytes()
	if err := hooks.SetMeanBytes(n); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { hooks.SetMeanBytes(prev) })
}
