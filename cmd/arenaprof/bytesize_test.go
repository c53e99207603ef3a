package main

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestParseByteSize covers the sizes -max-bytes and -max-memory take: an
// i makes a unit binary, its absence decimal, with or without B and in any
// case; decimals; commas in groups of three; bytes; and the refusals.
func TestParseByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64 // 0: refused
	}{
		// whole numbers and bytes
		{"1048576", 1 << 20}, {"10b", 10}, {"10 B", 10}, {"1 byte", 1}, {"4096 bytes", 4096}, {" 7 ", 7},
		// binary: with an i
		{"384MiB", 384 << 20}, {"2 GiB", 2 << 30}, {"2gib", 2 << 30}, {"2Gi", 2 << 30}, {"1KiB", 1024}, {"1ki", 1024},
		{"3TiB", 3 << 40}, {"1.5GiB", 3 << 29}, {"1.5 GiB", 3 << 29}, {"0.5MiB", 1 << 19}, {"0.1KiB", 102},
		// decimal: without an i, with or without B
		{"500MB", 500e6}, {"500mb", 500e6}, {"500M", 500e6}, {"500m", 500e6}, {"1g", 1e9}, {"1GB", 1e9},
		{"2k", 2000}, {"2kB", 2000}, {"2KB", 2000}, {"1.5GB", 1.5e9}, {"1.5 gb", 1.5e9}, {"2T", 2e12}, {".5k", 500},
		// commas group thousands, three digits a group
		{"1,000,000", 1e6}, {"1,048,576 bytes", 1 << 20}, {"1,500.5MB", 1500.5e6},
		// refused
		{"1,5GiB", 0}, {"1,00", 0}, {"10,00,000", 0}, {",1", 0}, {"1,", 0},
		{"0", 0}, {"0.4", 0}, {"0.1b", 0}, {"-1", 0}, {"+1", 0}, {"lots", 0}, {"", 0}, {"GiB", 0}, {"bytes", 0},
		{"1e3", 0}, {"1x", 0}, {"1 2", 0}, {"1.5.3k", 0}, {"NaN", 0}, {"Inf", 0}, {"1_000", 0}, {"٣", 0},
		// the range of an int64
		{"9223372036854775807", math.MaxInt64}, {"9223372036854775808", 0}, {"7EiB", 7 << 60}, {"8EiB", 0},
		{"9999999999TiB", 0}, {"99999999999999999999", 0},
	} {
		got, ok := parseByteSize(tc.in)
		if got != tc.want || ok != (tc.want > 0) {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.want > 0)
		}
	}
}

// TestFormatByteSize: the largest binary unit that divides the size, or
// bytes, and what it writes reads back.
func TestFormatByteSize(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{1, "1 bytes"}, {1000, "1000 bytes"}, {1024, "1KiB"}, {1536, "1536 bytes"}, {512 << 20, "512MiB"},
		{1 << 30, "1GiB"}, {3 << 40, "3TiB"}, {1 << 50, "1024TiB"}, {math.MaxInt64, "9223372036854775807 bytes"},
	} {
		got := formatByteSize(tc.n)
		if got != tc.want {
			t.Errorf("formatByteSize(%d) = %q, want %q", tc.n, got, tc.want)
		}
		if back, ok := parseByteSize(got); !ok || back != tc.n {
			t.Errorf("parseByteSize(formatByteSize(%d) = %q) = %d, %v", tc.n, got, back, ok)
		}
	}
}

// FuzzParseByteSize: whatever the input, parseByteSize does not panic and
// gives a size in [1, MaxInt64] or refuses; the case and a B after a unit
// change nothing; a size it gives writes (formatByteSize) and reads back;
// a plain decimal integer reads as strconv reads it.
func FuzzParseByteSize(f *testing.F) {
	for _, s := range []string{"1048576", "1.5GiB", "500 MB", "2k", "1,000,000", "1,5GiB", "10 bytes", "0.1KiB", "8EiB", "-1", "", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := parseByteSize(s)
		if !ok {
			if n != 0 {
				t.Fatalf("parseByteSize(%q) refused with %d", s, n)
			}
		} else if n < 1 {
			t.Fatalf("parseByteSize(%q) = %d", s, n)
		}
		if up, upOK := parseByteSize(strings.ToUpper(s)); isASCII(s) && (up != n || upOK != ok) {
			t.Fatalf("parseByteSize(%q) = %d, %v but in upper case %d, %v", s, n, ok, up, upOK)
		}
		if trimmed := strings.TrimSpace(s); trimmed != "" && strings.ContainsRune("kKmMgGtTpPeEiI", rune(trimmed[len(trimmed)-1])) {
			if withB, bOK := parseByteSize(trimmed + "B"); withB != n || bOK != ok {
				t.Fatalf("parseByteSize(%q) = %d, %v but with B %d, %v", s, n, ok, withB, bOK)
			}
		}
		if ok {
			if back, backOK := parseByteSize(formatByteSize(n)); !backOK || back != n {
				t.Fatalf("formatByteSize(%d) = %q reads back as %d, %v", n, formatByteSize(n), back, backOK)
			}
		}
		if v, err := strconv.ParseInt(s, 10, 64); err == nil && s[0] != '+' && s[0] != '-' && v >= 1 && (!ok || n != v) {
			t.Fatalf("parseByteSize(%q) = %d, %v; strconv %d", s, n, ok, v)
		}
	})
}

// isASCII reports whether s is ASCII only: strings.ToUpper keeps its
// length and changes letters alone.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
