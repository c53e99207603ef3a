// Package exampleprof makes the small arena profile the examples of
// package report and its subpackages read.
package exampleprof

import (
	"bytes"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/profiler"
)

// Run profiles n allocations of [64]byte through an arena seeded with
// seed, with one sampled byte every 4096 on average, and returns the
// profile as arenaprof writes it. It panics on failure, as examples do.
func Run(seed uint64, n int) *profile.Profile {
	// The sampling mean is process-wide, like runtime.MemProfileRate: one
	// sampled byte every 4096 on average, for every arena and consumer.
	defer hooks.SetMeanBytes(hooks.MeanBytes())
	if err := hooks.SetMeanBytes(4096); err != nil {
		panic(err)
	}
	p, err := profiler.Start()
	if err != nil {
		panic(err)
	}
	a := arena.NewArena(arena.WithSeed(seed, 1))
	for range n {
		_ = arena.New[[64]byte](a)
	}
	a.Reset()
	p.Stop()
	var buf bytes.Buffer
	if err := export.Write(&buf, p.Snapshot()); err != nil {
		panic(err)
	}
	prof, err := profile.Parse(&buf)
	if err != nil {
		panic(err)
	}
	return prof
}
