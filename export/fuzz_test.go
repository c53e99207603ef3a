package export

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/arenaprof/arenaprof/profiler"
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

// FuzzParseRows checks that the rows parameter accepts exactly the
// positive decimal integers up to maxDebugRows.
func FuzzParseRows(f *testing.F) {
	for _, s := range []string{"1", "50", "0", "-1", "10000", "10001", "", "abc", "1.5", "+5", "007", " 5", "9223372036854775808", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseRows(s)
		v, perr := strconv.ParseInt(s, 10, 64)
		valid := perr == nil && v > 0 && v <= maxDebugRows
		if (err == nil) != valid {
			t.Fatalf("parseRows(%q) = %d, %v", s, n, err)
		}
		if err == nil && int64(n) != v {
			t.Fatalf("parseRows(%q) = %d", s, n)
		}
		if err != nil && err.Error() == "" {
			t.Fatal("empty error message")
		}
	})
}

// FuzzHandlerQuery checks that any query gets a well-formed answer: 200,
// 400 with X-Go-Pprof, or 429 with Retry-After, and never a panic or a long
// wait (seconds is bounded to 1 here, and the client is gone at once).
func FuzzHandlerQuery(f *testing.F) {
	for _, q := range []string{"", "seconds=1", "debug=1", "seconds=1&debug=1", "seconds=2", "seconds=x", "debug=3", "%zz", "seconds=1&seconds=2",
		"debug=1&rows=1", "debug=1&rows=10001", "debug=1&rows=x", "rows=3", "debug=0&rows=3", "seconds=1&debug=1&rows=2"} {
		f.Add(q)
	}
	p, err := profiler.Start()
	if err != nil {
		f.Fatal(err)
	}
	defer p.Stop()
	h := Handler(p, WithMaxSeconds(1), WithMaxDeltas(1))
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	f.Fuzz(func(t *testing.T, q string) {
		req := httptest.NewRequest("GET", "/x", nil).WithContext(gone)
		req.URL.RawQuery = q
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
		case http.StatusBadRequest:
			if rec.Header().Get("X-Go-Pprof") != "1" {
				t.Fatalf("%q: 400 without X-Go-Pprof", q)
			}
		case http.StatusTooManyRequests:
			if rec.Header().Get("Retry-After") == "" {
				t.Fatalf("%q: 429 without Retry-After", q)
			}
		default:
			t.Fatalf("%q: status %d: %s", q, rec.Code, rec.Body)
		}
	})
}
