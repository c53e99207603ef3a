//go:build cgo

package main

// #include <stdlib.h>
// #include <string.h>
// static void *take(size_t n) { void *p = malloc(n); memset(p, 1, n); return p; }
import "C"

import "unsafe"

// cmalloc takes n bytes from C's malloc and writes them; the memory is
// never freed. It returns the block.
func cmalloc(n int64) []byte {
	return unsafe.Slice((*byte)(C.take(C.size_t(n))), n)
}
