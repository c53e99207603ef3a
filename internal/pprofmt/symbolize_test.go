package pprofmt_test

import (
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

func TestCheckSymbolized(t *testing.T) {
	fn := &profile.Function{ID: 1, Name: "main.f"}
	named := &profile.Location{ID: 1, Address: 0x10, Line: []profile.Line{{Function: fn}}}
	raw := &profile.Location{ID: 2, Address: 0x4282d7}
	empty := &profile.Location{ID: 3, Address: 0x20, Line: []profile.Line{{Function: &profile.Function{ID: 2}}}}
	for _, c := range []struct {
		name string
		locs [][]*profile.Location
		bad  string // "" if accepted
	}{
		{"symbolized", [][]*profile.Location{{named}, {named, named}}, ""},
		{"no samples", nil, ""},
		{"no locations", [][]*profile.Location{{}}, ""},
		{"raw leaf", [][]*profile.Location{{raw, named}, {named}}, "1 of 2 samples have unsymbolized frames (address 0x4282d7"},
		{"raw caller", [][]*profile.Location{{named, raw}}, "1 of 1 samples"},
		{"nameless function", [][]*profile.Location{{empty}}, "address 0x20"},
	} {
		p := &profile.Profile{}
		for _, l := range c.locs {
			p.Sample = append(p.Sample, &profile.Sample{Location: l})
		}
		err := pprofmt.CheckSymbolized(p)
		switch {
		case c.bad == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad) || !strings.Contains(err.Error(), pprofmt.SymbolizeHint)):
			t.Errorf("%s: error %v, want one with %q and the hint", c.name, err, c.bad)
		}
	}
	if pprofmt.CheckSymbolized(nil) != nil {
		t.Error("nil profile refused")
	}
}
