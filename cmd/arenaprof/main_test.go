package main

import (
	"strings"
	"testing"
)

func TestRunDispatch(t *testing.T) {
	for _, c := range []struct {
		args     []string
		code     int
		inStderr string
	}{
		{nil, 2, "usage: arenaprof"},
		{[]string{"-h"}, 0, "top"},
		{[]string{"frobnicate"}, 2, "unknown command"},
	} {
		code, _, errOut := runCLI(c.args...)
		if code != c.code || !strings.Contains(errOut, c.inStderr) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errOut, c.code, c.inStderr)
		}
	}
}
