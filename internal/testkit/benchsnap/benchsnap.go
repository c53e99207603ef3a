// Package benchsnap builds the profiler snapshots that benchmarks of the
// write side share: many buckets over real stacks, as a profiler holding
// them would give.
package benchsnap

import (
	"runtime"
	"time"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
	"github.com/arenaprof/arenaprof/internal/unwind"
	"github.com/arenaprof/arenaprof/profiler"
)

//go:noinline
func stackA(depth int, bits uint, out *[][]uintptr) {
	stackStep(depth, bits, out)
}

//go:noinline
func stackB(depth int, bits uint, out *[][]uintptr) {
	stackStep(depth, bits, out)
}

func stackStep(depth int, bits uint, out *[][]uintptr) {
	if depth == 0 {
		pcs := make([]uintptr, unwind.MaxStackDepth)
		*out = append(*out, pcs[:runtime.Callers(1, pcs)])
		return
	}
	if bits&1 == 0 {
		stackA(depth-1, bits>>1, out)
	} else {
		stackB(depth-1, bits>>1, out)
	}
}

// Stacks returns n distinct real stacks: depth levels of two functions
// (the bits of the stack's index choose which), plus the caller's.
func Stacks(n, depth int) [][]uintptr {
	var stacks [][]uintptr
	for i := range uint(n) {
		stackStep(depth, i, &stacks)
	}
	return stacks
}

// Snapshot returns a snapshot of stacks*100 records: stacks distinct real
// stacks (depth levels of two functions, plus the caller's) times 100
// object sizes, with two label sets. Snapshot(100, 7) is 10,000 buckets,
// Snapshot(1000, 10) 100,000.
func Snapshot(nstacks int, depth int) *profiler.Snapshot {
	stacks := Stacks(nstacks, depth)
	recs := make([]profiler.Record, 0, 100*nstacks)
	labelSets := []hooks.Labels{hooks.NewLabels("handler", "/api/v1/users"), hooks.NewLabels("handler", "/api/v1/orders")}
	for i, st := range stacks {
		labels := labelSets[i%2]
		for size := int64(8); size <= 800; size += 8 {
			w, _ := estimate.WeightedBytes(size, samplingstate.DefaultMeanBytes)
			recs = append(recs, profiler.Record{
				Stack: st, TypeName: "main.user", Labels: labels, Size: size, MeanBytes: samplingstate.DefaultMeanBytes,
				AllocSamples: 3, AllocTail: 3 * size, AllocBytes: 3 * w, AllocObjects: 3 * w / float64(size),
				InuseSamples: 1, InuseBytes: w, InuseObjects: w / float64(size),
			})
		}
	}
	now := time.Now()
	return &profiler.Snapshot{Start: now.Add(-time.Minute), End: now, MeanBytes: samplingstate.DefaultMeanBytes,
		Window: estimate.WindowEnd, Records: recs}
}
