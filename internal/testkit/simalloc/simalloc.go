// Package simalloc is a minimal allocator that follows arenaprof's sampling
// model through package hooks exactly as package arena does, without
// handing out memory: its own stream of geometric gaps, kept running at the
// configured mean (samplingstate.State.TrialMeanBytes) even while nobody listens
// and redrawn when the mean changes, one event (only while a consumer is
// registered) for the object that holds the next successful trial (offset = the remaining gap),
// a fresh gap after each sampled object, and a release on reset if it
// emitted anything since the last one. Tests of the collector and the
// exporter use it to drive events with known sizes from known call sites.
package simalloc

import (
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
	"github.com/arenaprof/arenaprof/internal/unwind"
)

// Gaps draws the failed trials before the next success for a mean;
// *profiler.GapSampler implements it.
type Gaps interface {
	SetMean(mean int64) error
	Next() int64
}

// Arena accounts for objects as an arena would and reports the sampled
// ones. It is not safe for concurrent use.
type Arena struct {
	id      uint64
	g       Gaps
	gap     int64
	mean    int64 // the trial stream's mean: samplingstate.State.TrialMeanBytes
	state   *samplingstate.State
	labels  hooks.Labels
	emitted bool
	pcs     [unwind.MaxStackDepth]uintptr
	ev      hooks.Event
}

// New returns an allocator drawing its gaps from g and labelling its events
// with labels.
func New(g Gaps, labels hooks.Labels) *Arena {
	return &Arena{id: hooks.NewArenaID(), g: g, gap: -1, labels: labels}
}

// ID returns the identity in the Arena field of its events.
func (a *Arena) ID() uint64 { return a.id }

// Alloc accounts for one object of size bytes of the named type; the leaf
// frame of its event, if it is sampled, is Alloc's caller.
//
//go:noinline
func (a *Arena) Alloc(size int64, typeName string) {
	if st := samplingstate.Current(); st != a.state {
		a.state = st
		if st.TrialMeanBytes != a.mean {
			// A new mean redraws the pending gap, as arena does.
			a.mean = st.TrialMeanBytes
			_ = a.g.SetMean(a.mean) // hooks bounds the mean
			a.gap = a.g.Next()
		}
	}
	if a.gap < 0 {
		return // sampling turned off: no trials
	}
	if a.gap >= size {
		a.gap -= size
		return
	}
	if a.state.MeanBytes > 0 { // else nobody listens: only the trial is drawn
		n := unwind.Callers(1, a.pcs[:])
		a.ev = hooks.Event{
			TypeName:  typeName,
			Size:      size,
			Offset:    a.gap,
			MeanBytes: a.mean,
			Stack:     a.pcs[:n],
			Labels:    a.labels,
			Arena:     a.id,
		}
		hooks.Emit(&a.ev)
		a.emitted = true
	}
	a.gap = a.g.Next()
}

// Reset tells consumers that every object accounted for so far is gone.
func (a *Arena) Reset() {
	if a.emitted {
		a.emitted = false
		hooks.Release(a.id)
	}
}
