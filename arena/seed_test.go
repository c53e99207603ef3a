package arena

import (
	"math"
	"testing"
)

// TestSeededStreamsIndependent: arenas sharing a seed (two NewArena calls
// with one seed, two arenas of a seeded Pool) draw different streams, and
// their uniforms are uncorrelated. With n independent pairs the sample
// correlation is about N(0, 1/n); the bound 6/sqrt(n) fails falsely with
// probability 2e-9 per pair.
func TestSeededStreamsIndependent(t *testing.T) {
	const n = 20000
	pool := NewPool(WithSeed(11, 12))
	cases := []struct {
		name string
		a, b *Arena
	}{
		{"NewArena", NewArena(WithSeed(1, 2)), NewArena(WithSeed(1, 2))},
		{"Pool", pool.Get(nil), pool.Get(nil)},
	}
	for _, c := range cases {
		var sx, sy, sxx, syy, sxy float64
		same := 0
		for range n {
			x, y := c.a.sampler.Uniform(), c.b.sampler.Uniform()
			if x == y {
				same++
			}
			sx += x
			sy += y
			sxx += x * x
			syy += y * y
			sxy += x * y
		}
		cov := sxy/n - sx/n*sy/n
		r := cov / math.Sqrt((sxx/n-sx/n*sx/n)*(syy/n-sy/n*sy/n))
		if same > 0 || math.Abs(r) > 6/math.Sqrt(n) {
			t.Errorf("%s: sibling streams: %d equal draws, correlation %.4f", c.name, same, r)
		}
	}
}

// TestDeriveSeed: the derivation is deterministic (reproducible runs) and
// gives distinct seeds to the first arenas of a seed and to nearby seeds.
func TestDeriveSeed(t *testing.T) {
	seen := map[[2]uint64]bool{}
	for s := range uint64(4) {
		for n := range uint64(1000) {
			a, b := deriveSeed(s, 7, n)
			if a2, b2 := deriveSeed(s, 7, n); a2 != a || b2 != b {
				t.Fatalf("deriveSeed(%d, 7, %d) is not deterministic", s, n)
			}
			k := [2]uint64{a, b}
			if seen[k] {
				t.Fatalf("deriveSeed(%d, 7, %d) repeats a seed", s, n)
			}
			seen[k] = true
		}
	}
}
