// Package hookstest holds a consumer of sampled allocations for tests and
// benchmarks: a plain function as a [hooks.Consumer].
package hookstest

import "github.com/arenaprof/arenaprof/hooks"

// Func is a [hooks.Consumer] that calls the function for each sampled
// allocation and ignores releases.
type Func func(*hooks.Event)

// Sampled calls f(e).
func (f Func) Sampled(e *hooks.Event) { f(e) }

// Released does nothing.
func (Func) Released(uint64) {}
