package arena

import (
	"context"

	"github.com/arenaprof/arenaprof/arena/internal/ctxlabels"
)

// usageKey is the context key of the function ContextWithUsage sets.
type usageKey struct{}

// ContextWithUsage returns a copy of ctx carrying f: an arena taken with
// [Pool.Get] under the returned context (or a context derived from it)
// calls f(bytes, allocs) each time it is Reset, Put or Freed, with what it
// handed out since it was taken or last Reset, counted exactly, not
// sampled:
//
//   - bytes: the bytes of every allocation, each rounded up to 8 bytes, as
//     profiles count them;
//   - allocs: the calls of New, MakeSlice, String and Bytes (those for
//     zero bytes included: telling them apart would cost the fast path a
//     compare), and each growth by Append, AppendString, Grow or ReadAll
//     (an append into a slice's spare capacity takes nothing from the
//     arena and is not counted).
//
// An arena taken under such a context follows its pprof labels: each
// sampled allocation takes them anew if they changed since the arena
// read them (a tracing integration adds a label once the request's span
// has ended, so that the samples of an arena used after it say so).
//
// A Reset with nothing handed out since calls f(0, 0). f runs on the
// goroutine that resets the arena, before Reset returns; it must be quick
// and must not use the arena. Tracing integrations use it to put each
// request's exact bytes on its span.
//
// The byte count costs the allocation fast path nothing (it comes from
// the chunks' offsets); the allocation count is one increment beside the
// bump, in the cache line the bump writes, kept on whether or not a usage
// function listens.
func ContextWithUsage(ctx context.Context, f func(bytes, allocs int64)) context.Context {
	return context.WithValue(ctx, usageKey{}, f)
}

// endTally reports what the arena handed out since it was taken or last
// reset to its usage function, if it has one, and restarts the counts. Reset
// and Free call it first.
//
// Without a usage function it does nothing: the counts are read only by
// one, and Get restarts them when it sets one (startTally), so that Reset
// and Put cost nothing more for the arenas of a request without a span.
func (a *Arena) endTally() {
	if a.tally == nil {
		return
	}
	bytes, allocs := a.bytes.handedOut(), a.bytes.allocs
	for _, r := range a.slabs {
		bytes += r.handedOut()
		allocs += r.allocs
	}
	a.tally(int64(bytes), int64(allocs))
	a.clearTally()
}

// startTally sets the arena's usage function and restarts its counts,
// which ran on while it had none.
func (a *Arena) startTally(f func(bytes, allocs int64)) {
	a.tally = f
	a.clearTally()
}

// clearTally restarts the counts of allocations and of large buffers'
// bytes of every region.
func (a *Arena) clearTally() {
	a.bytes.allocs, a.bytes.large = 0, 0
	for _, r := range a.slabs {
		r.allocs, r.large = 0, 0
	}
}

// handedOut returns the bytes the region handed out since its last Reset:
// the chunks it filled, the current one up to its offset, and the large
// buffers. Offsets stay 8-aligned in the byte chunk and slabs hold whole
// elements, so no padding is counted.
func (r *region) handedOut() uintptr {
	n := r.off + r.large
	for i := range r.chunks {
		if i != r.cur {
			n += r.chunks[i].used
		}
	}
	return n
}

// resolveLabels adds the pprof labels of the context the arena was taken
// under, not yet in its labels, to them, and publishes the result.
func (a *Arena) resolveLabels() {
	l := ctxlabels.Resolve(a.lctx)
	if a.tally != nil {
		a.tctx, a.thash = a.lctx, ctxlabels.Hash(a.lctx)
	}
	a.lctx = nil
	a.labels = mergeLabels(a.base, l)
	a.publishLabels()
}

// followLabels takes the labels of the context of a Get under a usage
// function anew when they changed since they were resolved: a tracing
// integration's context adds span_late=true once its span has ended, so
// that the samples of an arena still used after its request say so. It
// costs a sampled event a walk of the context's labels.
func (a *Arena) followLabels() {
	if ctxlabels.Hash(a.tctx) != a.thash {
		a.lctx = a.tctx
		a.resolveLabels()
	}
}
