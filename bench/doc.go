// Package bench compares the arena package of arenaprof with other Go
// arenas: github.com/ortuman/nuke, and Go's experimental arena package
// (built only with GOEXPERIMENT=arenas). It is a module of its own, so that
// users of arenaprof never depend on them.
//
// Run the comparison, side by side, with
//
//	cd bench
//	GOEXPERIMENT=arenas go test -run '^$' -bench . -count 10 | tee bench.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl bench.txt
//
// Without GOEXPERIMENT=arenas the experimental arena's benchmarks are left
// out. The objects are the ones of the arena package's own benchmarks:
// pointer-free structs of 8, 32 and 256 bytes, a struct with a string
// field, and byte slices of 64 and 4096 bytes; every loop resets (or, for
// the experimental arena, frees and replaces) its arena every 1024
// allocations.
//
// Note that nuke carves every type out of untyped byte buffers, so a value
// whose type holds pointers is hidden from the garbage collector (nuke
// issue #14); the benchmarks only allocate such values and never store
// pointers in them.
package bench
