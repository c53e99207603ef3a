package report

import (
	"errors"
	"math"
	"sort"

	"gonum.org/v1/gonum/mathext"
)

// The ratio test of [Diff].
//
// Both samplers draw each object independently: an arena object of S bytes
// under mean m is sampled with probability p = 1-(1-1/m)^S (the trials
// are memoryless, so neither the window nor the other objects matter), a Go
// heap object with p = 1-exp(-S/R). A sampled object stands for
// w = S/p bytes. So the events of one stratum (one weight: one size under
// one mean or rate) are a binomial count c, and a group's estimate is a
// weighted sum of such counts, T = sum w*c, whose variance
// sum w^2*N*p*(1-p) is estimated without bias by V = sum w^2*c*(1-p).
// For objects small against the mean (p near 0) this is the Poisson
// variance w^2*c; objects sampled with near certainty add little.
//
// For a single stratum on each side (all objects small against the mean)
// the exact test of a ratio is the conditional one: given the sum x+y of
// the two counts, y is binomial with a success probability fixed by the
// ratio, and the Clopper-Pearson interval of that probability gives
//
//	[ (y/(x+1)) * F(alpha/2; 2y, 2(x+1)), ((y+1)/x) * F(1-alpha/2; 2(y+1), 2x) ]
//
// times the ratio of the weights. For weighted sums of several strata it
// is generalized the way Tiwari, Clegg and Zou (2006) extend the gamma
// interval of Fay and Feuer (1997) to a ratio of two directly standardized
// rates: each side is a gamma variable with the estimate's mean and
// variance (shape T^2/V, scale V/T), and the side in the denominator of a
// bound gets one more event at its largest weight wmax
// (T+wmax, V+wmax^2), as x+1 and y+1 above. The ratio of the two gammas is
// an F variable, whose quantiles come from the regularized incomplete
// beta function. With one weight per side of small objects it is exactly
// the conditional test; with several weights, and for objects as large as
// the mean, it is an approximation, conservative in the simulations of
// TestDiffSim (false alarms at most the nominal rate, see ACCURACY.md).
// Objects sampled with certainty (mean or MemProfileRate 1, or objects so
// large that p rounds to 1) add their bytes exactly and no variance.
//
// The hypothesis a flag rejects is "the group's true bytes are equal in
// both profiles" (ratio 1), the ratio Diff reports. When the totals differ
// (a longer run), every group may change by the same factor; compare the
// total row's ratio to see it.

// ratioSums are the weighted sums of one side of one group.
type ratioSums struct {
	t    float64 // the estimate: sum of w*c over the events
	v    float64 // sum of w^2*c*(1-p) over the events
	wmax float64 // the largest weight of an uncertain event, or the allowance
	// conservative is set when an aggregate of unknown sizes was added
	// by addMixed, at the worst variance its sums allow.
	conservative bool
}

// add adds c events of weight w = size/p of objects of size bytes.
func (r *ratioSums) add(c, w, size float64) {
	r.t += c * w
	if w > size { // p < 1
		r.v += c * w * w * (1 - size/w)
		r.wmax = max(r.wmax, w)
	}
}

// addMixed adds an aggregate of c >= 1 events of unknown sizes under mean
// m whose weights, each at least m, sum to b bytes: their sum of squared
// weights, which bounds the variance, is at most (c-1)*m^2 + (b-(c-1)*m)^2.
func (r *ratioSums) addMixed(c, m, b float64) {
	c = max(c, 1)
	big := max(b-(c-1)*m, m)
	r.t += b
	r.v += (c-1)*m*m + big*big
	r.wmax = max(r.wmax, big)
	r.conservative = true
}

// addKnown adds an aggregate of c >= 1 events of unknown sizes under mean
// m whose weights sum to b bytes, with the variance v and the bound wb on
// the largest weight that its variance sums give (pprofmt.VarianceSums):
// the largest weight is at most wb and, as in addMixed, at most
// b-(c-1)*m. Without variance (every event sampled with certainty) the
// bytes are exact.
func (r *ratioSums) addKnown(c, m, b, v, wb float64) {
	r.t += b
	if v <= 0 {
		return
	}
	r.v += v
	r.wmax = max(r.wmax, m, min(wb, b-(max(c, 1)-1)*m))
}

// exact reports whether the sums are known without sampling error.
func (r ratioSums) exact() bool { return r.v == 0 && r.wmax == 0 }

// plusOne returns the sums with one more event at the largest weight.
func (r ratioSums) plusOne() ratioSums {
	return ratioSums{t: r.t + r.wmax, v: r.v + r.wmax*r.wmax, wmax: r.wmax, conservative: r.conservative}
}

// shapeScale returns the gamma shape and scale of the sums.
func (r ratioSums) shapeScale() (shape, scale float64) {
	return r.t * r.t / r.v, r.v / r.t
}

var errRatio = errors.New("report: ratio interval did not converge")

// ratioInterval returns bounds on the ratio of true bytes NEW/BASE that
// hold together with probability at least conf: lo misses with
// probability at most (1-conf)/2, and so does hi. baseLo and baseHi are
// the base side's sums at its smallest and largest possible event counts
// (equal unless an in-use count is only bounded), and likewise for the new
// side. hi is +Inf when the base side has no bytes.
func ratioInterval(baseLo, baseHi, newLo, newHi ratioSums, conf float64) (lo, hi float64, err error) {
	a := (1 - conf) / 2
	lo, err = ratioLower(baseHi.plusOne(), newLo, a)
	if err != nil {
		return 0, 0, err
	}
	hi, err = ratioLower(newHi.plusOne(), baseLo, a) // 1/hi is the lower bound of BASE/NEW
	if err != nil {
		return 0, 0, err
	}
	if hi == 0 {
		return lo, math.Inf(1), nil
	}
	return lo, 1 / hi, nil
}

// ratioLower returns the lower bound of num/den at tail a, den already
// carrying its extra event. It is 0 when num has no bytes.
func ratioLower(den, num ratioSums, a float64) (float64, error) {
	if num.t <= 0 {
		return 0, nil
	}
	if den.t <= 0 {
		return math.Inf(1), nil
	}
	var x float64
	switch {
	case num.exact() && den.exact():
		x = num.t / den.t
	case den.exact(): // num's lower gamma quantile over a known den
		k, s := num.shapeScale()
		x = s * mathext.GammaIncRegInv(k, a) / den.t
	case num.exact(): // a known num over den's upper gamma quantile
		k, s := den.shapeScale()
		x = num.t / (s * mathext.GammaIncRegInv(k, 1-a))
	default:
		kn, sn := num.shapeScale()
		kd, sd := den.shapeScale()
		b := mathext.InvRegIncBeta(kn, kd, a)
		x = sn / sd * b / (1 - b)
	}
	if math.IsNaN(x) || x < 0 {
		return 0, errRatio
	}
	return x, nil
}

// ratioTerms is one sample's part of its group's ratio sums: cLo (at the
// smallest event count) or cHi (at the largest) events of weight w of
// objects of size bytes; or, when mixed, an aggregate of cLo = cHi events
// of unknown sizes under mean w whose weights sum to size bytes (see
// addMixed); or, when known, such an aggregate with its variance v and
// the bound wb on its largest weight (see addKnown). A zero ratioTerms
// adds nothing.
type ratioTerms struct {
	ok, mixed, known  bool
	cLo, cHi, w, size float64
	v, wb             float64
}

// addTerms adds t at its smallest (hi false) or largest event count.
func (r *ratioSums) addTerms(t ratioTerms, hi bool) {
	switch {
	case !t.ok:
	case t.known:
		r.addKnown(t.cLo, t.w, t.size, t.v, t.wb)
	case t.mixed:
		r.addMixed(t.cLo, t.w, t.size)
	case hi:
		r.add(t.cHi, t.w, t.size)
	default:
		r.add(t.cLo, t.w, t.size)
	}
}

// ratioLowerP returns the one-sided p-value of "num/den <= c" that the
// lower bound of [ratioLower] inverts: the tail a* at which
// ratioLower(den, num, a*) equals c, so that the bound exceeds c exactly
// when a > a*. den already carries its extra event; c > 0. It lies in
// [0, 1]: 0 when the bound exceeds c at every tail (a known ratio above c,
// or no bytes in den), 1 when it never does.
func ratioLowerP(den, num ratioSums, c float64) float64 {
	if num.t <= 0 || !(c > 0) {
		return 1
	}
	if den.t <= 0 {
		return 0
	}
	var p float64
	switch {
	case num.exact() && den.exact():
		if num.t/den.t > c {
			return 0
		}
		return 1
	case den.exact(): // s*GammaIncRegInv(k, a)/den.t = c
		k, s := num.shapeScale()
		p = mathext.GammaIncReg(k, c*den.t/s)
	case num.exact(): // num.t/(s*GammaIncRegInv(k, 1-a)) = c
		k, s := den.shapeScale()
		p = mathext.GammaIncRegComp(k, num.t/(c*s))
	default: // sn/sd * b/(1-b) = c, b = InvRegIncBeta(kn, kd, a)
		kn, sn := num.shapeScale()
		kd, sd := den.shapeScale()
		p = mathext.RegIncBeta(kn, kd, c*sd/(sn+c*sd))
	}
	if math.IsNaN(p) {
		return 1
	}
	return min(max(p, 0), 1)
}

// ratioP returns the two-sided p-value of "the ratio NEW/BASE is c" that
// [ratioInterval] inverts: the interval at confidence conf excludes c
// exactly when p < 1-conf, so p is one minus the largest confidence at
// which it does. The sums are those of ratioInterval; c is 1 but under
// normalisation (see diffFill).
func ratioP(baseLo, baseHi, newLo, newHi ratioSums, c float64) float64 {
	lo := ratioLowerP(baseHi.plusOne(), newLo, c)   // the lower bound exceeds c
	hi := ratioLowerP(newHi.plusOne(), baseLo, 1/c) // the upper bound falls below c
	return min(1, 2*min(lo, hi))
}

// holm returns Holm's step-down adjustment of the p-values p: a
// hypothesis is rejected at family-wise level alpha when its adjusted
// p-value is below alpha. The family-wise error (the probability of
// rejecting any true hypothesis) is then at most alpha whatever the
// dependence between the tests (Holm 1979).
func holm(p []float64) []float64 {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	adj := make([]float64, len(p))
	run := 0.0
	for rank, i := range idx {
		run = max(run, min(1, float64(len(p)-rank)*p[i]))
		adj[i] = run
	}
	return adj
}
