package arena

import "sync"

// seedCounts counts, per seed pair given to [WithSeed], the arenas made
// with it so far in the process: the n-th arena made with a seed draws the
// stream derived from (seed, n), so that arenas sharing a seed (the arenas
// of a seeded [Pool], or several NewArena calls with one seed) never share
// a stream, and a program that makes its arenas in the same order draws the
// same streams on every run.
var seedCounts struct {
	mu sync.Mutex
	n  map[[2]uint64]uint64
}

// nextSeed returns the generator seed of the next arena made with the
// seed pair (seed1, seed2).
func nextSeed(seed1, seed2 uint64) (uint64, uint64) {
	seedCounts.mu.Lock()
	if seedCounts.n == nil {
		seedCounts.n = make(map[[2]uint64]uint64)
	}
	k := [2]uint64{seed1, seed2}
	n := seedCounts.n[k]
	seedCounts.n[k] = n + 1
	seedCounts.mu.Unlock()
	return deriveSeed(seed1, seed2, n)
}

// deriveSeed maps (seed1, seed2, n) to the two words of a PCG seed through
// the SplitMix64 finalizer ([mix]), a bijection on 64-bit words with full
// avalanche: every input bit flips each output bit with probability about
// 1/2, so the seeds of streams n and n+1 are unrelated and PCG streams
// started from them are statistically independent.
func deriveSeed(seed1, seed2, n uint64) (uint64, uint64) {
	const golden = 0x9e3779b97f4a7c15
	h := mix(n*golden + 0x632be59bd9b4e019)
	a := mix(seed1 ^ h)
	b := mix(seed2 + golden ^ mix(a^h))
	return a, b
}
