package pyroread

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/rss"
)

// TestRSSSiteOf reads the class and the site's leaf function of merged
// resident-memory stacks: class frames at the root, the site below.
func TestRSSSiteOf(t *testing.T) {
	loc := func(names ...string) []*profile.Location {
		var out []*profile.Location
		for _, n := range names {
			out = append(out, &profile.Location{Line: []profile.Line{{Function: &profile.Function{Name: n}}}})
		}
		return out
	}
	tests := []struct {
		stack      []*profile.Location // leaf first
		class, key string
	}{
		{loc("main.alloc", "main.main", "go/heap/live", "go/heap", "go"), "go/heap/live", "main.alloc"},
		{loc("binary"), "binary", ""},
		{loc("go/stacks", "go"), "go/stacks", ""},
		{loc("main.(*server).withArena.func1", "arena/free", "arena"), "arena/free", "main.(*server).withArena.func1"},
		{loc("main.f", "main.g"), "", ""},
		{loc("go/heap", "go"), "", ""},
		{append(loc("main.f"), &profile.Location{}), "", ""},
	}
	for _, tt := range tests {
		class, key := rssSiteOf(tt.stack)
		if class != tt.class || key != tt.key {
			t.Errorf("%v: class %q, key %q; want %q, %q", tt.stack, class, key, tt.class, tt.key)
		}
	}
}

// FuzzAddRSSPoints feeds arbitrary SelectSeries answers to the reader of
// resident-memory points: it never panics, and what it keeps is whole
// non-negative bytes of arenaprof's classes, in the range.
func FuzzAddRSSPoints(f *testing.F) {
	f.Add(`{"series":[{"labels":[{"name":"class","value":"binary"},{"name":"pod","value":"a"}],"points":[{"value":8417280,"timestamp":"1795762228231"}]}]}`)
	f.Add(`{"series":[{"labels":[{"name":"class","value":"go/heap/live"},{"name":"smaps","value":"unread"}],"points":[{"value":1.5,"timestamp":"5"},{"value":-1,"timestamp":"6"}]}]}`)
	f.Add(`{"series":[{"labels":[{"name":"class","value":"x"}],"points":[{"value":1,"timestamp":"7"}]}]}`)
	f.Add(`{}`)
	f.Fuzz(func(t *testing.T, answer string) {
		snaps := map[string]*RSSSnapshot{}
		if err := addRSSPoints(strings.NewReader(answer), "t", 3, snaps); err != nil {
			return
		}
		for _, s := range snaps {
			if s.Time.UnixMilli() <= 3 {
				t.Errorf("a snapshot at %v, before the range", s.Time)
			}
			for c, v := range s.Classes {
				if v <= 0 || !slices.Contains(rss.Classes[:], c) {
					t.Errorf("class %q of %d bytes kept", c, v)
				}
			}
		}
	})
}

// TestIsRSSType: the profile types the agent's resident-memory uploads
// are stored under, of this release and earlier ones, pprof and OTLP, and
// none of the others.
func TestIsRSSType(t *testing.T) {
	for _, c := range []struct {
		id   string
		want bool
	}{
		{"resident:resident:bytes:space:bytes", true},
		{"resident:resident:bytes:resident:bytes", true},
		{"heap_samples:resident:bytes:space:bytes", true},
		{"space:resident:bytes:space:bytes", true},
		{"resident:heap_samples:count:space:bytes", false},
		{"memory:inuse_space:bytes:space:bytes", false},
		{"resident:resident:bytes", false},
		{"", false},
	} {
		if got := isRSSType(c.id); got != c.want {
			t.Errorf("isRSSType(%q) = %v, want %v", c.id, got, c.want)
		}
	}
}
