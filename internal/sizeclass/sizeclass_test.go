package sizeclass

import (
	"runtime"
	"testing"
)

// TestHeapBytes checks the rounding against the runtime's own: the bytes
// /gc/heap/allocs:bytes grows by for one allocation are its size class
// (runtime.MemStats.TotalAlloc counts the same).
func TestHeapBytes(t *testing.T) {
	for _, c := range []struct {
		size     int64
		pointers bool
		want     int64
	}{
		{0, false, 0}, {1, false, 8}, {8, false, 8}, {9, false, 16}, {33, false, 48},
		{512, true, 512}, {513, false, 576}, {513, true, 576}, {568, true, 576}, {569, true, 640},
		{32768, false, 32768}, {32761, true, 32768}, {32769, false, 40960},
		{65544, false, 73728}, // a 64 KiB arena chunk and its 8 bytes of slack: 72 KiB
	} {
		if got := HeapBytes(c.size, c.pointers); got != c.want {
			t.Errorf("HeapBytes(%d, %v) = %d, want %d", c.size, c.pointers, got, c.want)
		}
	}
}

var sink []byte

// TestAgainstRuntime measures the heap bytes of real allocations of many
// sizes (noscan) with runtime.MemStats.
func TestAgainstRuntime(t *testing.T) {
	var a, b runtime.MemStats
	for _, size := range []int64{17, 100, 1000, 5000, 20000, 32768, 40000, 65544, 200000} {
		runtime.ReadMemStats(&a)
		sink = make([]byte, size)
		runtime.ReadMemStats(&b)
		if got, want := HeapBytes(size, false), int64(b.TotalAlloc-a.TotalAlloc); got != want {
			t.Errorf("HeapBytes(%d) = %d, the runtime took %d", size, got, want)
		}
	}
}
