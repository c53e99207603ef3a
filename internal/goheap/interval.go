package goheap

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mathext"
)

// Stratum is the sampled objects of one size in a group of Go heap
// samples: runtime/pprof writes one record per (stack, size), so a group
// is a sum of strata, one per object size.
type Stratum struct {
	Size  int64 // bytes per object (the numeric label "bytes")
	Count int64 // raw number of sampled objects of that size
}

// The interval of a group's true bytes B = sum over sizes S of N_S*S.
//
// Each allocation of S bytes is sampled independently with probability
// p(S) = 1-exp(-S/R), so the raw count c_S of a size is Binomial(N_S, p(S))
// and the estimate Y = sum c_S*w(S), w(S) = S/p(S), is unbiased with
// variance sum N_S*p*(1-p)*w^2, estimated without bias by
//
//	V = sum c_S * w(S)*(w(S)-S)      (w*(1-p) = w-S).
//
// The dispersion w(S)-S = S/(exp(S/R)-1) of a sampled object falls from R
// (small objects: the count is Poisson(B/R), the number of points of the
// runtime's Poisson process in the bytes) to 0 (objects far above R are
// sampled surely, their bytes are certain). No size class is charged at
// another's weight.
//
// The interval is Fay and Feuer's gamma interval for a weighted sum of
// Poisson counts (Statistics in Medicine 16, 1997), with the binomial
// variance above, and a continuity allowance of one more event of the
// largest dispersion, R:
//
//	lower: the alpha/2 quantile of Gamma(shape Y^2/V, scale V/Y);
//	upper: the 1-alpha/2 quantile of Gamma(shape (Y+R)^2/(V+R^2),
//	       scale (V+R^2)/(Y+R)).
//
// With all objects small (w = R) this is exactly Garwood's interval for a
// Poisson count, R*[lambdaLo(C), lambdaHi(C)]. The allowance also covers
// the sizes never sampled: A bytes of objects of any sizes are all missed
// with probability exp(-A/R), the law of a count of zero at weight R. It
// needs no split of alpha across strata, however many size classes a
// group spans.
//
// Rows are shown only when they hold at least one sample, so both bounds
// are conditional on C >= 1 (a zero-truncated count): the tail
// probabilities are divided by P(C >= 1) = 1-exp(-mu), mu the expected
// number of sampled objects, for which the bound uses the value least
// favourable to coverage (mu = B/R for the upper bound, B/w of the largest
// sampled size for the lower). A group with one sampled object has no
// information to put a lower bound above what it holds, so its lower bound
// is the bytes of the sampled objects themselves; no lower bound is ever
// below those bytes, which are certain.

// Bounds says what an interval must hold for.
type Bounds uint8

const (
	// Group bounds a group's bytes as its own allocations were sampled:
	// under Short, objects of one size allocated in runs (the weights w'
	// are exact for a run of one size, whatever came before it, up to one
	// byte at its start).
	Group Bounds = iota
	// Total bounds the total of a profile for any order of allocations:
	// under Short, each sample takes at most one byte off the chance of
	// the next allocation, wherever it lands, so the bias of the total is
	// bounded by the samples' count (see totalShift).
	Total
	// AnyOrder bounds a group for any order of the process's allocations:
	// under Short, each sampled object may have been sampled right after
	// another sample (weight S/(1-exp(-(S-1)/R))) or never (weight w(S)),
	// and the bounds take the least favourable of each.
	AnyOrder
)

// weights gives each object size its weight and dispersion.
type weights struct {
	weight, disp func(size int64) float64
	allowance    float64 // the weight of the extra event of the upper bound
}

// weightsOf returns the weights of rule at rate: the rule's own, or for
// AnyOrder under Short the smallest (lower bound) or largest (upper).
func weightsOf(rule Rule, rate int64, b Bounds, upper bool) weights {
	if rule == Short && b == AnyOrder {
		if !upper {
			return weightsOf(Exact, rate, Group, upper)
		}
		return weights{
			weight:    func(s int64) float64 { return afterWeight(s, rate) },
			disp:      func(s int64) float64 { return afterWeight(s, rate) - float64(s) },
			allowance: afterWeight(8, rate), // the runtime's smallest slot
		}
	}
	return weights{
		weight:    func(s int64) float64 { return rule.Weight(s, rate) },
		disp:      func(s int64) float64 { return rule.dispersion(s, rate) },
		allowance: rule.tinyWeight(rate),
	}
}

// Interval returns bounds on the true bytes of a group of Go heap samples
// drawn at rate R = runtime.MemProfileRate under rule, at confidence conf,
// given as strata by object size (see above), holding as b says. Strata
// with the same size may repeat. With R = 1 every allocation was recorded
// and the bounds are the exact bytes. A group without samples gets
// [0, R*ln(2/alpha)]: not conditional, since such a group is shown only as
// the total of an empty profile.
func Interval(strata []Stratum, rate int64, rule Rule, b Bounds, conf float64) (lo, hi float64, err error) {
	if !(conf > 0 && conf < 1) {
		return 0, 0, fmt.Errorf("confidence %v is not strictly between 0 and 1", conf)
	}
	if rate < 1 {
		return 0, 0, fmt.Errorf("MemProfileRate %d samples nothing", rate)
	}
	if rule > Exact || b > AnyOrder {
		return 0, 0, fmt.Errorf("unknown sampler rule %d or bounds %d", rule, b)
	}
	for _, st := range strata {
		if st.Count < 0 || st.Size < 0 || (st.Count > 0 && st.Size == 0) {
			return 0, 0, fmt.Errorf("a stratum of %d objects of %d bytes", st.Count, st.Size)
		}
	}
	lo, _, err = interval(strata, rate, weightsOf(rule, rate, b, false), conf)
	if err != nil {
		return 0, 0, err
	}
	_, hi, err = interval(strata, rate, weightsOf(rule, rate, b, true), conf)
	if err != nil {
		return 0, 0, err
	}
	if b == Total && rule == Short && rate > 1 {
		down, up := totalShift(strata, rate)
		certain := sampledBytes(strata)
		lo, hi = max(certain, lo-down), hi+up
	}
	return lo, max(hi, lo), nil
}

// totalShift returns how far the total of a profile sampled under Short
// may be from the interval of its estimate, for any order of
// allocations: the estimate's expectation is at most down above the true
// bytes and at most up below them. With ε(S) = (e^(1/R)-1)·(w(S)-S) <=
// εmax = (e^(1/R)-1)·R, the weights w' = w+ε make the estimate's bias
// E[Σ I_i·ε(S_i)] - E[Σ I_(i-1)·ε(S_i)] over the allocations i in order
// (I_i: allocation i sampled), so
//
//	down = Σ c_S·ε(S)                    (no sample followed by anything)
//	up   = Σ c_S·(εmax - ε(S)) + 256·εmax (every sample followed by a tiny
//	                                     allocation; each P's counter
//	                                     carries one sample into the
//	                                     window, up to 256 Ps)
//
// Both are about one byte per sample at most.
func totalShift(strata []Stratum, rate int64) (down, up float64) {
	if rate <= 1 {
		return 0, 0
	}
	em := extraMax(rate)
	for _, st := range strata {
		if st.Count <= 0 || st.Size <= 0 {
			continue
		}
		e := extra(st.Size, rate)
		down += float64(st.Count) * e
		up += float64(st.Count) * (em - e)
	}
	return down, up + maxPs*em
}

// maxPs is the number of Ps (each with its own sample counter) whose
// sample before a window may take a byte off its first allocation.
const maxPs = 256

// sampledBytes returns the bytes of the sampled objects, which are certain.
func sampledBytes(strata []Stratum) (certain float64) {
	for _, st := range strata {
		if st.Count > 0 {
			certain += float64(st.Count) * float64(st.Size)
		}
	}
	return certain
}

// interval is the gamma interval of the strata under the weights w.
func interval(strata []Stratum, rate int64, w weights, conf float64) (lo, hi float64, err error) {
	var count int64
	var certain, y, v, wMax float64
	for _, st := range strata {
		if st.Count == 0 {
			continue
		}
		count += st.Count
		if count < 0 {
			return 0, 0, errors.New("sample counts overflow int64")
		}
		c, s := float64(st.Count), float64(st.Size)
		ws := w.weight(st.Size)
		certain += c * s
		y += c * ws
		v += c * ws * w.disp(st.Size)
		wMax = max(wMax, ws)
	}
	if rate == 1 {
		return certain, certain, nil
	}
	r := w.allowance
	a2 := (1 - conf) / 2
	if count == 0 {
		return 0, r * math.Log(1/a2), nil
	}
	lo = certain
	if count > 1 && v > 0 {
		l, err := gammaLower(y*y/v, v/y, a2, v/y/wMax)
		if err != nil {
			return 0, 0, err
		}
		lo = max(lo, l)
	}
	a, spent := missAllowance(strata, w, r, a2)
	yu, vu := y+a, v+a*a
	hi, err = gammaUpper(yu*yu/vu, vu/yu, a2-spent, vu/yu/r)
	if err != nil {
		return 0, 0, err
	}
	return lo, max(hi, lo), nil
}

// missAllowance returns the weight of the extra event of the upper bound,
// and the part of the tail probability a2 it leaves to the gamma bound.
//
// Objects far above R are sampled almost surely, so their stratum's
// variance is tiny, but the one object it may have missed is worth S, not
// R: for 100 objects of 40 KiB at R = 4096 one is missed with probability
// 100·e^-10 = 0.45%, 15 standard deviations of the gamma's view. Strata
// of objects above r, largest first, may be left to chance while their
// expected misses μ_S = c_S·(w(S)-S)/S add up to at most a2/2 (that much of
// the tail probability is spent on them); the first that does not fit sets
// the allowance to its size S, which a miss of it (or of any smaller
// object) costs.
func missAllowance(strata []Stratum, w weights, r, a2 float64) (allowance, spent float64) {
	big := make([]Stratum, 0, len(strata))
	for _, st := range strata {
		if st.Count > 0 && float64(st.Size) > r {
			big = append(big, st)
		}
	}
	slices.SortFunc(big, func(x, y Stratum) int { return cmp.Compare(y.Size, x.Size) })
	for _, st := range big {
		mu := float64(st.Count) * w.disp(st.Size) / float64(st.Size)
		if spent+mu > a2/2 {
			return float64(st.Size), spent
		}
		spent += mu
	}
	return r, spent
}

// dispersion is w(S)-S = S/(exp(S/R)-1): the variance of a sampled
// object's weight per unit of weight, from R for tiny objects to 0.
func dispersion(size, rate int64) float64 {
	x := float64(size) / float64(rate)
	if x > 700 {
		return 0
	}
	return float64(size) / math.Expm1(x)
}

// Strata returns counts by size, sizes ascending, strata of one size
// merged.
func Strata(counts map[int64]int64) []Stratum {
	out := make([]Stratum, 0, len(counts))
	for s, c := range counts {
		out = append(out, Stratum{Size: s, Count: c})
	}
	slices.SortFunc(out, func(a, b Stratum) int { return cmp.Compare(a.Size, b.Size) })
	return out
}

// truncNegligible is the probability of no sample below which the
// zero-truncation is not worth computing: it moves a tail probability by
// less than one part in 1e12.
const truncNegligible = 1e-13

// gammaLower returns scale*lambda with lambda the root of
//
//	P(Gamma(shape) <= lambda) = a * (1-exp(-lambda*k)),
//
// the lower bound conditional on at least one sample (k = scale divided by
// the weight at which a count is least likely to be zero).
func gammaLower(shape, scale, a, k float64) (float64, error) {
	l0 := mathext.GammaIncRegInv(shape, a)
	if math.IsNaN(l0) || math.IsInf(l0, 0) {
		return 0, fmt.Errorf("gamma lower bound (shape %g) did not converge", shape)
	}
	if math.Exp(-l0*k) < truncNegligible {
		return scale * l0, nil
	}
	f := func(l float64) float64 { return mathext.GammaIncReg(shape, l) + a*math.Expm1(-l*k) }
	// f(0) = 0, f < 0 just above 0 (shape > 1), f(l0) >= 0.
	lo, _ := bisect(f, 0, l0)
	return scale * lo, nil
}

// gammaUpper returns scale*lambda with lambda the root of
//
//	P(Gamma(shape) > lambda) - exp(-lambda*k) = a * (1-exp(-lambda*k)),
//
// the upper bound conditional on at least one sample.
func gammaUpper(shape, scale, a, k float64) (float64, error) {
	l0 := mathext.GammaIncRegCompInv(shape, a)
	if math.IsNaN(l0) || math.IsInf(l0, 0) {
		return 0, fmt.Errorf("gamma upper bound (shape %g) did not converge", shape)
	}
	if math.Exp(-l0*k) < truncNegligible {
		return scale * l0, nil
	}
	f := func(l float64) float64 {
		e := math.Exp(-l * k)
		return a - mathext.GammaIncRegComp(shape, l) + e - a*e
	}
	// f < 0 just above 0 (shape >= 2), f(l0) >= 0: the root is below l0.
	lo := l0
	for i := 0; i < 200 && f(lo) >= 0; i++ {
		lo /= 2
	}
	_, hi := bisect(f, lo, l0)
	return scale * hi, nil
}

// bisect narrows [lo, hi], f(lo) < 0 <= f(hi), to adjacent floats around
// the point where f changes sign. The lower bound takes lo, the upper hi:
// the conservative side of each.
func bisect(f func(float64) float64, lo, hi float64) (float64, float64) {
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if f(mid) < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, hi
}
