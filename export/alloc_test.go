package export_test

import (
	"testing"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/sampling"
	"github.com/arenaprof/arenaprof/internal/testkit/simalloc"
	"github.com/arenaprof/arenaprof/profiler"
)

// newTestArena returns a seeded allocator that drives events through hooks
// as package arena does, so the export tests run without package arena.
func newTestArena(t testing.TB, seed uint64, labels hooks.Labels) *simalloc.Arena {
	g, err := sampling.NewGapSamplerSeeded(0, seed, seed^0x5eed)
	if err != nil {
		t.Fatal(err)
	}
	return simalloc.New(g, labels)
}

func startProfiler(t testing.TB, opts ...profiler.Option) *profiler.Profiler {
	t.Helper()
	p, err := profiler.Start(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

//go:noinline
func allocSmall(a *simalloc.Arena, n int) {
	for range n {
		a.Alloc(16, "main.small")
	}
}

//go:noinline
func allocBig(a *simalloc.Arena, n int) {
	for range n {
		a.Alloc(4096, "main.big")
	}
}

// inlinedSite is small enough to be inlined into its caller: its calls
// show up as an inlined frame.
func inlinedSite(a *simalloc.Arena) { a.Alloc(48, "main.inl") }

//go:noinline
func callsInlined(a *simalloc.Arena, n int) {
	for range n {
		inlinedSite(a)
	}
}
