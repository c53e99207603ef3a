// Package workload describes synthetic allocation workloads as streams of
// (type, size) allocations, deterministic given a seed.
//
// The accuracy study (tools/accuracy) feeds the same streams to several
// sampling schemes and compares their estimates with the exact per-type
// totals; example programs replay them against real arenas.
//
// Every workload has exact per-type byte totals that do not depend on the
// seed: random sizes and counts are drawn in antithetic pairs (x and
// lo+hi-x, the second at a random later moment), so the randomness only
// moves bytes around inside the stream.
//
// Usage:
//
//	w := workload.Requests()
//	var got = make([]int64, len(w.Types))
//	for a := range w.Stream(42) {
//		got[a.Type] += a.Size // allocate w.Types[a.Type].Name of a.Size bytes
//	}
//	// got equals w.Totals for every seed.
package workload
