// Package hooks is the event contract between allocators and the consumers
// of their sampled allocations. Package arena reports through it, and so
// can any other allocator of a service (a pool, a slab, a buffer cache):
// its sampled objects then appear in the same profiles as the arenas'.
//
// # Sampling model
//
// Every byte an allocator hands out is an independent trial that succeeds
// with probability 1/mean. An object holding at least one success is
// sampled, and reported once, as an [Event] through [Emit], with the offset
// of its first success since the allocator's previous sample and the mean
// the trial was drawn under. The mean is one setting for the whole process,
// like runtime.MemProfileRate for the Go heap: [SetMeanBytes] sets it
// (default 102400 bytes), [MeanBytes] reads it.
//
// # Consumers
//
// A consumer (the profiler, or anything else) receives the events through
// [Register]: [Consumer.Sampled] for each sampled object, on the allocating
// goroutine, and [Consumer.Released] when an allocator instance has let go
// of everything it handed out. Registering the first consumer turns
// sampling on everywhere; unregistering the last turns it off.
//
//	type logger struct{}
//
//	func (logger) Sampled(e *hooks.Event) {
//		log.Printf("sampled %s of %d bytes at offset %d", e.TypeName, e.Size, e.Offset)
//	}
//	func (logger) Released(arena uint64) {}
//
//	unregister := hooks.Register(logger{})
//	defer unregister()
//
// A consumer that panics is disabled and the panic logged; the allocating
// goroutine carries on.
//
// # Allocators
//
// An allocator takes an identity from [NewArenaID] per instance, draws the
// gaps between successes with the mean [MeanBytes] returns (re-reading it
// now and then picks up a change: every event carries its own mean, so
// estimates stay unbiased across changes), emits each sampled object, and
// calls [Release] when it frees everything at once:
//
//	e := hooks.Event{TypeName: "main.record", Size: size, Offset: off,
//		MeanBytes: mean, Arena: id, Labels: labels}
//	e.Stack = pcs[:runtime.Callers(2, pcs[:])] // leaf: the allocator's caller
//	hooks.Emit(&e)
//	...
//	hooks.Release(id) // on reset
//
// The package example is a complete pool allocator that reports its sampled
// allocations. Emit costs little while no consumer is registered.
package hooks
