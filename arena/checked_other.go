//go:build !(linux && (amd64 || arm64))

package arena

import "unsafe"

// Outside Linux on amd64 and arm64, checked mode cannot make memory inaccessible: pointer-free
// memory comes from the heap, and Reset, Put and Free fill it with 0xa5 and
// drop it instead of keeping it for reuse. A stale value then reads the
// pattern (never a later owner's data) and writes go to memory no one else
// uses, but nothing faults.

// mapChecked returns size bytes of zeroed heap memory.
func mapChecked(size uintptr) unsafe.Pointer {
	return unsafe.Pointer(unsafe.SliceData(make([]uint64, size/8)))
}

// retire fills a region with 0xa5 and drops it.
func retire(s span, how string, made, pcs []uintptr) {
	fill(unsafe.Slice((*byte)(s.base), s.size), 0xa5)
}
