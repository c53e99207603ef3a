package pyroread

import (
	"strings"
	"testing"
)

func TestParseSelector(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{`{service_name="shop"}`, `{service_name="shop"}`, ""},
		{` { service_name = "shop" , env=~"prod|staging",x!="a\"b", y !~ ` + "`a.*`" + ` } `, `{service_name="shop",env=~"prod|staging",x!="a\"b",y!~"a.*"}`, ""},
		{`{a.b="1",_c="2"}`, `{a.b="1",_c="2"}`, ""},
		{`{service_name="shop",}`, `{service_name="shop"}`, ""},
		{`{}`, "", "empty label selector"},
		{`service_name="shop"`, "", "braces"},
		{`{1a="x"}`, "", "label name"},
		{`{a=x}`, "", "quoted value"},
		{`{a='x'}`, "", "quoted value"},
		{`{a=="x"}`, "", "quoted value"},
		{`{a="x" b="y"}`, "", "expected , or }"},
		{`{a=~"("}`, "", "regular expression"},
		{`{a="x}`, "", "quoted value"},
		{`{a<"x"}`, "", "expected ="},
		{"{a=\"" + strings.Repeat("x", maxSelector) + "\"}", "", "longer than"},
	}
	for _, tt := range tests {
		sel, err := ParseSelector(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseSelector(%q) = %v, %v; want an error with %q", tt.in, sel, err, tt.err)
			}
			continue
		}
		if err != nil || sel.String() != tt.want {
			t.Errorf("ParseSelector(%q) = %s, %v; want %s", tt.in, sel, err, tt.want)
		}
	}
}

// FuzzParseSelector: whatever parses prints as a selector that parses to
// the same matchers.
func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{`{service_name="shop"}`, `{a=~"x|y",b!~"z",c!="\u00fc"}`, "{a=`x`}", `{`, `{a="\xff"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := ParseSelector(s)
		if err != nil {
			return
		}
		again, err := ParseSelector(sel.String())
		if err != nil {
			t.Fatalf("%q parsed to %s, which does not parse: %v", s, sel, err)
		}
		if again.String() != sel.String() || len(again) != len(sel) {
			t.Fatalf("%q: %s then %s", s, sel, again)
		}
	})
}
