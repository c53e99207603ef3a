package report

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/arenaprof/arenaprof/internal/testkit/fixture"
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
		if got := sizeClass(tc.size); got != tc.want {
			t.Errorf("sizeClass(%d) = %q, want %q", tc.size, got, tc.want)
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
		c := sizeClass(size)
		lo, hi, ok := strings.Cut(strings.TrimSuffix(c, " B"), "-")
		l, err1 := strconv.ParseInt(lo, 10, 64)
		h, err2 := strconv.ParseInt(hi, 10, 64)
		if !ok || err1 != nil || err2 != nil || size < l || size > h {
			t.Fatalf("size %d in class %q", size, c)
		}
	})
}

func TestTableBySizeAndLabels(t *testing.T) {
	p := fixture.Arena(t)
	res, err := Table(p, TableOptions{By: "size"})
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, r := range res.Rows {
		if !strings.HasSuffix(r.Key, " B") {
			t.Errorf("size class key %q", r.Key)
		}
		sum += r.Bytes
	}
	if sum != res.Total.Bytes {
		t.Errorf("size classes sum to %d, total %d", sum, res.Total.Bytes)
	}
	var buf bytes.Buffer
	if err := FormatTable(&buf, res, FormatOptions{}); err != nil || !strings.Contains(buf.String(), "OBJECT SIZE") {
		t.Errorf("format: %v\n%s", err, buf.String())
	}
	for _, tc := range []struct{ label, want string }{
		{"nosuch", `no sample carries the label "nosuch"; the profile's string labels are handler, type`},
		{"bytes", "numeric label"},
		{"sampling_mean", "numeric label"},
	} {
		_, err := Table(p, TableOptions{By: "label=" + tc.label})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("label %q: error %v, want %q", tc.label, err, tc.want)
		}
	}
	if _, err := Table(p, TableOptions{By: "label=" + "handler"}); err != nil {
		t.Errorf("a label some samples carry: %v", err)
	}
}

func TestFormatFullKeys(t *testing.T) {
	res, err := Table(fixture.Arena(t), TableOptions{By: "stack"})
	if err != nil {
		t.Fatal(err)
	}
	var short, full bytes.Buffer
	if err := FormatTable(&short, res, FormatOptions{Width: 60}); err != nil {
		t.Fatal(err)
	}
	if err := FormatTable(&full, res, FormatOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(short.String(), "…") || strings.Contains(full.String(), "…") {
		t.Errorf("short:\n%s\nfull:\n%s", short.String(), full.String())
	}
	for _, r := range res.Rows {
		if !strings.Contains(full.String(), r.Key) {
			t.Errorf("full table lacks %q", r.Key)
		}
	}
}

// TestSiteKey: a site is the first frame outside the standard library
// (main's or a module's), then the leaf that allocated.
func TestSiteKey(t *testing.T) {
	for _, tc := range []struct {
		frames []string
		want   string
	}{
		{nil, noneKey},
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
		if got := siteKey(tc.frames); got != tc.want {
			t.Errorf("siteKey(%q) = %q, want %q", tc.frames, got, tc.want)
		}
	}
}
