// Package arena is a bump allocator for Go services whose allocations are
// profiled: each arena samples the bytes it hands out with the randomized
// per-byte model of package profiler (every byte is an independent trial
// with probability 1/mean; the object holding a successful trial is
// reported with its type, size, stack and labels through package hooks).
//
// Sizes are the bytes an object takes from the arena: its size rounded up
// to a multiple of 8 (a 5-byte String takes, is sampled as and is reported
// as 8 bytes; a 12-byte struct as 16). Profiles count these bytes, which is
// the memory the arena uses.
//
// Usage, one arena per request:
//
//	var pool arena.Pool // or arena.NewPool(options...)
//
//	func handle(ctx context.Context, req *Request) {
//		a := pool.Get(ctx) // labelled with ctx's pprof labels
//		defer pool.Put(a)  // resets a: nothing allocated in it may be used afterwards
//
//		u := arena.New[user](a)           // like new(user)
//		ids := arena.MakeSlice[int64](a, 0, 16) // like make([]int64, 0, 16)
//		u.name = arena.String(a, req.Name)
//		...
//	}
//
// Sampling is on while a consumer is registered with [hooks.Register] (the
// profiler's collector, for instance), at the mean set with
// [hooks.SetMeanBytes]; an arena picks a change up at its next slow path,
// at most one chunk later.
//
// # Memory safety
//
// Memory from [New] and [MakeSlice] is zeroed, aligned for its type and
// safe with the garbage collector. Values whose type holds no pointers
// share untyped byte chunks; values whose type holds pointers (a string
// field counts) live in typed slabs, one per type per arena, which the
// collector scans with the right type. After [Arena.Reset], memory of a
// type is reused for the same type only, so a value wrongly used after
// Reset is a logic error, never memory corruption. [Arena.Free] hands the
// memory back to the garbage collector. An arena dropped without Reset or
// Free is reclaimed by the garbage collector like any value, and its
// sampled objects are then released automatically (a cleanup registered
// with [runtime.AddCleanup] tells the profiler, as Free would), so in-use
// profiles stop counting them.
//
// # Cost
//
// New is inlined into its caller. For a pointer-free type its fast path is
// one compare against the byte chunk's combined limit (the end of the chunk
// or the next sampled byte, whichever comes first) and one bump: no lookup,
// so its cost does not depend on how many types a program allocates. A type
// with pointers costs one call more: a probe of the arena's collision-free
// type table, then the same compare and bump in the type's slab. Everything
// else (a new chunk, a sampled object, the first object of a type, a change
// of the sampling state) happens in the slow path.
//
// An Arena is not safe for concurrent use: use one per goroutine, for
// instance through a [Pool].
package arena
