// Package sizeclass tells the bytes the Go heap takes for one allocation:
// the size class it is rounded up to, with the 8-byte header the runtime
// gives small objects that hold pointers, as runtime.roundupsize does (Go
// 1.22 on; the table is runtime's internal/runtime/gc/sizeclasses.go,
// unchanged from Go 1.22 to 1.27).
package sizeclass

// classes are the Go heap's small size classes, ascending.
var classes = [...]uint32{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

const (
	maxSmall   = 32768
	header     = 8    // the malloc header of a small object with pointers
	minHeader  = 512  // objects above this size with pointers get the header
	pageSize   = 8192 // large objects take whole runtime pages
	maxRounded = 1 << 62
)

// HeapBytes returns the bytes of heap memory an allocation of size bytes
// takes: its size class (header included) for a small object, whole 8 KiB
// pages for a large one. pointers says the object's type holds pointers.
// A size of 0 or less takes none.
func HeapBytes(size int64, pointers bool) int64 {
	if size <= 0 {
		return 0
	}
	req := size
	if pointers && req > minHeader && req <= maxSmall-header {
		req += header
	}
	if req <= maxSmall {
		lo, hi := 0, len(classes)-1
		for lo < hi {
			m := (lo + hi) / 2
			if int64(classes[m]) >= req {
				hi = m
			} else {
				lo = m + 1
			}
		}
		return int64(classes[lo])
	}
	if size > maxRounded {
		return size
	}
	return (size + pageSize - 1) &^ (pageSize - 1)
}
