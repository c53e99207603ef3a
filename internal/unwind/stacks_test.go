package unwind

import (
	"fmt"
	"slices"
	"testing"
)

// TestInternStack drives the table of expanded stacks with made-up
// physical stacks: pcs that are not Go code expand to themselves, so the
// expected expansion is the stack itself, cut at the limit. Many more
// stacks than the table has entries make sure evictions and collisions
// never return another stack's expansion.
func TestInternStack(t *testing.T) {
	stack := func(i, n int) []uintptr {
		s := make([]uintptr, n)
		for j := range s {
			s[j] = uintptr(0x7e00_0000_0000 + 16*(i*131+j)) // far from any code
		}
		return s
	}
	for _, c := range []struct {
		name          string
		stacks, depth int
		limit         int
	}{
		{"one stack", 1, 20, 68},
		{"empty", 1, 0, 68},
		{"cut at the limit", 3, 40, 10},
		{"limit of one", 3, 5, 1},
		{"more stacks than entries", 3 * stackCacheSize, 12, 68},
	} {
		for round := range 2 { // the second round reads what the first stored, where it survived
			for i := range c.stacks {
				phys := stack(i, c.depth)
				got := internStack(slices.Clone(phys), c.limit).logical
				want := phys[:min(len(phys), c.limit)]
				if !slices.Equal(got, want) {
					t.Fatalf("%s, round %d, stack %d: %x, want %x", c.name, round, i, got, want)
				}
			}
		}
	}
	// The same physical stack under two limits is two entries.
	phys := stack(7, 30)
	a, b := internStack(phys, 30).logical, internStack(phys, 5).logical
	if len(a) != 30 || len(b) != 5 {
		t.Errorf("limits 30 and 5 gave %d and %d pcs", len(a), len(b))
	}
}

func BenchmarkFastStack(b *testing.B) {
	for _, depth := range []int{5, 20} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			var scratch [MaxStackDepth + 4]uintptr
			deep(depth, func() {
				for b.Loop() {
					FastStack(0, scratch[:])
				}
			})
		})
	}
}
