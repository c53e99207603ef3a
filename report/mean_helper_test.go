package report_test

import (
	"testing"

	"github.com/arenaprof/arenaprof/internal/testkit/meantest"
)

// setMeanBytes sets the sampling mean for the rest of tb (meantest.Set).
func setMeanBytes(tb testing.TB, n int64) { tb.Helper(); meantest.Set(tb, n) }
