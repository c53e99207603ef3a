// Package negbin evaluates the negative binomial distribution's CDF and
// quantiles exactly, for arenaprof's confidence intervals (package
// profiler). It is internal: users get intervals from package profiler.
package negbin

import (
	"fmt"
	"math"
)

// The negative binomial distribution NB(s, p) counts the failed trials
// before the s-th success in a sequence of independent Bernoulli trials with
// success probability p. Its CDF is the regularized incomplete beta
// function:
//
//	P(X <= k) = I_p(s, k+1) = P(Binomial(s+k, p) >= s).
//
// [CDF] evaluates it exactly (to about 1e-12 absolute, see the tests):
// the prefactor x^a (1-x)^b / B(a, b) is formed from Stirling-series
// remainders and e - ln(1+e) terms, so nothing cancels even when b = k+1 is
// near 1e15 (three lgamma calls would lose five digits at 1e9 and all of
// them at 1e15), and the continued fraction is the one of Didonato and
// Morris (TOMS 708), taken on the side of the mean where its terms do not
// cancel. (The textbook continued fraction evaluated by the modified Lentz
// method loses up to seven digits here: for x = p tiny and b huge, the
// complementary side has x' = 1-p close to 1, where its partial
// denominators nearly cancel.)

// nbMaxK is the largest number of failed trials the quantile search returns
// (2^53: beyond it float64 no longer represents every integer).
const nbMaxK = 1 << 53

// nbMaxSamples is the largest number of successes s accepted by the
// negative-binomial functions.
const nbMaxSamples = 1 << 40

// NegBinCDF returns P(X <= k) for X ~ NB(s, p), the number of failed trials
// before the s-th success with success probability p. It is exact to within
// about 1e-12 (the tests check 1e-9 against a math/big reference for p in
// [1e-9, 1], s up to 1e7, k up to 1e15).
//
// s = 0 is the point mass at 0 (the CDF is 1 for every k >= 0); k < 0
// gives 0. It is an error if s < 0, s > 2^40, or p is not in (0, 1].
func CDF(k, s int64, p float64) (float64, error) {
	if err := nbCheck(s, p); err != nil {
		return 0, err
	}
	return nbCDF(k, s, p), nil
}

// CDFCampPaulson returns the Camp-Paulson normal approximation of
// P(X <= k) for X ~ NB(s, p). It is much cheaper than [CDF] but not
// exact: at p = 1/102400 its largest absolute error over all k is about
// 0.012 at s = 1, 1.3e-3 at s = 5, 6e-4 at s = 10 and 6e-5 at s = 100
// (measured by TestCampPaulsonError). arenaprof's intervals never use it.
func CDFCampPaulson(k, s int64, p float64) (float64, error) {
	if err := nbCheck(s, p); err != nil {
		return 0, err
	}
	switch {
	case k < 0:
		return 0, nil
	case s == 0 || p == 1:
		return 1, nil
	}
	// P(NB(s,p) <= k) = 1 - P(Binomial(s+k, p) <= s-1), and Camp-Paulson
	// for the binomial term with n-x = k+1 and x+1 = s.
	kk, ss := float64(k), float64(s)
	a := 1 / (9 * (kk + 1))
	b := 1 / (9 * ss)
	r := ss * (1 - p) / ((kk + 1) * p)
	r3 := math.Cbrt(r)
	c := (1 - b) * r3
	z := (c - (1 - a)) / math.Sqrt(b*r3*r3+a)
	return 0.5 * math.Erfc(z/math.Sqrt2), nil
}

// Quantile returns the largest k with P(X <= k) < target for
// X ~ NB(s, p), or -1 when P(X <= 0) >= target already. This is the
// convention of the quantile table of the sampling design (reference 1 of the README):
// every row of that table is the smallest k with CDF(k) >= target, minus 1.
// The smallest k with CDF(k) >= target is therefore Quantile(...)+1.
//
// target must be in (0, 1). The search stops at 2^53 failed trials: if even
// CDF(2^53) < target, the result is 2^53.
func Quantile(target float64, s int64, p float64) (int64, error) {
	if err := nbCheck(s, p); err != nil {
		return 0, err
	}
	if !(target > 0 && target < 1) {
		return 0, fmt.Errorf("profiler: quantile target %v is not in (0, 1)", target)
	}
	k, _ := nbQuantile(target, s, p)
	return k, nil
}

func nbCheck(s int64, p float64) error {
	if s < 0 || s > nbMaxSamples {
		return fmt.Errorf("profiler: number of successes %d is outside [0, %d]", s, int64(nbMaxSamples))
	}
	if !(p > 0 && p <= 1) {
		return fmt.Errorf("profiler: success probability %v is not in (0, 1]", p)
	}
	return nil
}

// nbCDF is NegBinCDF without the checks.
func nbCDF(k, s int64, p float64) float64 {
	switch {
	case k < 0:
		return 0
	case s == 0 || p >= 1:
		return 1
	case k == 0: // all s first trials succeed
		return math.Exp(float64(s) * math.Log(p))
	case s == 1: // geometric
		return -math.Expm1(float64(k+1) * math.Log1p(-p))
	}
	v, _ := nbIncBeta(p, 1-p, float64(s), float64(k)+1)
	return v
}

// nbSF is the survival function P(X > k) = 1 - I_p(s, k+1) = I_q(k+1, s)
// with q = 1-p, evaluated directly (never as 1 - CDF).
func nbSF(k, s int64, p float64) float64 {
	switch {
	case k < 0:
		return 1
	case s == 0 || p >= 1:
		return 0
	case k == 0: // not all s first trials succeed
		return -math.Expm1(float64(s) * math.Log(p))
	case s == 1: // geometric
		return math.Exp(float64(k+1) * math.Log1p(-p))
	}
	v, _ := nbIncBeta(1-p, p, float64(k)+1, float64(s))
	return v
}

// nbQuantile searches for the largest k in [-1, 2^53] with CDF(k) < target.
// It returns k and the number of CDF evaluations.
//
// The CDF is monotone in k, so the search keeps an integer bracket
// lo < answer+1 <= hi with CDF(lo) < target <= CDF(hi), starting from a
// normal approximation, and narrows it by interpolation (Illinois variant of
// regula falsi) with a bisection step whenever interpolation stalls.
func nbQuantile(target float64, s int64, p float64) (int64, int) {
	return nbSearch(target, s, p, false)
}

// nbSurvivalQuantile searches for the largest k in [-1, 2^53] with
// P(X > k) > tail, so that k+1 is the smallest k with P(X > k) <= tail. It
// compares the survival function itself with tail, never 1-tail with the
// CDF: near 1 both 1-tail and the CDF keep only about 1e-16 absolute
// precision, which is all the precision of a tail of 1e-16 and a
// relative error of 2e-7 at tail 5e-10; the survival function keeps its
// relative precision however small it is.
func nbSurvivalQuantile(tail float64, s int64, p float64) (int64, int) {
	return nbSearch(tail, s, p, true)
}

// nbSearch is nbQuantile, or with upper set nbSurvivalQuantile: it runs the
// same search on the increasing function -SF(k) against -tail.
func nbSearch(target float64, s int64, p float64, upper bool) (int64, int) {
	if s == 0 || p >= 1 {
		return -1, 0 // the distribution is the point mass at 0
	}
	evals := 0
	cdf := func(k int64) float64 {
		evals++
		return nbCDF(k, s, p)
	}
	z := 0.0
	if upper {
		z = -nbNormalQuantile(target)
		cdf = func(k int64) float64 {
			evals++
			return -nbSF(k, s, p)
		}
		target = -target
	} else {
		z = nbNormalQuantile(target)
	}
	if cdf(0) >= target {
		return -1, evals
	}
	ss := float64(s)
	mean := ss * (1 - p) / p
	sd := math.Sqrt(ss*(1-p)) / p
	// Normal approximation with a small skewness correction, used only as a
	// starting point.
	guess := mean + sd*(z+(z*z-1)*(2-p)/(6*math.Sqrt(ss*(1-p))))
	step := math.Max(1, 0.05*sd)
	g := nbClampK(guess)
	lo, hi := int64(0), int64(-1)
	flo, fhi := 0.0, 0.0
	if fg := cdf(g); fg < target {
		lo, flo = g, fg
		for {
			next := nbClampK(float64(lo) + step)
			if next <= lo {
				return lo, evals // CDF(2^53) < target
			}
			if f := cdf(next); f >= target {
				hi, fhi = next, f
				break
			} else {
				lo, flo = next, f
			}
			step *= 4
		}
	} else {
		hi, fhi = g, fg
		for {
			next := nbClampK(float64(hi) - step)
			if next <= 0 {
				lo, flo = 0, cdf(0) // known to be < target
				break
			}
			if f := cdf(next); f < target {
				lo, flo = next, f
				break
			} else {
				hi, fhi = next, f
			}
			step *= 4
		}
	}
	// Invariant: lo < hi, CDF(lo) < target <= CDF(hi).
	side := 0
	wlo, whi := flo-target, fhi-target // Illinois-weighted function values
	for hi-lo > 1 {
		width := hi - lo
		var m int64
		if whi-wlo > 0 {
			m = lo + int64(math.Round(float64(width)*(-wlo)/(whi-wlo)))
		} else {
			m = lo + width/2
		}
		m = min(max(m, lo+1), hi-1)
		f := cdf(m)
		if f < target {
			lo, flo, wlo = m, f, f-target
			if side == -1 {
				whi /= 2
			}
			side = -1
		} else {
			hi, fhi, whi = m, f, f-target
			if side == 1 {
				wlo /= 2
			}
			side = 1
		}
		if hi-lo > width/2 && hi-lo > 1 {
			// Interpolation shrank the bracket by less than half: bisect.
			mid := lo + (hi-lo)/2
			if f := cdf(mid); f < target {
				lo, flo, wlo = mid, f, f-target
			} else {
				hi, fhi, whi = mid, f, f-target
			}
		}
	}
	_ = flo
	_ = fhi
	return lo, evals
}

func nbClampK(x float64) int64 {
	switch {
	case !(x > 0):
		return 0
	case x >= nbMaxK:
		return nbMaxK
	}
	return int64(math.Floor(x))
}

// nbNormalQuantile returns the standard normal quantile at t in (0, 1).
func nbNormalQuantile(t float64) float64 {
	return -math.Sqrt2 * math.Erfcinv(2*t)
}

// nbIncBeta returns the regularized incomplete beta function I_x(a, b) for
// x in (0, 1), a, b >= 2, with y = 1-x given separately (so that 1-x is not
// rounded when x is close to 1), and the number of continued-fraction
// iterations.
//
// With lambda = a - (a+b)x: if lambda >= 0 (x at or below the mean a/(a+b)
// of the beta distribution) I_x(a,b) is the prefactor times the continued
// fraction of Didonato and Morris (TOMS 708, "bfrac"), all of whose terms
// are then positive for the first b steps, so it does not cancel;
// otherwise I_x(a,b) = 1 - I_y(b,a), computed the same way.
func nbIncBeta(x, y, a, b float64) (float64, int) {
	if x <= 0 {
		return 0, 0
	}
	if y <= 0 {
		return 1, 0
	}
	// Below e^-700 the prefactor makes the continued-fraction term (which
	// is at most polynomial in a and b) vanish: skip the slow far-tail
	// evaluation.
	const negligible = -700
	lambda := a - (a+b)*x
	if a > b {
		lambda = (a+b)*y - b // the same value, computed from the smaller of x and y
	}
	if lambda >= 0 {
		lp := nbBetaLogPrefactor(x, y, a, b)
		if lp < negligible {
			return 0, 0
		}
		r, it := nbBetaFrac(a, b, x, y, lambda)
		return math.Min(1, math.Exp(lp)*r), it
	}
	lp := nbBetaLogPrefactor(y, x, b, a)
	if lp < negligible {
		return 1, 0
	}
	r, it := nbBetaFrac(b, a, y, x, -lambda)
	return math.Max(0, 1-math.Exp(lp)*r), it
}

// nbBetaLogPrefactor returns ln(x^a y^b / B(a, b)) with y = 1-x, without
// cancellation for large a and b.
//
// With n = a+b, x0 = a/n, y0 = b/n and the Stirling remainder
// delta(z) = lnGamma(z) - ((z-1/2) ln z - z + ln(2 pi)/2):
//
//	ln B(a,b) = a ln x0 + b ln y0 + ln(2 pi)/2 - ln(a b/n)/2
//	          + delta(a) + delta(b) - delta(n)
//
// and a ln(x/x0) + b ln(y/y0) = -(a rlog1(t/a) + b rlog1(-t/b)) with
// t = n x - a and rlog1(e) = e - ln(1+e) >= 0, in which the linear terms
// that would cancel have already been removed.
func nbBetaLogPrefactor(x, y, a, b float64) float64 {
	n := a + b
	t := n*x - a
	if x > 0.5 {
		t = b - n*y // the same value, computed from the smaller of x and y
	}
	e := -(a*nbRlog1(t/a) + b*nbRlog1(-t/b))
	e -= nbStirlingDelta(a) + nbStirlingDelta(b) - nbStirlingDelta(n)
	return e + 0.5*math.Log(a*(b/n)/(2*math.Pi))
}

// nbRlog1 returns e - ln(1+e) for e > -1, accurately for small e.
func nbRlog1(e float64) float64 {
	if math.Abs(e) > 0.25 {
		return e - math.Log1p(e)
	}
	// ln(1+e) = 2 atanh(r) with r = e/(2+e), and e - 2r = r e, so
	// e - ln(1+e) = r e - 2 (r^3/3 + r^5/5 + ...); |r| <= 1/7.
	r := e / (2 + e)
	r2 := r * r
	sum, term := 0.0, r*r2
	for j := 3.0; j < 60; j += 2 {
		d := term / j
		sum += d
		if math.Abs(d) <= 1e-17*math.Abs(sum) {
			break
		}
		term *= r2
	}
	return r*e - 2*sum
}

// nbStirlingDelta returns lnGamma(z) - ((z-1/2) ln z - z + ln(2 pi)/2) for
// z >= 1.
func nbStirlingDelta(z float64) float64 {
	if z < 10 {
		lg, _ := math.Lgamma(z)
		return lg - ((z-0.5)*math.Log(z) - z + 0.5*math.Log(2*math.Pi))
	}
	// Asymptotic series; for z >= 10 the first omitted term is below 1e-16.
	w := 1 / (z * z)
	return (1.0/12 + w*(-1.0/360+w*(1.0/1260+w*(-1.0/1680+w*(1.0/1188+w*(-691.0/360360)))))) / z
}

// nbBetaFrac evaluates the continued fraction of Didonato and Morris
// (TOMS 708, eq. for "bfrac") with I_x(a,b) = x^a y^b / B(a,b) * r, for
// a, b > 1 and lambda = a - (a+b)x >= 0, through the three-term recurrence
// of its convergents with rescaling. It returns r and the number of
// iterations. The iteration count grows like sqrt(min(a, b)) only when x is
// close to a/(a+b); in the tails it is a few dozen.
func nbBetaFrac(a, b, x, y, lambda float64) (float64, int) {
	const eps = 1e-15
	const maxIter = 1 << 22
	c := 1 + lambda
	c0 := b / a
	c1 := 1 + 1/a
	yp1 := y + 1
	n, pp, s := 0.0, 1.0, a+1
	an, bn := 0.0, 1.0
	anp1, bnp1 := 1.0, c/c1
	r := c1 / c
	it := 0
	for it < maxIter {
		it++
		n++
		t := n / a
		w := n * (b - n) * x
		e := a / s
		alpha := pp * (pp + c0) * e * e * (w * x)
		e = (1 + t) / (c1 + t + t)
		beta := n + w/s + e*(c+n*yp1)
		pp = 1 + t
		s += 2
		an, anp1 = anp1, alpha*an+beta*anp1
		bn, bnp1 = bnp1, alpha*bn+beta*bnp1
		r0 := r
		r = anp1 / bnp1
		if math.Abs(r-r0) <= eps*r {
			break
		}
		an /= bnp1
		bn /= bnp1
		anp1 = r
		bnp1 = 1
	}
	return r, it
}

// MaxK is the largest count of failures a quantile returns (2^53).
const MaxK = nbMaxK

// MaxSamples is the largest number of successes accepted (2^40).
const MaxSamples = nbMaxSamples

// QuantileUnchecked is [Quantile] for arguments the caller has already
// checked: target in (0, 1), s in [0, MaxSamples], p in (0, 1].
func QuantileUnchecked(target float64, s int64, p float64) int64 {
	k, _ := nbQuantile(target, s, p)
	return k
}

// SurvivalQuantileUnchecked returns the largest k in [-1, 2^53] with
// P(X > k) > tail, for X ~ NB(s, p), comparing the survival function with
// tail directly (precise for tails far below 1e-16). Arguments as for
// [QuantileUnchecked], with tail in (0, 1).
func SurvivalQuantileUnchecked(tail float64, s int64, p float64) int64 {
	k, _ := nbSurvivalQuantile(tail, s, p)
	return k
}
