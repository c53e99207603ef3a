// Package report is the read side of arenaprof: it reads pprof profiles
// (files, handler responses, merged or delta profiles, and the Go
// runtime's heap and allocs profiles), groups their samples by Go type,
// leaf function, stack, object size or label, and gives each group an
// estimate of its bytes with a confidence interval computed from the
// profile's raw sums. It also compares two profiles group by group.
//
// Usage:
//
//	f, err := os.Open("arena.pb.gz")
//	if err != nil {
//		return err
//	}
//	defer f.Close()
//	prof, err := report.Parse(f, report.ParseOptions{}) // the default bounds
//	if err != nil {
//		return err
//	}
//	t, err := report.Table(prof, report.TableOptions{By: "type", Confidence: 0.95})
//	if err != nil {
//		return err
//	}
//	for _, row := range t.Rows {
//		fmt.Printf("%s: %d bytes, truly in [%.0f, %.0f]\n", row.Key, row.Bytes, row.Lo, row.Hi)
//	}
//
// What it reads:
//
//   - [Parse] reads a profile within bounds on its size and on the memory
//     decoding takes, so a hostile file cannot exhaust memory.
//   - [Table] groups one profile ([TableOptions.By] names the groupings) and
//     bounds every group's true bytes; [Diff] compares two profiles group
//     by group, with an interval on each ratio.
//   - [Merge] adds profiles up (several pods, several windows).
//   - [Holdings] and [DiffHoldings] read the live-arenas profile
//     (export.BuildArenas): arenas held, bytes reserved and used per
//     allocation site. It holds exact counts, not samples: no intervals.
//
// When it reads a profile, Table (and Diff) picks the model its samples
// follow, once: arenaprof's per-byte sampling, the Go runtime's heap
// sampling, or both side by side in a combined memory profile
// (export.BuildMemory). A profile of anything else (CPU, goroutines) or a
// live-arenas profile gets an error that says so.
//
// Words used below: a sample event is one sampled object; its tail is
// size - offset, the bytes from its sampled byte to the end of the
// object. Profiles carry per sample the count of events (alloc_samples)
// and the sum of their tails (alloc_tail); both add up under merging and
// subtraction, which is why any group of samples gets an exact interval.
//
// # Intervals
//
// A group's interval comes from its raw sums (alloc_samples and alloc_tail
// per sampling_mean), exact per mean and combined over means, at the
// window the profile is marked with: the comment "arenaprof window=W", W one of aligned,
// start, end or both ([TableResult].Window), telling whether the
// window's start and end fall on sample events (a start between events
// lowers the lower bound as if one event fewer had been seen, an end
// between events raises the upper bound as if one more had; a profile
// without the comment is read as "both"). The profile lists every sampling mean in
// force during its window (comments "arenaprof means=..." and, for in-use
// values, "arenaprof inuse_means=..."); a group gets, for each listed mean
// under which it drew no event, zero events under that mean, whose upper
// bound allows for bytes allocated under it unseen. A group with no
// sample at all has no row: [TableResult].UnseenHi bounds it. In-use
// intervals are conservative: the profile does not record the tail of
// in-use events, so the interval covers every tail those events could
// have had.
//
// # The Go heap
//
// [Table] also reads the Go runtime's heap and allocs profiles and the Go
// heap samples of a combined memory profile (label memory=heap, see
// export.BuildMemory). The runtime samples an allocation of S bytes with
// probability p(S) = 1-exp(-S/R), R = runtime.MemProfileRate, and writes
// each record's raw counts scaled by 1/p(S); the raw count c of a sample is
// recovered from its values. runtime/pprof writes one record per (stack,
// object size), so a group is a sum of size strata, each a binomial count
// at its own probability; the interval combines the strata with a gamma
// interval for weighted sums of counts (Fay and Feuer), which charges no
// size at another's weight and needs no split of alpha, with an allowance
// of one event at weight R that also covers sizes never sampled. Rows are
// shown only when they hold a sample, so both bounds are conditional on at
// least one; the lower bound is never below the bytes of the sampled
// objects, which is the lower bound of a row with one sample. The interval
// is conservative, not exact: the runtime does not record where in an
// object its sampling fired. ACCURACY.md states every assumption (size
// classes, tiny allocations, rate changes) and the measured coverage on the
// Go compiler's own profiles.
//
// # The Go heap sampler
//
// Since Go 1.24 the runtime samples the first allocation after each sample
// as if it were one byte shorter (the "go1.24" rule, internal/goheap.Rule),
// and runtime/pprof's scaling ignores it: its values, and go tool pprof's
// totals, are about one byte per sample low (0.11% of a total at
// MemProfileRate 512). Table weighs each sampled object of S bytes by
// w'(S) = S + e^(1/R)·(w(S)-S), w(S) = S/p(S), which is exactly unbiased for
// objects allocated in runs of one size, so Go heap rows read slightly
// above runtime/pprof's values. Which rule applies comes from the
// profile's comment "arenaprof go=VERSION" (written by every profile
// arenaprof builds), else from TableOptions.GoVersion, else Go 1.24's; the
// result says which (TableResult.HeapSampler, HeapGoVersion). The lost
// byte lands on whatever is allocated next, so the total row's interval
// is widened to hold for any order of allocations (by at most a byte per
// sample); a group whose objects always follow a sampled one can still
// read up to 1/S low (12% for 8-byte objects), which TableOptions.AnyOrder
// covers at the cost of wider intervals.
//
// # Comparing profiles
//
// [Diff] compares two profiles group by group (type, function, stack or
// label): both estimates, the ratio new/base with an interval holding with
// probability at least C, and the difference. The interval inverts the
// conditional test for two counts (given their sum, one is binomial),
// extended to groups that mix object sizes and sampling means by a gamma
// interval for the ratio of weighted sums; its null hypothesis is that the
// group's true bytes are equal in both profiles. It measures sampling
// error only: a program that allocates differently from run to run
// differs by more. Tests comparing two versions of code in-process can
// assert that no group's RatioLo exceeds a bound.
package report
