package goheap

import (
	"fmt"
	"go/version"
	"math"
	"strings"
)

// Rule is how the runtime that wrote a Go heap profile counts down to its
// next sample. The runtime sets a byte counter to a draw from an
// exponential of mean R = runtime.MemProfileRate and takes it down by the
// size of each allocation; which allocation is sampled depends on how the
// counter is set and tested, and so does the weight that makes a sampled
// object's bytes an unbiased estimate.
type Rule uint8

const (
	// Short is the rule of Go 1.24 and later (runtime/malloc.go:
	// "c.nextSample -= size; if c.nextSample < 0 { profilealloc }", with
	// nextSample = int32(E)+1): the counter starts one byte above the
	// exponential draw and the test is strict, so the first allocation
	// after a sample is sampled with probability 1-exp(-(S-1)/R) instead of
	// 1-exp(-S/R). Later allocations see a memoryless remainder and are
	// sampled exactly. runtime/pprof scales every sample by 1/(1-exp(-S/R))
	// all the same, so its values, and go tool pprof's totals, fall short
	// by about one byte per sample: 1/R of the bytes of small objects.
	// Short is the zero Rule: every supported Go release has it.
	Short Rule = iota
	// Exact is the rule of Go 1.23 and earlier ("if size < c.nextSample {
	// c.nextSample -= size } else { profilealloc }"): every allocation is
	// sampled with probability 1-exp(-S/R) whatever came before it.
	Exact
)

// String names the rule by the first Go release that has it.
func (r Rule) String() string {
	if r == Exact {
		return "go1.23"
	}
	return "go1.24"
}

// RuleOf returns the rule of the runtime of Go release v, as
// runtime.Version() spells it ("go1.26.8", "go1.24rc1", "devel go1.27-abc
// ..."); the language version alone ("go1.23") is accepted too.
func RuleOf(v string) (Rule, error) {
	w := strings.TrimPrefix(strings.TrimSpace(v), "devel ")
	if i := strings.IndexAny(w, " -+"); i >= 0 {
		w = w[:i]
	}
	if !version.IsValid(w) {
		return Short, fmt.Errorf("%q is not a Go release (want e.g. go1.23 or go1.26.8)", v)
	}
	if version.Compare(version.Lang(w), "go1.24") < 0 {
		return Exact, nil
	}
	return Short, nil
}

// Weight returns the bytes a sampled object of size bytes stands for under
// rule r at rate: w(S) = S/(1-exp(-S/R)) under Exact, and under Short, for
// a run of objects of one size, w'(S) = S + e^(1/R)·(w(S)-S), exactly
// unbiased (ACCURACY.md, "The Go heap", derives it). At rate 1 every
// allocation is recorded and the weight is the size.
func (r Rule) Weight(size, rate int64) float64 {
	if rate <= 1 {
		return float64(size)
	}
	return float64(size) + r.dispersion(size, rate)
}

// dispersion is w-S under rule r: a sampled object's weight beyond its own
// bytes, the variance of its weight per unit of weight. Under Exact it
// falls from R for tiny objects to 0; Short multiplies it by e^(1/R).
func (r Rule) dispersion(size, rate int64) float64 {
	d := dispersion(size, rate)
	if r == Short {
		d *= math.Exp(1 / float64(rate))
	}
	return d
}

// tinyWeight is the limit of the weight for tiny objects: R under Exact,
// R·e^(1/R) under Short.
func (r Rule) tinyWeight(rate int64) float64 {
	if r == Short {
		return float64(rate) * math.Exp(1/float64(rate))
	}
	return float64(rate)
}

// extra is the weight Short adds to a sampled object of size bytes over
// Exact's (and over runtime/pprof's scaling): (e^(1/R)-1)·(w(S)-S), at
// most about one byte.
func extra(size, rate int64) float64 {
	return math.Expm1(1/float64(rate)) * dispersion(size, rate)
}

// extraMax bounds extra for every size: its limit for tiny objects,
// (e^(1/R)-1)·R.
func extraMax(rate int64) float64 {
	return math.Expm1(1/float64(rate)) * float64(rate)
}

// Extra returns what Short adds to runtime/pprof's scaled bytes for count
// sampled objects of size bytes at rate: count·(e^(1/R)-1)·(w(S)-S). Under
// Exact, and at rate 1, it is 0.
func (r Rule) Extra(count, size, rate int64) float64 {
	if r != Short || rate <= 1 || count <= 0 || size <= 0 {
		return 0
	}
	return float64(count) * extra(size, rate)
}

// afterWeight is the weight of an object of size bytes allocated right
// after a sample under Short, S/(1-exp(-(S-1)/R)): the largest weight any
// order of allocations can give it. Sizes below 2 (which the runtime never
// records: its smallest slot is 8 bytes) are taken as 2, which keeps it
// finite.
func afterWeight(size, rate int64) float64 {
	s := float64(max(size, 2))
	return s / -math.Expm1(-(s-1)/float64(rate))
}
