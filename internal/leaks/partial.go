package leaks

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// MinBeyondTime is the least share of the count's batch-mean variance
// over the fit that the time must leave unexplained for PartialNew to
// fit bytes per unit of count beyond the growth in time: below it the
// count grew in step with the time, and a group's bytes growing with
// either cannot be told apart (a departure of a group's own growth from
// a straight line would be read as bytes per goroutine, magnified by
// the inverse of this share).
const MinBeyondTime = 0.01

// minPartialBatches is the fewest batches of the partial fit: 3
// coefficients and at least 2 degrees of freedom for the scatter.
const minPartialBatches = 5

// Partial fits each group's in-use bytes on the time and the count
// together (the package documentation, "Bytes per leaked goroutine
// beyond the growth in time"): its Fit's Rate is the bytes per unit of
// count beyond what the time explains.
type Partial struct {
	from   int
	n      int       // the snapshots of the series
	batch  []int     // the batch of each snapshot of the fit
	count  []float64 // the snapshots in each batch
	tc, xc []float64 // the batch means of the times and counts, centred
	r      []float64 // the counts' batch means' residuals on 1 and the time
	srr    float64   // sum of r^2
	stt    float64   // sum of tc^2
	stx    float64   // sum of tc*xc
	xbar   float64
	r2     float64 // R^2: (max - min of the weights' suffix sums)^2
	q      float64 // the t quantile, B-3 degrees of freedom
	nb     int
	mean   []float64 // scratch: batch means of the bytes
	unexpl float64   // srr over the counts' own sum of squares
}

// CollinearError is PartialNew's refusal: over the fit the count grew
// in step with the time (the share of its batch-mean variance the time
// leaves unexplained is below MinBeyondTime), or the fit has too few
// batches for three coefficients and a scatter. Bytes per unit of count
// beyond the growth in time cannot be told there.
type CollinearError struct {
	// Unexplained is the share of the count's batch-mean variance the
	// time leaves unexplained; Batches the fit's batches.
	Unexplained float64
	Batches     int
}

func (e *CollinearError) Error() string {
	if e.Batches < minPartialBatches {
		return fmt.Sprintf("%d batches over the fit; at least %d are needed to fit the count beside the time", e.Batches, minPartialBatches)
	}
	return fmt.Sprintf("the count grew in step with the time over the fit (the time explains all but %.2g%% of its variance; %.2g%% at least must be left): bytes per unit of count beyond the growth in time cannot be told",
		100*e.Unexplained, 100*MinBeyondTime)
}

// PartialNew returns the estimator of bytes per unit of count beyond the
// growth in time, for the series and counts PerNew takes, over the same
// window and batches, for groups groups at family-wise confidence conf.
// It refuses what PerNew refuses, and with a *CollinearError where the
// count's batch means are (nearly) a straight line in the time.
func PartialNew(times, count []float64, groups int, conf float64) (*Partial, error) {
	e, err := PerNew(times, count, groups, conf)
	if err != nil {
		return nil, err
	}
	m := len(times) - e.from
	p := &Partial{from: e.from, n: len(times), batch: e.batch, count: e.count, nb: e.nb}
	p.tc = make([]float64, p.nb)
	for j := range m {
		p.tc[e.batch[j]] += times[e.from+j]
	}
	var tbar float64
	for k := range p.nb {
		p.tc[k] /= p.count[k]
		tbar += p.tc[k]
	}
	tbar /= float64(p.nb)
	var sxx float64
	p.xc = make([]float64, p.nb)
	for k := range p.nb {
		p.xbar += e.tb[k]
	}
	p.xbar /= float64(p.nb)
	for k := range p.nb {
		p.tc[k] -= tbar
		p.xc[k] = e.tb[k] - p.xbar // e.tb: the counts' batch means
		p.stt += p.tc[k] * p.tc[k]
		p.stx += p.tc[k] * p.xc[k]
		sxx += p.xc[k] * p.xc[k]
	}
	p.r = make([]float64, p.nb)
	for k := range p.nb {
		p.r[k] = p.xc[k] - p.stx/p.stt*p.tc[k]
		p.srr += p.r[k] * p.r[k]
	}
	p.unexpl = p.srr / sxx
	if p.nb < minPartialBatches || !(p.unexpl >= MinBeyondTime) {
		return nil, &CollinearError{Unexplained: p.unexpl, Batches: p.nb}
	}
	// The weights r_k/Srr/n_k of the snapshots and their suffix sums,
	// the empty one (0) included; the whole sum is 0 too.
	var s, hi, lo float64
	for j := m - 1; j >= 0; j-- {
		k := p.batch[j]
		s += p.r[k] / p.srr / p.count[k]
		hi, lo = max(hi, s), min(lo, s)
	}
	p.r2 = (hi - lo) * (hi - lo)
	alpha := (1 - conf) / (2 * float64(groups))
	p.q = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(p.nb - 3)}.Quantile(1 - alpha)
	p.mean = make([]float64, p.nb)
	return p, nil
}

// Unexplained is the share of the count's batch-mean variance over the
// fit that the time leaves unexplained (at least MinBeyondTime).
func (p *Partial) Unexplained() float64 { return p.unexpl }

// Fit estimates one group's bytes per unit of count beyond the growth in
// time from its in-use bytes at each snapshot and their sampling
// variances (nil for exact bytes), as Estimator.Fit takes them. Rate is
// the count's coefficient, Lo and Hi its family-wise interval; T0 and Y0
// are the batch means' centroids of the count and the bytes.
func (p *Partial) Fit(bytes, v []float64) (Fit, error) {
	if len(bytes) != p.n || (v != nil && len(v) != p.n) {
		return Fit{}, fmt.Errorf("%d values and %d variances for %d snapshots", len(bytes), len(v), p.n)
	}
	clear(p.mean)
	for j, b := range bytes[p.from:] {
		if math.IsNaN(b) || math.IsInf(b, 0) {
			return Fit{}, fmt.Errorf("in-use bytes %v at snapshot %d are not a finite number", b, p.from+j)
		}
		p.mean[p.batch[j]] += b
	}
	var ybar float64
	for k := range p.nb {
		p.mean[k] /= p.count[k]
		ybar += p.mean[k]
	}
	ybar /= float64(p.nb)
	var sry, sty float64
	for k := range p.nb {
		sry += p.r[k] * (p.mean[k] - ybar)
		sty += p.tc[k] * (p.mean[k] - ybar)
	}
	c := sry / p.srr
	bt := (sty - c*p.stx) / p.stt
	var rss, dev float64
	for k := range p.nb {
		e := p.mean[k] - ybar - bt*p.tc[k] - c*p.xc[k]
		rss += e * e
		dev = max(dev, math.Abs(p.mean[k]-ybar))
	}
	// Rounding: residuals of batch means as large as dev are known to
	// no better than a few dozen ulps of dev. Without this floor exact
	// bytes growing in time alone could give c = 1e-12 [1e-13, 1e-11]:
	// held, from rounding.
	rss = max(rss, float64(p.nb)*math.Pow(64*0x1p-52*dev, 2))
	f := Fit{Rate: c, T0: p.xbar, Y0: ybar, Scatter: rss / float64(p.nb-3) / p.srr}
	if v != nil {
		var charged, top float64
		w := v[p.from:]
		for j, x := range w {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				return Fit{}, fmt.Errorf("sampling variance %v at snapshot %d is not a finite non-negative number", x, p.from+j)
			}
			if j == 0 || x > top {
				if j > 0 {
					charged += x - top
				}
				top = x
			}
		}
		top = w[len(w)-1]
		for j := len(w) - 2; j >= 0; j-- {
			if w[j] > top {
				charged += w[j] - top
				top = w[j]
			}
		}
		f.Sampling = charged * p.r2
	}
	f.SE = math.Sqrt(f.Scatter + f.Sampling)
	f.Lo, f.Hi = f.Rate-p.q*f.SE, f.Rate+p.q*f.SE
	return f, nil
}
