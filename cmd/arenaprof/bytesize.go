package main

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"
)

// parseByteSize reads the size -max-bytes and -max-memory take: a positive
// number of bytes, whole or decimal ("1.5GiB"), optionally followed by a
// unit in any case, with or without a space. The rule is go-humanize's
// ParseBytes (SI and IEC): a unit with an i is a power of 1024 (Ki, KiB,
// Mi, MiB, Gi, GiB, Ti, TiB, ...), one without is a power of 1000 (k, kB,
// M, MB, G, GB, T, TB, ...), so "m" and "MB" are both 10^6 and "Mi" and
// "MiB" both 2^20; B, byte and bytes are bytes. A fraction of a byte is
// dropped (1.5KiB is 1536 bytes, 0.1KiB 102); thousands may be grouped
// with commas, three digits a group (1,000,000), and any other comma is
// refused, so that "1,5GiB" is not read as 15 GiB.
//
// go-humanize does the parsing (exactly for whole numbers up to 2^64,
// decimals through float64); this function adds what it leaves to its
// callers: the spaces around, "byte" and "bytes", the commas' grouping and
// the range of an int64.
//
// The ranges of -tagfocus and -tagignore (bytes=1kb:) are not read here:
// they follow go tool pprof, where kb is 1024 bytes, so that a filter
// copied from pprof keeps the samples it kept there.
func parseByteSize(s string) (int64, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, word := range []string{"bytes", "byte"} {
		if rest, ok := strings.CutSuffix(s, word); ok {
			s = rest + "b"
			break
		}
	}
	if num := leadingNumber(s); strings.Contains(num, ",") && !groupedNumber.MatchString(num) {
		return 0, false
	}
	n, err := humanize.ParseBytes(s)
	if err != nil || n < 1 || n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

// groupedNumber is a number whose commas group its whole part in threes.
var groupedNumber = regexp.MustCompile(`^[0-9]{1,3}(,[0-9]{3})+(\.[0-9]*)?$`)

// leadingNumber returns the digits, points and commas s starts with: the
// number humanize.ParseBytes reads.
func leadingNumber(s string) string {
	end := strings.IndexFunc(s, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.' || r == ',') })
	if end < 0 {
		return s
	}
	return s[:end]
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
