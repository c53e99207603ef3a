package pyroread

import (
	"testing"

	"github.com/google/pprof/profile"
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
