package main

import "strings"

// parseGroupBy checks the -by flag against the spellings of
// report.TableOptions.By, wording its errors for the command line.
func parseGroupBy(s string) (string, error) {
	switch s {
	case "": // not given
		return "type", nil
	case "type", "func", "stack", "size":
		return s, nil
	}
	k, ok := strings.CutPrefix(s, "label=")
	if !ok {
		return "", topUsageErr("unknown -by %q; use type, func, stack, size or label=KEY", s)
	}
	if k == "" {
		return "", topUsageErr("-by label= needs a label key, e.g. -by label=handler")
	}
	return s, nil
}

// groupKind splits g into what it groups by ("type", "func", "stack",
// "size" or "label") and, for a label, the label's key.
func groupKind(g string) (kind, label string) {
	if k, ok := strings.CutPrefix(g, "label="); ok {
		return "label", k
	}
	if g == "" {
		return "type", ""
	}
	return g, ""
}

// groupKindOnly is what g groups by, without a label's key.
func groupKindOnly(g string) string {
	k, _ := groupKind(g)
	return k
}
