// Package unwind captures the allocating goroutine's stack for a sample
// event: [FastStack] and [FastCallers] walk the frame-pointer chain and
// expand inlined frames through a cache, so that a stack costs a fraction
// of [runtime.Callers]; [Callers] is the portable walk. Package arena and
// the test allocators call it; other allocators use runtime.Callers.
package unwind
