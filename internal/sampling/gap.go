// Package sampling draws arenaprof's per-byte sampling trials: the gaps of
// failed trials between sampled bytes (a geometric variate per gap). Package
// arena runs one [GapSampler] per arena. It is internal: the sampling model
// and its statistics are documented in package profiler.
package sampling

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/arenaprof/arenaprof/internal/samplingstate"
)

// MaxGapFactor bounds the gaps a [GapSampler] can return: for every mean m,
// a gap is at most MaxGapFactor*m (and 0 for m = 1).
//
// Why: the uniform variate U is k/2^53 for an integer k in [1, 2^53], so
// ln(U) >= ln(2^-53) = -53 ln 2 ≈ -36.737. The gap is floor(ln(U)/ln(1-p))
// with p = 1/m, and -ln(1-p) >= p, so gap <= 53 ln 2 / p < 36.74 m.
//
// Consequence: with m <= samplingstate.MaxMeanBytes = 2^40 every gap is below
// 36.74 * 2^40 < 2^46. Adding a gap to any offset or length below 2^62
// therefore stays below 2^63 and cannot overflow an int64; on 64-bit
// platforms user-space addresses are below 2^57, so address + gap cannot
// overflow a uintptr either. (The arena never forms address + gap: it
// compares the gap with the room left in the chunk, see package arena.)
const MaxGapFactor = 36.74

// MaxGap returns the largest gap a sampler with the given mean can return
// (0 for mean <= 1, where no gap is ever above 0). It is computed with the
// very floating-point operations [GapSampler.Next] uses, at the smallest
// uniform variate 2^-53; since ln is monotone and the factor 1/ln(1-p) is a
// negative constant, no draw can exceed it.
func MaxGap(mean int64) int64 {
	if mean <= 1 {
		return 0
	}
	if mean > samplingstate.MaxMeanBytes {
		mean = samplingstate.MaxMeanBytes
	}
	return gapFromUniform(0x1p-53, 1/math.Log1p(-1/float64(mean)))
}

// gapFromUniform is the inverse transform: floor(ln(u) * invLogQ) for u in
// (0, 1] and invLogQ = 1/ln(1-p) < 0. The product is >= 0, so the
// conversion truncates toward zero, which is floor.
func gapFromUniform(u, invLogQ float64) int64 {
	return int64(math.Log(u) * invLogQ)
}

// GapSampler draws the number of failed per-byte trials before the next
// successful one: a geometric variate with p = 1/mean, by inverse transform
// sampling, floor(ln(U)/ln(1-p)) with U uniform on (0, 1].
//
// Each sampler owns its own generator (math/rand/v2 PCG), so streams never
// share state. A GapSampler is not safe for concurrent use. The zero value
// is a disabled sampler; use [NewGapSampler] or [NewGapSamplerSeeded].
type GapSampler struct {
	src     rand.PCG
	mean    int64
	invLogQ float64 // 1/ln(1-p); negative; 0 when mean <= 1
}

// NewGapSampler returns a sampler with the given mean, seeded from the
// process's random source, so that every sampler draws a different stream.
func NewGapSampler(mean int64) (*GapSampler, error) {
	return NewGapSamplerSeeded(mean, rand.Uint64(), rand.Uint64())
}

// NewGapSamplerSeeded returns a sampler with a fixed seed, for tests and
// reproducible simulations.
func NewGapSamplerSeeded(mean int64, seed1, seed2 uint64) (*GapSampler, error) {
	g := &GapSampler{}
	g.Seed(seed1, seed2)
	if err := g.SetMean(mean); err != nil {
		return nil, err
	}
	return g, nil
}

// Seed resets the generator.
func (g *GapSampler) Seed(seed1, seed2 uint64) { g.src.Seed(seed1, seed2) }

// SetMean changes the mean. A mean <= 0 disables the sampler; a mean above
// [samplingstate.MaxMeanBytes] is an error and leaves the sampler unchanged.
func (g *GapSampler) SetMean(mean int64) error {
	if mean > samplingstate.MaxMeanBytes {
		return fmt.Errorf("profiler: mean %d bytes is above the maximum %d", mean, int64(samplingstate.MaxMeanBytes))
	}
	if mean < 0 {
		mean = 0
	}
	g.mean = mean
	g.invLogQ = 0
	if mean > 1 {
		g.invLogQ = 1 / math.Log1p(-1/float64(mean))
	}
	return nil
}

// Mean returns the mean in effect; 0 means disabled.
func (g *GapSampler) Mean() int64 { return g.mean }

// Enabled reports whether the sampler draws gaps.
func (g *GapSampler) Enabled() bool { return g.mean > 0 }

// Uniform returns a uniform variate on (0, 1]: k/2^53 for k in [1, 2^53].
func (g *GapSampler) Uniform() float64 {
	return float64(g.src.Uint64()>>11+1) * 0x1p-53
}

// Next returns the number of failed trials before the next success, in
// [0, MaxGap(mean)]. Mean 1 always gives 0. It returns -1 when the sampler
// is disabled.
func (g *GapSampler) Next() int64 {
	switch {
	case g.mean > 1:
		return gapFromUniform(g.Uniform(), g.invLogQ)
	case g.mean == 1:
		return 0
	}
	return -1
}
