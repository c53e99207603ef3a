//go:build !goexperiment.arenas

package bench

import "testing"

// goArena is nil without GOEXPERIMENT=arenas: the experimental arena
// package is not in the standard library then.
func goArena(string) func(b *testing.B) { return nil }
