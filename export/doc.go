// Package export is the write side of arenaprof: it turns a
// [profiler.Profiler]'s aggregates into pprof profiles
// (github.com/google/pprof/profile): whole-run profiles, delta profiles over
// a window, files, and an HTTP handler in the style of net/http/pprof.
// Package report reads them back, with intervals.
//
// Usage:
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
// For a whole service, the one-call setup of package
// github.com/arenaprof/arenaprof serves the handler and runs the agent.
//
// Two more profiles show where arena memory is held: [BuildArenas] (served
// by [ArenasHandler]), the arenas live now with their reserved and used
// bytes, exact, by creating stack and age; and [BuildPeak] (served by
// [PeakHandler]), the in-use profile at the highest estimated live arena
// bytes.
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
// # Windows
//
// Each profile carries one comment "arenaprof window=W", W one of aligned,
// start, end or both, telling interval computation whether the window's
// start and end fall on sample events (reference 000, "Compensating for
// bytes allocated ... in between events"). A profile since the profiler started is "end"; a
// delta is "both". A profile without a marking is read as "both", and
// report.Merge marks the union of its parts. TimeNanos is the window's start and
// DurationNanos its length.
//
// Delta profiles subtract alloc values and the raw sums and keep in-use
// values absolute (the latest), since subtracting in-use values gives
// meaningless negative numbers.
package export
