// Package export is the write side of arenaprof: it turns a
// [profiler.Profiler]'s aggregates into pprof profiles
// (github.com/google/pprof/profile): whole-run profiles, delta profiles over
// a window, files, and an HTTP handler in the style of net/http/pprof.
// Package report reads them back, with intervals.
//
// # Usage
//
//	p, err := profiler.Start() // sampling at the mean hooks.SetMeanBytes set
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer p.Stop()
//
//	// Serve profiles: go tool pprof http://host/debug/arenaprof
//	mux.Handle("/debug/arenaprof", export.Handler(p))
//
//	// Or write one: go tool pprof arenas.pb.gz
//	err = export.Write(f, p.Snapshot())
//
//	// Or build the profile of a window between two snapshots:
//	d, err := profiler.Delta(prev, p.Snapshot())
//	prof, err := export.Build(d)
//
// The agent (package export/agent), which builds profiles every interval,
// builds each in the memory of its last one, and takes the window of each
// interval with [profiler.Profiler.Deltas].
//
// For a whole service, the one-call setup of package
// github.com/arenaprof/arenaprof serves the handler and runs the agent.
//
// Two more profiles show where arena memory is held: [BuildArenas] (served
// by [ArenasHandler]), the arenas live now with their reserved and used
// bytes, exact, by creating stack and age; and the peak profile (served by
// [PeakHandler], uploaded by the agent's PeakSource), the in-use profile at
// the highest estimated live arena bytes. [BuildMemory] (served by [MemoryHandler]) puts the arenas' and the
// Go heap's in-use memory in one profile. [RSSHandler] serves the
// resident-memory profile: every byte of the process's RSS in one class
// (the Go heap by site, stacks, the runtime, arenas, the binary, files,
// memory from C). [UIHandler] serves the live page:
// the running profile as an HTML page with intervals and a flame graph
// (package report/htmlreport). [Handlers] returns all of them by path,
// sharing one bound on builds, for a program that mounts them itself.
//
// # Handlers
//
// The handlers follow net/http/pprof's conventions (see [Handler] for the
// query parameters) and bound what clients can make a service hold: one
// profile build at a time per handler, at most 4 seconds=N windows at once
// ([WithMaxDeltas]), N at most 3600 ([WithMaxSeconds]), 50 rows in each
// debug=1 table unless rows=N asks for up to 10000. Errors are text/plain
// with the header X-Go-Pprof: 1, so that go tool pprof prints them.
//
// # Profile format
//
// PeriodType is space/bytes and Period the sampling mean in force when the
// profile was built. The sample types are, in order, alloc_objects/count,
// alloc_space/bytes, inuse_objects/count, inuse_space/bytes,
// alloc_samples/count (raw number of sample events) and alloc_tail/bytes
// (raw sum of size-offset over them); the default is alloc_space. There is
// one sample per allocation site (stack, type, arena labels, object size,
// mean). Byte values are unbiased estimates (sums of each event's weight
// size/(1-(1-1/mean)^size), rounded once per sample), objects are
// bytes divided by the object size, and in-use values count the sampled
// objects of arenas not yet reset or freed.
//
// Samples carry the string label "type" (the Go type), the arena's labels
// as string labels (a label key that clashes with type, bytes or
// sampling_mean gets the prefix "arena_"), and the numeric labels "bytes"
// (object size) and "sampling_mean" (the mean the events were drawn under),
// both with unit bytes. Stacks come from runtime.CallersFrames, inlined
// calls included (one location per physical frame, Line[0] innermost); the
// allocator's own frames (package arena) are dropped, so the leaf frame is
// the function that called arena.New.
//
// Past the profiler's bucket bound (see [profiler.WithMaxBuckets]), a
// sample's stack is the single frame "[arenaprof: bucket limit reached,
// stack dropped]"; past the bound on those, its type is "arenaprof.other".
// A comment says how many events each bound took, so no event goes
// uncounted.
//
// The live-arenas profile ([BuildArenas]) has the sample types
// reserved_space/bytes (chunks and large buffers held), used_space/bytes
// (bytes handed out since the last Reset) and arenas/count, and the labels
// "age" (<1s, 1s-10s, 10s-1m, 1m-10m, 10m-1h, >1h), "pool" (numbering a
// pool) and "pool_idle" ("true" on the sample of a pool's idle arenas). The
// peak profile is the allocation profile's format with a comment starting
// "arenaprof peak:".
//
// # Windows
//
// Each profile carries one comment "arenaprof window=W", W one of aligned,
// start, end or both, telling interval computation whether the window's
// start and end fall on sample events (package report allows for the bytes
// allocated between a window's edge and its first or last event). A
// profile since the profiler started is "end"; a delta is "both". A profile without a marking is read as "both", and
// report.Merge marks the union of its parts. TimeNanos is the window's start and
// DurationNanos its length. Further comments list the sampling means in
// force during the window ("arenaprof means=") and since the profiler
// started ("arenaprof inuse_means="), and the arenas arena.Pool.Get
// handed out in the window with the window's start and length
// ("arenaprof pool_gets=N window_ns=START+LENGTH", profiler.Stats.PoolGets:
// the divisors of arenaprof diff -per request and -per second).
//
// Delta profiles subtract alloc values and the raw sums and keep in-use
// values absolute (the latest), since subtracting in-use values gives
// meaningless negative numbers.
package export
