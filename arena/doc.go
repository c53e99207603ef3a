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
//		ids = arena.Append(a, ids, req.IDs...)  // like append(ids, req.IDs...)
//		u.name = arena.String(a, req.Name)
//		...
//	}
//
// [Append] grows a slice like the built-in append, taking the memory from
// the arena: in place when the slice is the last thing the arena handed
// out and its chunk has room (the new bytes are sampled like any other
// allocation), else by copying into a new arena slice with the capacity
// growing geometrically, as append's does. [AppendString] appends a
// string's bytes, [Grow] makes room for n more elements like slices.Grow,
// and [ReadAll] reads an io.Reader (a request body, say) into the arena,
// up to a limit; each growth they make is sampled like any allocation.
//
// [NewValue] and [MakeSliceValue] are New and MakeSlice for a type known
// only at run time, as reflect.New and reflect.MakeSlice are for new and
// make (a decoder driven by reflect, such as the arenajson module, uses
// them); the values are placed, zeroed and sampled as New and MakeSlice
// place, zero and sample them.
//
// Sampling is on while a consumer is registered with [hooks.Register] (the
// profiler's collector, for instance), at the mean set with
// [hooks.SetMeanBytes]; an arena picks a change up at its next slow path,
// at most one chunk later.
//
// # Memory safety
//
// Memory from [New] and [MakeSlice] (and [NewValue] and [MakeSliceValue]) is zeroed, aligned for its type and
// safe with the garbage collector. Values whose type holds no pointers
// share untyped byte chunks; values whose type holds pointers (a string
// field counts) live in typed slabs, one per type per arena, which the
// collector scans with the right type. After [Arena.Reset], memory of a
// type is reused for the same type only, so a value wrongly used after
// Reset is a logic error, never memory corruption. [Arena.Free] hands the
// memory back to the garbage collector. An arena dropped without Reset or
// Free is reclaimed by the garbage collector like any value, and its
// sampled objects are then released automatically (after each
// collection, the records of the arenas it collected tell the profiler,
// as Free would), so in-use profiles stop counting them.
//
// That guarantee is about the garbage collector only: it never sees a
// pointer it cannot follow, so the program does not crash or corrupt the
// heap. It does not make a use after Reset correct.
//
// # Use after Reset or Put
//
// [Arena.Reset] and [Pool.Put] make the arena's memory available again, and
// the next allocations get the same addresses. A string, slice or pointer
// from the arena that is still used afterwards (kept in a cache, in a
// global, in a goroutine that outlives the request) reads zeros until the
// memory is handed out again, and then reads the later owner's data,
// silently, with no panic and no race report: a string built with [String]
// for one request may read back as the next request's data. Writes through
// it corrupt the later owner's values. [WithPoison] only fills the memory
// with a pattern at Reset, so that a stale value read before the memory is
// reused looks like garbage; it does not stop the read of later data once
// the memory is handed out again. Nothing in normal mode detects such a
// use: keep arena values within the arena's lifetime, and find the places
// that do not with checked mode.
//
// # Finding a use after Reset: checked mode
//
// Run the program or its tests with ARENAPROF_CHECKED=1 in the environment
// (read once, when the program starts; no code change), or make one arena
// or pool checked with [WithChecked](true). In checked mode:
//
//   - Pointer-free memory (values of [New] and [MakeSlice] whose type holds
//     no pointers, [String], [Bytes], [Append], [ReadAll], large objects
//     included) is mapped with mmap, apart from the Go heap. Reset, Put and Free make
//     it inaccessible (mapped again with PROT_NONE, its pages given back
//     to the kernel) and never hand it out again, so the first read or
//     write through a stale string, slice or pointer, in any goroutine,
//     through copy, fmt or a comparison as well, stops the program.
//   - Memory of types with pointers must stay visible to the garbage
//     collector, so it cannot fault: Reset, Put and Free clear it (every
//     pointer, string, slice, map and interface in it becomes nil) and
//     drop it instead of reusing it. Following a pointer read from a stale
//     value then panics with a nil dereference, and a stale value never
//     reads a later owner's data.
//   - Free releases the memory like Reset: unlike normal mode, where
//     values outlive Free, checked mode treats their use after Free as a
//     bug too. An arena dropped without Free or Put has its pointer-free
//     memory made inaccessible when the garbage collector finds it
//     unreachable.
//
// A use of pointer-free memory after release stops the program with the
// runtime's fault report, whose goroutine trace shows the stale use, and
// then checked mode's own lines, which say how the memory was released and
// where, and where its arena was made (for an arena of a [Pool], the Get
// that made it, which may have served an earlier request):
//
//	unexpected fault address 0x4172656e0000
//	fatal error: fault
//	[signal SIGSEGV: segmentation violation code=0x2 addr=0x4172656e0000 pc=0x48eae5]
//
//	goroutine 7 [running]:
//	...
//	main.handle(...)
//		/src/service/handler.go:41 +0x199    <- the stale use
//	...
//
//	arenaprof: checked arena: the fault address 0x4172656e0000 is arena memory used after its release by Pool.Put.
//	The region [0x4172656e0000, 0x4172656f1000) was released by Pool.Put at:
//		github.com/arenaprof/arenaprof/arena.(*Pool).Put
//			.../arena/pool.go:58
//		main.serve
//			/src/service/handler.go:30
//	Its arena was made at:
//		github.com/arenaprof/arenaprof/arena.(*Pool).Get
//		...
//
// A fault leaves no chance to run code in the failing process, so those
// last lines come from a watcher: at its first release of checked memory
// the program starts a copy of its own executable (with
// ARENAPROF_CHECKED_WATCHER=1 in its environment; the arena package's
// initialization turns that copy into the watcher, so initializers of
// packages that run before arena's run in it too), sends it a record of
// every released region, and copies its fatal error output to it with
// [runtime/debug.SetCrashOutput] (a later SetCrashOutput of the program's
// replaces it). If the watcher cannot start, checked mode still faults,
// without those lines. Checked memory lies at addresses from 0x4172656e0000
// (its high bytes spell "Aren") up to 1 TiB above, so the fault address
// alone says "arena".
//
// What checked mode does not catch: reading a field of a stale value with
// pointers that holds no pointer (it reads zero, and a stale string field
// reads ""), writes to such a value (they land in memory nobody uses and
// are lost), len and cap of a stale string or slice (the header is the
// caller's; only its bytes are arena memory), and a use within the
// arena's lifetime that is wrong for other reasons.
//
// Address space stays bounded in long tests: every Reset or Put of an arena
// that handed out pointer-free memory releases at least one page; the
// 16384 most recent released regions (at most 16 GiB of address space,
// and no memory) stay mapped and inaccessible, older ones are unmapped.
// Their addresses are not mapped again until 1 TiB of checked memory has
// been mapped in the process, so a stale use of an old region still faults
// (code=0x1 instead of 0x2); the watcher remembers the last 1,048,576
// released regions. If the address range above is taken, checked memory
// goes where the kernel puts it, and an unmapped region's addresses may
// then be reused by any later mapping.
//
// Checked mode is for tests and debugging: every Reset or Put costs a few
// system calls and a first chunk mapped anew, some 20-30 µs; the measured
// cost per allocation is in the repository's README. It faults on Linux
// (amd64 and arm64); elsewhere it cannot make memory inaccessible, and
// Reset, Put and Free fill pointer-free memory with the byte 0xa5 and drop
// it instead, so a stale value reads the pattern, never a later owner's
// data. With checked mode off (the default) nothing of it runs: the
// allocation fast path is the same, and the check is in the slow path.
//
// # Moving a value out of an arena
//
// A value that must outlive the arena (a cache entry, a response kept after
// the handler returns, an error message) must be copied to the heap before
// Reset or Put:
//
//	name := strings.Clone(u.name) // a string
//	kept := slices.Clone(ids)     // a slice
//	v := *u                       // a struct, by value
//
// A copy is shallow: strings, slices and pointers inside the copied value
// still point into the arena and must be cloned too. Copies made this way
// keep their contents after Reset.
//
// # Cost
//
// New is inlined into its caller. For a pointer-free type its fast path is
// one compare against the byte chunk's combined limit (the end of the chunk
// or the next sampled byte, whichever comes first), one bump and one
// increment of the allocation count beside it (see [ContextWithUsage]): no lookup,
// so its cost does not depend on how many types a program allocates. A type
// with pointers costs one call more: a probe of the arena's collision-free
// type table, then the same compare and bump in the type's slab. Everything
// else (a new chunk, a sampled object, the first object of a type, a change
// of the sampling state) happens in the slow path.
//
// An Arena is not safe for concurrent use: use one per goroutine, for
// instance through a [Pool].
//
// # Where memory is held
//
// Every arena not yet freed that has taken memory is in a registry of live
// arenas (an arena that never allocated holds nothing): what it holds
// (chunks and large buffers, and the bytes handed out since its last
// Reset), where it was made or taken from its pool, and since when; the
// idle arenas of each pool apart. An arena updates its record in the slow
// path and at Reset, Put and Free, never in the fast path; the registry
// does not keep arenas alive. The live-arenas profile shows it (exact
// counts, not samples): arenaprof.Start serves it at
// /debug/arenaprof/arenas, and package export builds it.
//
// # Exact bytes per request
//
// An arena taken with [Pool.Get] under a context from [ContextWithUsage]
// reports, at each Reset, Put and Free, the exact bytes and allocations it
// handed out since it was taken or last reset. The module
// github.com/arenaprof/arenaprof/otelarena uses it to put each request's
// bytes on its OpenTelemetry span.
package arena
