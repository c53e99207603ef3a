package arenajson

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/arenaprof/arenaprof/arena"
)

// TestAllocs counts the heap allocations of one decode of each corpus into
// its Go type, into an arena reset between decodes, and requires none on
// the corpora whose types hold no map (canada, golang_source, the two
// string corpora), and fewer than half of encoding/json's on the others. Values are compared with encoding/json's on every run.
func TestAllocs(t *testing.T) {
	zeroHeap := map[string]bool{"canada_geometry": true, "golang_source": true, "string_escaped": true, "string_unicode": true}
	for _, c := range corpora {
		t.Run(c.name, func(t *testing.T) {
			data := c.data()
			want := c.new()
			if err := json.Unmarshal(data, want); err != nil {
				t.Fatal(err)
			}
			v := c.new()
			a := arena.NewArena()
			defer a.Free()
			run := func() {
				a.Reset()
				reflect.ValueOf(v).Elem().SetZero()
				if err := Unmarshal(a, data, v); err != nil {
					t.Fatal(err)
				}
			}
			// The median of 9 single decodes after 3 warm-ups: the arena
			// itself allocates now and then (a new chunk or slab, a
			// sampled object's event), which a mean would charge to every
			// decode.
			for range 3 {
				run()
			}
			var counts []float64
			for range 9 {
				counts = append(counts, testing.AllocsPerRun(1, run))
			}
			slices.Sort(counts)
			got := counts[len(counts)/2]
			if !reflect.DeepEqual(v, want) {
				t.Fatal("values differ from encoding/json's")
			}
			base := testing.AllocsPerRun(5, func() {
				if err := json.Unmarshal(data, c.new()); err != nil {
					t.Fatal(err)
				}
			}) - 1 // c.new()
			t.Logf("heap allocations per decode: median %.0f, most %.0f (encoding/json: %.0f)", got, counts[len(counts)-1], base)
			if zeroHeap[c.name] && got != 0 {
				t.Errorf("%.0f heap allocations per decode, want 0", got)
			}
			if got > base/2 {
				t.Errorf("%.0f heap allocations per decode, more than half of encoding/json's %.0f", got, base)
			}
		})
	}
}
