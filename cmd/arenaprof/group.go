package main

import (
	"strings"

	"github.com/arenaprof/arenaprof/report"
)

// parseGroupBy parses the -by flag with [report.ParseGroupBy], wording its
// errors for the command line.
func parseGroupBy(s string) (report.GroupBy, error) {
	if s == "" { // not given
		return report.GroupBy{Kind: report.GroupByType}, nil
	}
	g, err := report.ParseGroupBy(s)
	if err == nil {
		return g, nil
	}
	if k, ok := strings.CutPrefix(s, "label="); ok && k == "" {
		return g, topUsageErr("-by label= needs a label key, e.g. -by label=handler")
	}
	return g, topUsageErr("unknown -by %q; use type, func, stack, size or label=KEY", s)
}
