package export

import (
	"strconv"
	"testing"
)

// FuzzParseSeconds checks that the seconds parameter accepts exactly the
// positive decimal integers up to the bound.
func FuzzParseSeconds(f *testing.F) {
	for _, s := range []string{"1", "0", "-1", "3600", "3601", "", "abc", "1.5", "+5", "007", " 5", "9223372036854775808", "1e3"} {
		f.Add(s, int64(3600))
	}
	f.Fuzz(func(t *testing.T, s string, max int64) {
		n, err := parseSeconds(s, max)
		v, perr := strconv.ParseInt(s, 10, 64)
		valid := perr == nil && v > 0 && v <= max
		if (err == nil) != valid {
			t.Fatalf("parseSeconds(%q, %d) = %d, %v", s, max, n, err)
		}
		if err == nil && n != v {
			t.Fatalf("parseSeconds(%q) = %d", s, n)
		}
		if err != nil && err.Error() == "" {
			t.Fatal("empty error message")
		}
	})
}
