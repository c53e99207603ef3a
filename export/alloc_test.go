package export_test

import (
	"testing"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/profiler"
)

// testArena is a minimal allocator that follows the sampling model through
// hooks exactly as package arena does: its own gap sampler, one event for
// the object holding the next successful trial (offset = the remaining
// gap), a fresh gap after each sampled object, a release on reset if it
// emitted anything. It lets the export tests run without package arena.
type testArena struct {
	id      uint64
	g       *profiler.GapSampler
	gap     int64
	state   *hooks.State
	labels  hooks.Labels
	emitted bool
	pcs     [hooks.MaxStackDepth]uintptr
	ev      hooks.Event
}

func newTestArena(t testing.TB, seed uint64, labels hooks.Labels) *testArena {
	g, err := profiler.NewGapSamplerSeeded(0, seed, seed^0x5eed)
	if err != nil {
		t.Fatal(err)
	}
	return &testArena{id: hooks.NewArenaID(), g: g, labels: labels}
}

// alloc accounts for one object; the leaf frame of its event is alloc's
// caller.
//
//go:noinline
func (a *testArena) alloc(size int64, typeName string) {
	if st := hooks.Current(); st != a.state {
		a.state = st
		a.g.SetMean(st.MeanBytes)
		a.gap = a.g.Next()
	}
	if a.gap < 0 {
		return
	}
	if a.gap >= size {
		a.gap -= size
		return
	}
	n := hooks.Callers(1, a.pcs[:])
	a.ev = hooks.Event{
		TypeName:  typeName,
		Size:      size,
		Offset:    a.gap,
		MeanBytes: a.state.MeanBytes,
		Stack:     a.pcs[:n],
		Labels:    a.labels,
		Arena:     a.id,
	}
	hooks.Emit(&a.ev)
	a.emitted = true
	a.gap = a.g.Next()
}

func (a *testArena) reset() {
	if a.emitted {
		a.emitted = false
		hooks.Release(a.id)
	}
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
func allocSmall(a *testArena, n int) {
	for range n {
		a.alloc(16, "main.small")
	}
}

//go:noinline
func allocBig(a *testArena, n int) {
	for range n {
		a.alloc(4096, "main.big")
	}
}

// inlinedSite is small enough to be inlined into its caller: its calls
// show up as an inlined frame.
func inlinedSite(a *testArena) { a.alloc(48, "main.inl") }

//go:noinline
func callsInlined(a *testArena, n int) {
	for range n {
		inlinedSite(a)
	}
}
