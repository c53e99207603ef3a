//go:build race

package rss

// raceOn says the race detector runs: its shadow memory moves RSS with
// every allocation.
const raceOn = true
