package tabfmt

import (
	"math"
	"testing"
	"unicode/utf8"
)

func TestHumanUnits(t *testing.T) {
	bytesTests := []struct {
		in   float64
		want string
	}{
		{0, "0B"}, {1, "1B"}, {999, "999B"}, {999.6, "0.98KiB"}, {1023, "1.00KiB"},
		{1024, "1.00KiB"}, {1536, "1.50KiB"}, {10 * 1024, "10.0KiB"}, {99.96 * 1024, "100KiB"},
		{1.25 * (1 << 20), "1.25MiB"}, {999 * (1 << 20), "999MiB"}, {1 << 30, "1.00GiB"},
		{math.Exp2(62), "4.00EiB"}, {math.Exp2(72), "4096EiB"}, {math.NaN(), "?"}, {-1, "?"},
	}
	for _, tt := range bytesTests {
		if got := Bytes(tt.in); got != tt.want {
			t.Errorf("Bytes(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
	countTests := []struct {
		in   float64
		want string
	}{
		{0, "0"}, {999, "999"}, {1000, "1.00k"}, {12345, "12.3k"}, {999499, "999k"}, {999500, "1.00M"}, {2.5e9, "2.50G"},
	}
	for _, tt := range countTests {
		if got := Count(tt.in); got != tt.want {
			t.Errorf("Count(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCut(t *testing.T) {
	tests := []struct {
		key         string
		width, tail int
		want        string
	}{
		{"main.f", 10, 0, "main.f"},
		{"github.com/a/b.parse", 0, 0, "github.com/a/b.parse"},
		{"github.com/a/b.parse", 10, 7, "…a/b.parse"}, {"github.com/a/b.parse", 14, 7, "github…b.parse"},
		{"a < b < c < d", 8, 0, "a < …< d"},
		{"héllo wörld", 6, 0, "hél…ld"},
		{"abcdef", 1, 0, "a…f"},
	}
	for _, tt := range tests {
		if got := Cut(tt.key, tt.width, tt.tail); got != tt.want {
			t.Errorf("Cut(%q, %d, %d) = %q, want %q", tt.key, tt.width, tt.tail, got, tt.want)
		}
	}
	// A function name keeps its last package element and function whole.
	if got := CutKey("github.com/arenaprof/arenaprof/internal/deep/pkg.(*T).Method", "func", 30); got != "github.com/are…pkg.(*T).Method" {
		t.Errorf("CutKey = %q", got)
	}
}

func TestShortFuncName(t *testing.T) {
	tests := map[string]string{
		"main.main":                             "main.main",
		"github.com/a/b/pkg.(*T).M":             "pkg.(*T).M",
		"github.com/a/pkg.F[go.shape.*uint8]":   "pkg.F[go.shape.*uint8]",
		"github.com/a/pkg.G[github.com/x/y.T]":  "pkg.G[github.com/x/y.T]",
		"net/http.HandlerFunc.ServeHTTP":        "http.HandlerFunc.ServeHTTP",
		"0x4a3f00":                              "0x4a3f00",
		"github.com/a/pkg.init.func1.gowrap2":   "pkg.init.func1.gowrap2",
		"gopkg.in/yaml.v3.(*decoder).unmarshal": "yaml.v3.(*decoder).unmarshal",
	}
	for in, want := range tests {
		if got := ShortFuncName(in); got != want {
			t.Errorf("ShortFuncName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCutKeepsFunction(t *testing.T) {
	name := "github.com/arenaprof/arenaprof/examples/quickstart.parseRecord"
	for width, want := range map[int]string{
		0:  name,
		80: name,
		30: "github.…quickstart.parseRecord",
		24: "…" + name[len(name)-23:],
	} {
		if got := CutKey(name, "func", width); got != want {
			t.Errorf("CutKey(%d) = %q, want %q", width, got, want)
		}
	}
}

// TestCutKeyKinds: a stack keeps its leaf function whole and loses its
// root side; a site keeps its frame whole, then its leaf.
func TestCutKeyKinds(t *testing.T) {
	stack := "main.quoteAll < main.handle < net/http.HandlerFunc.ServeHTTP < net/http.(*conn).serve"
	site := "github.com/acme/shop/api.(*Server).order via reflect.growslice"
	for _, tc := range []struct {
		key, kind string
		width     int
		want      string
	}{
		{stack, "stack", 0, stack},
		{stack, "stack", 40, "main.quoteAll < main.handle < http.Hand…"},
		{stack, "stack", 16, "main.quoteAll <…"},
		{"github.com/acme/shop/api.quoteAll < main.x", "stack", 30, "api.quoteAll < main.x"},
		{"github.com/acme/shop/api.quoteAll < main.x", "stack", 10, "….quoteAll"},
		{site, "site", 0, site},
		{site, "site", 80, site},
		{site, "site", 45, "api.(*Server).order via reflect.growslice"},
		{site, "site", 40, "api.(*Server).order via …flect.growslice"},
		{site, "site", 30, "api.(*Server).order"},
		{"main.handle", "site", 8, "….handle"},
		{"net/textproto.readMIMEHeader" + StdOnly, "site", 60, "net/textproto.readMIMEHeader" + StdOnly},
		{"net/textproto.readMIMEHeader" + StdOnly, "site", 40, "textproto.readMIMEHeader (std)"},
	} {
		got := CutKey(tc.key, tc.kind, tc.width)
		if got != tc.want {
			t.Errorf("CutKey(%q, %s, %d) = %q, want %q", tc.key, tc.kind, tc.width, got, tc.want)
		}
		if n := utf8.RuneCountInString(got); tc.width > 0 && n > tc.width {
			t.Errorf("CutKey(%q, %s, %d) is %d runes", tc.key, tc.kind, tc.width, n)
		}
	}
}

// FuzzCutKey: keys come from profiles, whatever they hold; a cut key of
// any kind never panics and, at a width of 12 or more (the least room a
// table gives its keys), fits it.
func FuzzCutKey(f *testing.F) {
	f.Add("main.quoteAll < main.handle < net/http.(*conn).serve", "stack", 16)
	f.Add("github.com/acme/shop/api.(*Server).order via reflect.growslice", "site", 30)
	f.Add("net/textproto.readMIMEHeader"+StdOnly, "site", 12)
	f.Add("github.com/x/y.F", "func", 5)
	f.Fuzz(func(t *testing.T, key, kind string, width int) {
		width %= 300
		got := CutKey(key, kind, width)
		if width >= 12 && utf8.RuneCountInString(got) > width {
			t.Errorf("CutKey(%q, %q, %d) = %q: %d runes", key, kind, width, got, utf8.RuneCountInString(got))
		}
	})
}
