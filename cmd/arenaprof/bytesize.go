package main

import (
	"math"
	"strconv"
	"strings"
)

// byteUnits are the suffixes -max-bytes and -max-memory accept, longest
// first so that "MiB" is tried before "B".
var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"bytes", 1}, {"b", 1},
}

// parseByteSize reads a positive size in bytes: a whole number, optionally
// followed by a unit: KiB, MiB, GiB, TiB (or K, M, G, T), kB, MB, GB, TB,
// B or bytes, in any case.
func parseByteSize(s string) (int64, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range byteUnits {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > math.MaxInt64/mult {
		return 0, false
	}
	return n * mult, true
}

// formatByteSize writes n as parseByteSize reads it, in the largest binary
// unit that divides it.
func formatByteSize(n int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.mult && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
