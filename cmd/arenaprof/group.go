package main

import (
	"strings"

	"github.com/arenaprof/arenaprof/report"
)

// parseGroupBy checks the -by flag against the spellings of
// [report.GroupBy], wording its errors for the command line.
func parseGroupBy(s string) (report.GroupBy, error) {
	switch s {
	case "": // not given
		return "type", nil
	case "type", "func", "stack", "size":
		return report.GroupBy(s), nil
	}
	k, ok := strings.CutPrefix(s, "label=")
	if !ok {
		return "", topUsageErr("unknown -by %q; use type, func, stack, size or label=KEY", s)
	}
	if k == "" {
		return "", topUsageErr("-by label= needs a label key, e.g. -by label=handler")
	}
	return report.GroupBy(s), nil
}
