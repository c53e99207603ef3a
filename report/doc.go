// Package report is the read side of arenaprof: it reads pprof profiles
// written by package export (files, handler responses, merged or delta
// profiles), groups their samples by Go type, leaf function, stack or label,
// and gives each group an estimate with an exact confidence interval
// computed from the profile's raw sums. It also compares two profiles group
// by group.
//
// Usage:
//
//	f, err := os.Open("arena.pb.gz")
//	if err != nil {
//		return err
//	}
//	defer f.Close()
//	prof, err := report.Parse(f, 0) // 0: the default size bound
//	if err != nil {
//		return err
//	}
//	by, _ := report.ParseGroupBy("type")
//	t, err := report.Table(prof, report.TableOptions{By: by, Confidence: 0.95})
//	if err != nil {
//		return err
//	}
//	for _, row := range t.Rows {
//		fmt.Printf("%s: %.0f bytes in [%.0f, %.0f]\n", row.Key, float64(row.Bytes), row.Lo, row.Hi)
//	}
//
// The statistics ([Table], [Diff]) are apart from the formatting
// ([FormatTable]), which lays a table out for a terminal.
//
// # Intervals
//
// A group's interval comes from its raw sums (alloc_samples and alloc_tail
// per sampling_mean) with profiler.GroupInterval, at the window the profile
// is marked with ([WindowOf]). In-use intervals are conservative: the
// profile does not record the tail of in-use events, so the interval covers
// every tail those events could have had.
//
// # Comparing profiles
//
// [Diff] compares two profiles group by group (type, function, stack or
// label): both estimates, the ratio new/base with an interval holding with
// probability at least C, and the difference. The interval combines the
// two profiles' exact per-group intervals, each at confidence sqrt(C);
// since the profiles are sampled independently it is conservative for any
// sampling means, windows and sample type. Tests comparing two versions
// of code in-process can assert that no group's RatioLo exceeds a bound.
package report
