// Package meantest sets the process-wide sampling mean for the length of a
// test, for the tests of every package.
package meantest

import (
	"testing"

	"github.com/arenaprof/arenaprof/hooks"
)

// Set sets the process-wide sampling mean (hooks.SetMeanBytes) for the rest
// of tb and restores the previous one when tb ends. Tests that call it must
// not run in parallel with other tests that sample.
func Set(tb testing.TB, n int64) {
	tb.Helper()
	prev := hooks.MeanBytes()
	if err := hooks.SetMeanBytes(n); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { hooks.SetMeanBytes(prev) })
}
