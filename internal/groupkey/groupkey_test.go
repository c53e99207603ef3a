package groupkey

import (
	"strconv"
	"strings"
	"testing"
)

func TestSizeClass(t *testing.T) {
	for _, tc := range []struct {
		size int64
		want string
	}{
		{1, "1-8 B"}, {8, "1-8 B"}, {9, "9-16 B"}, {16, "9-16 B"}, {17, "17-32 B"},
		{24, "17-32 B"}, {4096, "2049-4096 B"}, {4097, "4097-8192 B"}, {1 << 40, "549755813889-1099511627776 B"},
		{1<<62 + 1, "4611686018427387905-9223372036854775807 B"},
	} {
		if got := SizeClass(tc.size); got != tc.want {
			t.Errorf("SizeClass(%d) = %q, want %q", tc.size, got, tc.want)
		}
	}
}

// FuzzSizeClass checks that every size falls inside its class's bounds.
func FuzzSizeClass(f *testing.F) {
	for _, n := range []int64{1, 8, 9, 1000, 1 << 40, 1<<63 - 1} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, size int64) {
		if size < 1 {
			return
		}
		c := SizeClass(size)
		lo, hi, ok := strings.Cut(strings.TrimSuffix(c, " B"), "-")
		l, err1 := strconv.ParseInt(lo, 10, 64)
		h, err2 := strconv.ParseInt(hi, 10, 64)
		if !ok || err1 != nil || err2 != nil || size < l || size > h {
			t.Fatalf("size %d in class %q", size, c)
		}
	})
}

// TestSiteKey: a site is the first frame outside the standard library
// (main's or a module's), then the leaf that allocated.
func TestSiteKey(t *testing.T) {
	for _, tc := range []struct {
		frames []string
		want   string
	}{
		{nil, None},
		{[]string{"main.handle", "net/http.HandlerFunc.ServeHTTP"}, "main.handle"},
		{[]string{"reflect.growslice", "reflect.Value.grow", "encoding/json.(*decodeState).array", "encoding/json.(*Decoder).Decode", "main.handleOrder", "net/http.(*conn).serve"},
			"main.handleOrder via reflect.growslice"},
		{[]string{"runtime.makeslice", "github.com/acme/shop/api.(*Server).order", "main.main"},
			"github.com/acme/shop/api.(*Server).order via runtime.makeslice"},
		{[]string{"encoding/json.Marshal", "gopkg.in/yaml.v3.(*encoder).marshal"}, "gopkg.in/yaml.v3.(*encoder).marshal via encoding/json.Marshal"},
		{[]string{"slices.Grow[go.shape.[]uint8,go.shape.uint8]", "main.f"}, "main.f via slices.Grow[go.shape.[]uint8,go.shape.uint8]"},
		{[]string{"net/textproto.readMIMEHeader", "net/http.readRequest", "net/http.(*conn).serve"}, "net/textproto.readMIMEHeader (standard library only)"},
		{[]string{"vendor/golang.org/x/net/http2/hpack.(*Decoder).readString", "net/http.(*http2Framer).readMetaFrame"}, "vendor/golang.org/x/net/http2/hpack.(*Decoder).readString (standard library only)"},
		{[]string{"internal/strconv.FormatInt", "0x4a5b6c"}, "0x4a5b6c via internal/strconv.FormatInt"},
	} {
		if got := Site(tc.frames); got != tc.want {
			t.Errorf("Site(%q) = %q, want %q", tc.frames, got, tc.want)
		}
	}
}
