//go:build race

package pprofread

// raceEnabled: the race detector changes what the runtime allocates, so
// tests that compare allocations with the scan's estimate skip.
const raceEnabled = true
