// Package profiler is the collector that turns sampled-allocation events
// into profiles, and the sampling model those profiles follow.
//
// The sampling model: every byte of every allocated object gets an
// independent Bernoulli trial with p = 1/mean; the first success inside an
// object samples that object (one event with its size and the offset of the
// successful byte) and the rest of the object gets no trials. Each arena
// draws the runs of failed trials between successes from its own stream.
// Each event's weight, size/(1-(1-p)^size), is an unbiased estimate of the
// bytes it stands for; package report turns a profile's sums into
// estimates with exact confidence intervals.
//
// The collector ([Start]) registers with package hooks, aggregates events
// into buckets keyed by stack, type, labels, size and mean, and hands out
// [Snapshot]s that package export turns into pprof profiles. A snapshot
// lists every sampling mean in force during its window ([Snapshot].Means),
// whether or not it produced events: a group that drew no event under one
// of them may still have allocated bytes under it, and its interval must
// allow for them.
//
// # Usage
//
//	// The mean is process-wide, like runtime.MemProfileRate; the
//	// default is 102400 bytes.
//	if err := hooks.SetMeanBytes(64 << 10); err != nil {
//		return err
//	}
//	p, err := profiler.Start() // sampling on
//	if err != nil {
//		return err
//	}
//	defer p.Stop()
//	// ... allocate through arenas ...
//	err = export.Write(f, p.Snapshot())
//
// For a profile of a window (an upload interval, the last minute), take two
// snapshots and pass them to [Delta]; package export's handler does so for
// ?seconds=N.
//
// # Bounds
//
// The profiler's memory grows with the number of distinct allocation
// sites, never with the number of events, and is bounded: see
// [WithMaxBuckets] for what happens past the bound, and [Stats] for the
// counts of what overflowed. No event's bytes are silently lost: an event
// that cannot be aggregated is counted in [Stats].Lost and named in the
// profile's comments.
//
// # Peaks
//
// The profiler also keeps the snapshot at the highest estimated live
// arena bytes since it started ([Profiler.Peak]), or within a window of
// one's own ([Profiler.WatchPeak]): the in-use view at the peak, which an
// in-use profile read at a quiet moment misses.
package profiler
