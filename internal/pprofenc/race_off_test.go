//go:build !race

package pprofenc

// raceEnabled: the race detector drops sync.Pool items at random, and
// the stateless gzip writer keeps its bit writer and tokens in pools, so
// tests that count allocations skip.
const raceEnabled = false
