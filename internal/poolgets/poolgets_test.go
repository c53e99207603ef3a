package poolgets

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/arenaprof/arenaprof/internal/cputime"
)

// Concurrent adds of many IDs all count (run with -race).
func TestTotal(t *testing.T) {
	before := Total()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 1000 {
				Add(uint64(g*1000 + i))
			}
		})
	}
	wg.Wait()
	if got := Total() - before; got != 4000 {
		t.Fatalf("Total grew by %d, want 4000", got)
	}
}

// BenchmarkAdd is what Pool.Get adds while profiling is on: one atomic
// add, from one goroutine and from all (GOMAXPROCS) at once, each on its
// own arena ID as Pool.Get's arenas are.
//
//	go test -run '^$' -bench Add -count 10 ./internal/poolgets
func BenchmarkAdd(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			Add(7)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		defer cpuPerOp(b)()
		var ids atomic.Uint64
		b.RunParallel(func(pb *testing.PB) {
			id := ids.Add(1)
			for pb.Next() {
				Add(id)
			}
		})
	})
}

// cpuPerOp reports the process's CPU time per operation (cpu-ns/op): on a
// machine shared with other work, wall time counts the waits too.
func cpuPerOp(b *testing.B) func() {
	t0 := cputime.Process()
	return func() {
		b.ReportMetric(float64(cputime.Process()-t0)/float64(b.N), "cpu-ns/op")
	}
}
