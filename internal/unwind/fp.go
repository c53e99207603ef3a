//go:build amd64 || arm64

package unwind

import "unsafe"

// getfp returns the frame pointer of its caller: the address of the word
// holding the caller's caller's frame pointer, one word below the caller's
// return address. Implemented in fp_$GOARCH.s.
func getfp() unsafe.Pointer
