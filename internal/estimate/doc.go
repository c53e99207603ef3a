// Package estimate holds arenaprof's estimator math: the bytes and objects
// that sampled allocations stand for, and exact confidence intervals for
// them.
//
// The sampling model: every byte of every allocated object gets an
// independent Bernoulli trial with p = 1/mean; the first success inside an
// object samples that object (one event with its size and the 0-based
// offset of the successful byte) and the rest of the object gets no trials.
//
// Words used throughout:
//
//   - An event's tail is size - offset: the bytes from its sampled byte to
//     the end of its object. Profiles carry the sum of the tails per sample
//     as alloc_tail/bytes, next to the count of events, alloc_samples.
//   - The failed trials of a group are the bytes it allocated that were not
//     sampled, up to its last event: their count before the s-th success is
//     negative-binomial, which gives exact bounds ([SingleMeanInterval]).
//     The bytes allocated are the failed trials plus the tails.
//   - [MeanSums] (a stratum) is the count of events and their tail sum under
//     one mean; a group whose events were drawn under several means gets
//     one per mean ([GroupInterval]).
//
// Two unbiased estimates come from the same events: [WeightedBytes] per
// object (size/(1-q^size), q = 1-p), summed, is what profiles carry as
// alloc_space; [BytesFromSums] (s*(mean-1) + u) is the center of the
// interval. They differ by sampling noise only.
//
// Usage:
//
//	// 8 sample events whose tails sum to 10908 bytes, drawn at the
//	// default mean, in a window that ends between events:
//	iv, err := estimate.SingleMeanInterval(8, 10908, 102400, 0.95, estimate.WindowEnd)
//	if err != nil {
//		return err
//	}
//	fmt.Printf("between %.0f and %.0f bytes\n", iv.Lo, iv.Hi)
//
//	// Or accumulate events as they come, each with its own mean:
//	var sums estimate.EventSums
//	_ = sums.Add(size, offset, ev.MeanBytes)
//	iv, err = sums.Interval(0.95, estimate.WindowBoth)
package estimate
