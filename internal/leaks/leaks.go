// Package leaks estimates how fast a group's in-use bytes grow over the
// recent part of a series of sampled in-use snapshots, with an interval
// that holds for all groups at once, so that a site still growing at the
// end of the series is told apart from a cache that filled earlier, a
// sawtooth, a steady state and garbage churn (docs/leaks.md, ACCURACY.md).
//
// The method, for snapshots at times t_1 < ... < t_n:
//
//   - The fit covers the recent half: the snapshots at or after
//     (t_1+t_n)/2, at least 4 of them.
//   - Its m snapshots are cut into B = min(m, MaxBatches) consecutive
//     batches of (nearly) equal counts; the rate is the least-squares
//     slope of the batch means of the bytes against the batch means of
//     the times. Batching makes the scatter of points whose errors are
//     correlated over a few snapshots (objects living several snapshots,
//     a sawtooth) a scatter of nearly independent means.
//   - Its variance has two parts, added. The scatter: the residual
//     variance of the batch means about the line, over B-2 degrees of
//     freedom. The sampling: a sampled object stays in every snapshot
//     while it lives, so the sampling errors of successive snapshots are
//     not independent, and the residuals miss most of them (a random
//     walk's residuals are small beside its drift's error: about 7 times
//     too small on a leak, DESIGN.md). Each object adds its sampling
//     variance v times (sum of the slope's weights over the snapshots it
//     lives in)^2. The sum is bounded from the snapshots' own sampling
//     variances V_i: the rise of the running maximum of V from the fit's
//     start is charged as objects born at that snapshot and living to the
//     end (weight: the sum of the weights from it on), the rise of the
//     running maximum from the fit's end backwards as objects living from
//     the start and dying there. Objects alive over the whole fit add
//     nothing (the weights sum to 0): a filled cache has no sampling error
//     in its slope.
//   - The interval is rate -+ q*sqrt(var), q the Student t quantile with
//     B-2 degrees of freedom at 1-(1-C)/(2G) for G groups: Bonferroni's
//     correction, so that all G intervals hold together with probability
//     at least C, for any dependence between groups. A group is flagged
//     when its lower bound is above the minimum rate; a group that does
//     not grow faster than that is flagged with probability at most
//     (1-C)/2, all groups together.
//
// Bytes per leaked goroutine (PerNew): the same fit with the leaked
// goroutine count in place of the time.
//
// For each group the slope of its in-use bytes against the service's
// leaked goroutine count, read at each snapshot, over the same recent half
// (the snapshots Window picks by time), is its bytes per leaked goroutine:
// the batch means of the bytes against the batch means of the counts, the
// scatter of the batch means about the line, the sampling bound, Student's
// t with Bonferroni's correction over the groups: all as for the rate.
//
// Why the sampling bound carries over. The slope is sum_j a_j Y_j, a_j =
// (xb_k - xbar)/Sxx/n_k for snapshot j of batch k (xb_k the batch mean of
// the regressor, n_k the batch's snapshots). An object alive at snapshots
// b..d (one run: a sampled object is in every snapshot while it lives)
// adds v*S^2 to the slope's variance, S = a_b + ... + a_d = suffix(b) -
// suffix(d+1), suffix(j) the sum of the weights from j to the end. The
// bound uses two facts of the weights: they add up to 0, so an object
// alive over the whole fit adds nothing; and every suffix sum is >= 0,
// so S^2 <= max(suffix(b), suffix(d+1))^2: an object adds no more than it
// would if it were born at b and lived to the end, or lived from the
// start and died at d, which is how the rises of the running maxima of V
// are charged. Objects born and freed within the fit whose place others
// take are in the scatter: their errors are nearly independent between
// batches. The second fact holds whenever the batch means of the
// regressor do not decrease: the suffix sum at a batch's start is the sum
// of (xb_k - xbar)/Sxx over the batches from it on, the last terms of
// a nondecreasing sequence whose whole sum is 0, so >= 0; within a batch
// the weights are equal and the suffix sums lie between those at its
// ends. The times increase; the leaked count does not decrease within
// one process (a leaked goroutine is blocked for good and never
// collected), so its batch means do not either, however the count stalls
// and jumps: stalls give batches of equal weights, jumps concentrate
// them, and the two facts hold. A count that falls is no one process's
// (a restart) and is refused: there a suffix sum may be negative and the
// bound would not hold. A count that takes one value over the fit gives
// no slope and is refused too.
//
// Bytes per leaked goroutine beyond the growth in time (PartialNew).
// While goroutines leak the count grows with the time, so a group
// leaking on its own grows with the count too. The partial fit regresses
// the batch means of the bytes on 1, the time and the count together
// (same window, batches and family; Student's t with B-3 degrees of
// freedom): the count's coefficient c is the bytes per leaked goroutine
// beyond what the time explains. Its weights are r_k/Srr/n_k, r_k the
// residual of the count's batch mean k after regressing them on 1 and
// the time, Srr the sum of the r_k^2; they add up to 0 and are
// orthogonal to the time, so a leak of its own (bytes growing at a
// steady pace) moves c by nothing. The scatter is the residual variance
// of the batch means about the plane over B-3 degrees of freedom, over
// Srr.
//
// Its sampling bound. The suffix sums of these weights change sign (r
// does whenever the count departs from a line in the time), so the
// second fact above fails: an object alive at b..d adds v*(suffix(b) -
// suffix(d+1))^2, which may exceed both suffix(b)^2 and suffix(d+1)^2.
// It is at most v*R^2 for any weights, R the maximum less the minimum of
// the suffix sums (the empty suffix, 0, included). The objects charged
// are those the single-regressor bound charges (the rises of the running
// maxima of V from the fit's start and from its end), each at R^2:
// conservative, the same accounting with a constant weight, and wider
// than the single-regressor bound (on the simulation of
// TestPartialTruth the sampling term is about 37 times the scatter).
//
// Cannot tell. Where the count grew in step with the time, r is nearly
// 0 and c's interval as wide as 1/Srr makes it; worse, a group's own
// growth that departs from a straight line would be read as bytes per
// goroutine, magnified by Sxx/Srr. PartialNew refuses with a
// *CollinearError when the time leaves less than MinBeyondTime of the
// count's batch-mean variance unexplained, or the fit has fewer than 5
// batches: no number rather than a narrow one. Goroutines leaking one by
// one at a steady pace leave about 0.1% (TestPartialSteady); bursts do
// leave enough (TestPartialTruth).
package leaks

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// MinSnapshots is the fewest snapshots a rate is estimated from: the fit
// covers the last half, and needs at least 4 points for 2 degrees of
// freedom of its scatter.
const MinSnapshots = 8

// MaxBatches bounds the batches the recent half is cut into: more give
// the scatter more degrees of freedom (a smaller t quantile), fewer and
// longer ones keep the batch means independent over longer correlations.
// 16 batches of the last half of an hour are 112 s long.
const MaxBatches = 16

// minFit is the fewest snapshots a fit covers.
const minFit = 4

// Fit is the growth rate of one group over the recent part of a series.
type Fit struct {
	// Rate is the estimated growth of the group's in-use bytes, in bytes
	// per second (per unit of count for PerNew's estimator); Lo and Hi
	// bound it at the family-wise confidence.
	Rate, Lo, Hi float64
	// SE is the rate's standard error: Scatter and Sampling are its two
	// parts' variances.
	SE, Scatter, Sampling float64
	// T0 and Y0 are the batch means' centroid (seconds on the series'
	// time axis, bytes): the fitted line, and those of slopes Lo and Hi,
	// pass through it.
	T0, Y0 float64
}

// Window is where the fit of a series of snapshots at times (seconds, in
// increasing order) starts: the first snapshot at or after the middle of
// the span, at least 4 from the end. It needs at least MinSnapshots
// snapshots.
func Window(times []float64) (from int, err error) {
	if len(times) < MinSnapshots {
		return 0, fmt.Errorf("%d snapshots; at least %d are needed", len(times), MinSnapshots)
	}
	for i := 1; i < len(times); i++ {
		if !(times[i] > times[i-1]) {
			return 0, fmt.Errorf("the times are not increasing at snapshot %d (%v after %v)", i, times[i], times[i-1])
		}
	}
	mid := (times[0] + times[len(times)-1]) / 2
	for from < len(times) && times[from] < mid {
		from++
	}
	return min(from, len(times)-minFit), nil
}

// Estimator fits the groups of one series of snapshots: the times, the
// fit's window and its weights are worked out once and shared by every
// group.
type Estimator struct {
	from    int
	times   []float64
	batch   []int     // the batch of each snapshot of the fit
	a       []float64 // the slope's weight of each snapshot of the fit
	suffix  []float64 // suffix[j]: the sum of a[j:]
	tb      []float64 // the batch means of the times
	count   []float64 // the snapshots in each batch
	sxx     float64
	q       float64 // the t quantile
	nb      int
	mean    []float64 // scratch: batch means of the bytes
	running []float64 // scratch
}

// New returns the estimator of the series at times (seconds, increasing,
// at least MinSnapshots) for groups groups (the family Bonferroni's
// correction is over, at least 1) at family-wise confidence conf.
func New(times []float64, groups int, conf float64) (*Estimator, error) {
	if !(conf > 0 && conf < 1) {
		return nil, fmt.Errorf("confidence %v is not strictly between 0 and 1", conf)
	}
	if groups < 1 {
		return nil, errors.New("no group to estimate")
	}
	for _, t := range times {
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, fmt.Errorf("time %v is not a finite number", t)
		}
	}
	from, err := Window(times)
	if err != nil {
		return nil, err
	}
	return newEstimator(times, from, groups, conf)
}

// newEstimator returns the estimator of slopes against the regressor x
// (the times, or a count: PerNew) over the snapshots from from on, x's
// batch means nondecreasing (see the package documentation).
func newEstimator(x []float64, from, groups int, conf float64) (*Estimator, error) {
	times := x
	m := len(times) - from
	e := &Estimator{from: from, times: times, nb: min(m, MaxBatches)}
	e.batch = make([]int, m)
	e.count = make([]float64, e.nb)
	e.tb = make([]float64, e.nb)
	for j := range m {
		k := j * e.nb / m
		e.batch[j] = k
		e.count[k]++
		e.tb[k] += times[from+j]
	}
	var tt float64
	for k := range e.nb {
		e.tb[k] /= e.count[k]
		tt += e.tb[k]
	}
	tt /= float64(e.nb)
	for k := range e.nb {
		e.sxx += (e.tb[k] - tt) * (e.tb[k] - tt)
	}
	if !(e.sxx > 0) {
		return nil, errors.New("the recent half's snapshots span no time")
	}
	e.a = make([]float64, m)
	for j := range m {
		k := e.batch[j]
		e.a[j] = (e.tb[k] - tt) / e.sxx / e.count[k]
	}
	e.suffix = make([]float64, m+1)
	for j := m - 1; j >= 0; j-- {
		e.suffix[j] = e.suffix[j+1] + e.a[j]
	}
	alpha := (1 - conf) / (2 * float64(groups))
	e.q = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(e.nb - 2)}.Quantile(1 - alpha)
	e.mean = make([]float64, e.nb)
	e.running = make([]float64, m)
	return e, nil
}

// From is the index of the fit's first snapshot.
func (e *Estimator) From() int { return e.from }

// Fit estimates the growth rate of one group from its in-use bytes at
// each snapshot (estimates) and their sampling variances (v; nil for
// exact bytes), both as long as the times.
func (e *Estimator) Fit(bytes, v []float64) (Fit, error) {
	if len(bytes) != len(e.times) || (v != nil && len(v) != len(e.times)) {
		return Fit{}, fmt.Errorf("%d values and %d variances for %d snapshots", len(bytes), len(v), len(e.times))
	}
	y := bytes[e.from:]
	clear(e.mean)
	for j, b := range y {
		if math.IsNaN(b) || math.IsInf(b, 0) {
			return Fit{}, fmt.Errorf("in-use bytes %v at snapshot %d are not a finite number", b, e.from+j)
		}
		e.mean[e.batch[j]] += b
	}
	var yy float64
	for k := range e.nb {
		e.mean[k] /= e.count[k]
		yy += e.mean[k]
	}
	yy /= float64(e.nb)
	var tt float64
	for k := range e.nb {
		tt += e.tb[k]
	}
	tt /= float64(e.nb)
	var sxy float64
	for k := range e.nb {
		sxy += (e.tb[k] - tt) * (e.mean[k] - yy)
	}
	f := Fit{Rate: sxy / e.sxx, T0: tt, Y0: yy}
	var rss float64
	for k := range e.nb {
		r := e.mean[k] - yy - f.Rate*(e.tb[k]-tt)
		rss += r * r
	}
	f.Scatter = rss / float64(e.nb-2) / e.sxx
	if v != nil {
		s, err := e.sampling(v[e.from:])
		if err != nil {
			return Fit{}, err
		}
		f.Sampling = s
	}
	f.SE = math.Sqrt(f.Scatter + f.Sampling)
	f.Lo, f.Hi = f.Rate-e.q*f.SE, f.Rate+e.q*f.SE
	return f, nil
}

// sampling bounds the slope's variance from the snapshots' sampling
// errors, given each snapshot's sampling variance v (see the package
// documentation): the rises of the running maximum of v forwards, charged
// as births at weight suffix^2, and backwards, as deaths at weight
// prefix^2 (the prefix sums are minus the suffix sums: the weights add up
// to 0).
func (e *Estimator) sampling(v []float64) (float64, error) {
	var s, top float64
	for j, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return 0, fmt.Errorf("sampling variance %v at snapshot %d is not a finite non-negative number", x, e.from+j)
		}
		if j == 0 {
			top = x
			continue
		}
		if x > top {
			s += (x - top) * e.suffix[j] * e.suffix[j]
			top = x
		}
	}
	top = v[len(v)-1]
	for j := len(v) - 2; j >= 0; j-- {
		if v[j] > top {
			// alive up to j, dead by j+1: the weights before j+1 are
			// -suffix[j+1].
			s += (v[j] - top) * e.suffix[j+1] * e.suffix[j+1]
			top = v[j]
		}
	}
	return s, nil
}

// Dispersion is the sampling variance a sampled object of size bytes
// adds per byte of its weighted estimate, at sampling mean (or
// MemProfileRate) mean: an object of S bytes sampled with probability
// p = 1-exp(-S/mean) has weight w = S/p and variance w*(w-S) = w*S/expm1(S/mean),
// so an estimate of Y bytes of such objects has variance Y*S/expm1(S/mean).
// It falls from mean (small objects: the count is Poisson) to 0 (objects
// far above the mean are sampled surely). A size of 0 or less (unknown,
// mixed) gets mean, the largest.
func Dispersion(size, mean int64) float64 {
	if size <= 0 {
		return float64(mean)
	}
	x := float64(size) / float64(mean)
	if x > 700 {
		return 0
	}
	return float64(size) / math.Expm1(x)
}
