// Package poolgets counts the arenas pools hand out while arena profiling
// is on, so that a profile can record how many requests (arenas taken from
// an arena.Pool) its window served: the divisor of arenaprof diff -per
// request.
//
// Package arena is its only writer ([Add], from Pool.Get, only while a
// consumer listens: Get's cost with profiling off is unchanged); the
// profiler reads [Total] when it takes a snapshot.
package poolgets

import "sync/atomic"

// stripes spreads the count over cache lines: two goroutines taking
// arenas of different IDs on two cores mostly add to different lines, so
// that a Get does not wait for a line another core holds.
const stripes = 16

// stripe is one counter alone on its cache line (64 bytes on amd64 and
// arm64; 128 covers the adjacent-line prefetch of x86).
type stripe struct {
	n atomic.Uint64
	_ [120]byte
}

var counts [stripes]stripe

// Add counts one arena handed out; id is the arena's ID, which picks the
// stripe.
func Add(id uint64) {
	// Fibonacci hashing spreads sequential arena IDs over the stripes.
	counts[(id*0x9E3779B97F4A7C15)>>(64-4)].n.Add(1)
}

// Total returns the arenas counted so far in the process. Counts added
// while Total runs may or may not be in its result.
func Total() uint64 {
	var t uint64
	for i := range counts {
		t += counts[i].n.Load()
	}
	return t
}
