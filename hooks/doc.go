// Package hooks is the event contract between allocators and the consumers
// of their sampled allocations.
//
// An allocator (the arena package, or any pool or slab allocator in a
// service) decides with the per-byte sampling model which of its objects are
// sampled and reports each one as an [Event] through [Emit]. Consumers (the
// profiler's collector, or anything else) receive those events through
// [Register].
//
// Registering the first consumer turns sampling on everywhere; unregistering
// the last turns it off. Allocators read the switch and the mean in their
// slow path only, through [Current], so they pick up a change at most one
// chunk later and their fast path never touches shared state.
//
// Usage, as a consumer:
//
//	unregister := hooks.Register(hooks.ConsumerFunc(func(e *hooks.Event) {
//		log.Printf("sampled %s of %d bytes at offset %d", e.TypeName, e.Size, e.Offset)
//	}))
//	defer unregister()
//
// Usage, as an allocator, in its slow path:
//
//	st := hooks.Current()
//	// draw gaps with mean st.TrialMeanBytes, even while nobody listens, so
//	// that bytes allocated right after a consumer registers get trials;
//	// for each sampled object, emit only while st.MeanBytes > 0:
//	if st.MeanBytes > 0 {
//		e := hooks.Event{TypeName: "main.record", Size: size, Offset: off,
//			MeanBytes: st.MeanBytes, Arena: id, Time: time.Now()}
//		e.Stack = buf[:hooks.Callers(1, buf)]
//		hooks.Emit(&e)
//	}
//
// See the package example for a complete pool allocator that reports its
// sampled allocations.
package hooks
