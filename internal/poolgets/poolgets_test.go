package poolgets

import (
	"sync"
	"testing"
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
