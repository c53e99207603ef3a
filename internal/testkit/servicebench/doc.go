// Package servicebench holds a benchmark of a request handler, the kind of
// code arenas are for, written once and run on an [arena.Pool] and on the
// Go heap. Its benchmarks report CPU per request, heap bytes per request
// and GC cycles per 1000 requests, with the arena profiler off and on;
// BENCHMARKS.md publishes their ratios. The package has no API.
package servicebench
