// Package memtest measures what code allocates, for tests that bound it.
package memtest

import "runtime/metrics"

// AllocDuring returns the bytes allocated on the heap while f runs, by
// every goroutine (test servers included). It reads runtime/metrics,
// which does not stop the world as runtime.ReadMemStats does (that makes
// fuzzing a thousand times slower).
func AllocDuring(f func()) uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	before := s[0].Value.Uint64()
	f()
	metrics.Read(s)
	return s[0].Value.Uint64() - before
}
