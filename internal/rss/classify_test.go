package rss

import (
	"errors"
	"strings"
	"testing"

	"github.com/arenaprof/arenaprof/internal/holdings"
)

// TestClassifyArenaHeap checks how the arenas' heap bytes are taken out of
// the heap objects (the Go classes alone, as without smaps): out of the
// objects live at the last GC first, the rest out of the dead ones; where
// the arenas hold more than was live, go/heap/live is 0 and a note says
// by how much it may be short. Each class sums with the others to the
// objects.
func TestClassifyArenaHeap(t *testing.T) {
	const mib = 1 << 20
	// fresh is the part of the arenas' heap bytes made since the GC the
	// registry counts from; lag says the registry's count is one behind
	// the runtime's (its fresh part then says nothing of the last GC).
	cases := []struct {
		name                     string
		objects, live, arenaHeap int64
		fresh                    int64
		lag                      bool
		wantLive, wantDead       int64
		note                     bool
	}{
		{"no arenas", 10 * mib, 6 * mib, 0, 0, false, 6 * mib, 4 * mib, false},
		{"arenas within the live", 10 * mib, 6 * mib, 2 * mib, 0, false, 4 * mib, 4 * mib, false},
		{"arenas equal to the live", 10 * mib, 6 * mib, 6 * mib, 0, false, 0, 4 * mib, false},
		{"arenas made since the last GC", 10 * mib, 3 * mib, 5 * mib, 5 * mib, false, 3 * mib, 2 * mib, false},
		{"arenas made before and since", 10 * mib, 6 * mib, 5 * mib, 2 * mib, false, 3 * mib, 2 * mib, false},
		{"fresh counted at a lagging cycle", 10 * mib, 6 * mib, 5 * mib, 2 * mib, true, 1 * mib, 4 * mib, false},
		{"arenas since the last GC, not known", 10 * mib, 3 * mib, 5 * mib, 0, false, 0, 5 * mib, true},
		{"arenas since the last GC, lagging", 10 * mib, 3 * mib, 5 * mib, 5 * mib, true, 0, 5 * mib, true},
		{"fresh past the dead", 10 * mib, 8 * mib, 4 * mib, 4 * mib, false, 6 * mib, 0, false},
		{"fresh past the heap bytes", 10 * mib, 3 * mib, 5 * mib, 7 * mib, false, 3 * mib, 2 * mib, false},
		{"arenas past all objects", 4 * mib, 1 * mib, 5 * mib, 0, false, 0, 0, true},
		{"fresh arenas past all objects", 4 * mib, 1 * mib, 5 * mib, 5 * mib, false, 0, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Reading{SmapsErr: errors.New("no smaps here"), Consistent: true, Cycle: 7}
			r.metric[mObjects], r.metric[mLive] = uint64(c.objects), uint64(c.live)
			if c.arenaHeap > 0 {
				cycle := r.Cycle
				if c.lag {
					cycle--
				}
				// Two arenas, the fresh bytes in the second.
				old := c.arenaHeap - min(c.fresh, c.arenaHeap)
				r.Holdings = []holdings.Holding{
					{Reserved: old, Heap: old, Used: old / 2, Cycle: cycle},
					{Reserved: c.arenaHeap - old, Heap: c.arenaHeap - old, Fresh: c.fresh, Used: (c.arenaHeap - old) / 2, Cycle: cycle},
				}
			}
			b := Classify(r)
			arena := b.Bytes[iArenaUsed] + b.Bytes[iArenaFree]
			if b.Bytes[iLive] != c.wantLive || b.Bytes[iDead] != c.wantDead {
				t.Errorf("live %d, dead %d; want %d, %d", b.Bytes[iLive], b.Bytes[iDead], c.wantLive, c.wantDead)
			}
			if sum := b.Bytes[iLive] + b.Bytes[iDead] + arena; sum != c.objects {
				t.Errorf("live + dead + arena = %d, the objects %d", sum, c.objects)
			}
			noted := strings.Contains(strings.Join(b.Notes, "\n"), "go/heap/live shows 0 and may be short")
			if noted != c.note {
				t.Errorf("note said: %v, want %v; notes %q", noted, c.note, b.Notes)
			}
			cut := strings.Contains(strings.Join(b.Notes, "\n"), "heap objects runtime/metrics counts")
			if want := c.arenaHeap > c.objects; cut != want {
				t.Errorf("note of arenas past the objects said: %v, want %v; notes %q", cut, want, b.Notes)
			}
		})
	}
}
