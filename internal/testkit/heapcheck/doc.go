// Package heapcheck holds the tests of package report's Go heap model
// against the real runtime: they set runtime.MemProfileRate, allocate known
// bytes at known call sites and read the runtime's own allocs profile back.
// They live apart because the rate they set applies to the whole test
// binary.
package heapcheck
