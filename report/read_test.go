package report

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"
)

// gzipped returns data compressed with gzip.
func gzipped(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	zw.Close()
	return buf.Bytes()
}

func TestParseBounds(t *testing.T) {
	var prof bytes.Buffer
	if err := tblFixture(t).Write(&prof); err != nil { // gzipped
		t.Fatal(err)
	}
	var raw bytes.Buffer
	if err := tblFixture(t).WriteUncompressed(&raw); err != nil {
		t.Fatal(err)
	}
	bomb := gzipped(t, make([]byte, 8<<20)) // 8 MiB of zeros in ~8 KiB
	for _, tc := range []struct {
		name  string
		data  []byte
		limit int64
		want  string // "" for success
	}{
		{"gzipped", prof.Bytes(), 0, ""},
		{"uncompressed", raw.Bytes(), 0, ""},
		{"bomb", bomb, 1 << 20, "larger than the size limit"},
		{"compressed too large", prof.Bytes(), int64(prof.Len() - 1), "larger than the size limit"},
		{"uncompressed too large", raw.Bytes(), int64(raw.Len() - 1), "larger than the size limit"},
		{"exactly at the limit", raw.Bytes(), int64(raw.Len()), ""},
		{"empty", nil, 0, "empty"},
		{"spaces", []byte("  \n"), 0, "empty"},
		{"text", []byte("hello, world"), 0, "not a pprof profile"},
		{"bad gzip", []byte{0x1f, 0x8b, 1, 2, 3}, 0, "gzip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(bytes.NewReader(tc.data), tc.limit)
			if tc.want == "" {
				if err != nil || p == nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse: error %v, want %q", err, tc.want)
			}
			if strings.Contains(tc.want, "size limit") && !errors.Is(err, ErrTooLarge) {
				t.Errorf("error %v is not ErrTooLarge", err)
			}
		})
	}
}

// FuzzParse checks that Parse never panics and never returns a profile
// from data that decompresses to more than its bound.
func FuzzParse(f *testing.F) {
	var prof bytes.Buffer
	if err := tblFixture(f).Write(&prof); err != nil {
		f.Fatal(err)
	}
	f.Add(prof.Bytes(), int64(0))
	f.Add(gzipped(f, make([]byte, 4096)), int64(100))
	f.Add([]byte("x"), int64(1))
	f.Fuzz(func(t *testing.T, data []byte, limit int64) {
		if limit > 1<<20 || limit <= 0 {
			limit = 1 << 20
		}
		p, err := Parse(bytes.NewReader(data), limit)
		if err == nil && p == nil {
			t.Fatal("nil profile without an error")
		}
		if err != nil && err.Error() == "" {
			t.Fatal("empty error")
		}
	})
}
