// Package profiler holds arenaprof's sampling model and its statistics, and
// the collector that turns sampled-allocation events into profiles.
//
// The sampling model: every byte of every allocated object gets an
// independent Bernoulli trial with p = 1/mean; the first success inside an
// object samples that object (one event with its size and the offset of the
// successful byte) and the rest of the object gets no trials. Each arena
// draws the runs of failed trials between successes from its own stream.
//
// The statistics turn the events of any group of objects into estimates of
// the bytes and objects allocated ([WeightedBytes], [Tally]), with exact
// negative-binomial confidence intervals ([ComputeInterval],
// [GroupInterval]).
//
// The collector ([Start]) registers with package hooks, aggregates events
// into buckets keyed by stack, type, labels, size and mean, and hands out
// [Snapshot]s that package export turns into pprof profiles. A snapshot
// lists every sampling mean in force during its window ([Snapshot].Means),
// whether or not it produced events: a group that drew no event under one
// of them may still have allocated bytes under it, and its interval must
// allow for them (a [Stratum] with Samples = 0 in [GroupInterval]).
//
// Usage, for the statistics:
//
//	// 8 sample events whose tails (size - offset) sum to 10908 bytes,
//	// drawn at the default mean, in a window that ends between events:
//	iv, err := profiler.ComputeInterval(8, 10908, profiler.DefaultMeanBytes, 0.95, profiler.WindowEnd)
//	if err != nil {
//		return err
//	}
//	fmt.Printf("between %.0f and %.0f bytes\n", iv.Lo, iv.Hi)
//
//	// Or accumulate events as they come, each with its own mean:
//	var t profiler.Tally
//	_ = t.Add(size, offset, ev.MeanBytes)
//	iv, err = t.Interval(0.95, profiler.WindowBoth)
//
// Usage, for the collector:
//
//	// The mean is process-wide, like runtime.MemProfileRate; the
//	// default is DefaultMeanBytes.
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
// The profiler also keeps the snapshot at the highest estimated live
// arena bytes since it started ([Profiler.Peak]), or within a window of
// one's own ([Profiler.WatchPeak]): the in-use view at the peak, which an
// in-use profile read at a quiet moment misses.
package profiler
