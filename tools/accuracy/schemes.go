package main

import (
	"math"
	"math/rand/v2"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/sampling"
)

// Scheme names, in the order of every table and JSON object.
const (
	schemeArenaprof = "arenaprof"
	schemeStride    = "fixed_stride"
	schemeGo        = "go_exponential"
	schemeAmount    = "fixed_stride_amount"
)

// schemeNames lists the schemes; the index of a name is its index in
// every per-scheme array.
var schemeNames = []string{schemeArenaprof, schemeGo, schemeStride, schemeAmount}

// randomized is arenaprof's per-byte sampling, simulated exactly as the
// arena runs it: one gap of failed trials drawn by sampling.GapSampler;
// an object of size s with gap < s is sampled at offset gap and a new gap
// is drawn (the rest of the object gets no trials), else gap -= s.
type randomized struct {
	g       *sampling.GapSampler
	mean    int64
	gap     int64
	est     []float64 // sum of estimate.WeightedBytes per event
	samples []int64   // s per type
	tail    []int64   // u per type: sum of size-offset
}

func newRandomized(mean int64, types int, seed1, seed2 uint64) (*randomized, error) {
	g, err := sampling.NewGapSamplerSeeded(mean, seed1, seed2)
	if err != nil {
		return nil, err
	}
	return &randomized{
		g: g, mean: mean, gap: g.Next(),
		est: make([]float64, types), samples: make([]int64, types), tail: make([]int64, types),
	}, nil
}

func (r *randomized) observe(t int, size int64) error {
	if r.gap >= size {
		r.gap -= size
		return nil
	}
	w, err := estimate.WeightedBytes(size, r.mean)
	if err != nil {
		return err
	}
	r.est[t] += w
	r.samples[t]++
	r.tail[t] += size - r.gap
	r.gap = r.g.Next()
	return nil
}

// stride is .NET's AllocationTick: a running byte counter, starting at zero
// when the process starts, that fires a tick on the allocation that brings
// it to the stride or beyond and then restarts at zero. The tick names the
// type and size of that one object. Per reference 5 of the README the upscaled estimate
// of a type is (total allocated bytes) * (sampled bytes of the type) /
// (sampled bytes of all types).
//
// The same ticks also feed a second, more charitable estimator: each tick
// stands for the bytes allocated since the previous tick (the event's
// allocation amount), scaled so that all ticks add up to the total. It is
// free of the size bias of the first and keeps only the stride's phase
// problem.
type stride struct {
	every   int64
	counter int64
	sampled []int64 // sizes of the ticking objects, per type
	amount  []int64 // bytes since the previous tick, per ticking type
}

func newStride(every int64, types int) *stride {
	return &stride{every: every, sampled: make([]int64, types), amount: make([]int64, types)}
}

func (f *stride) observe(t int, size int64) {
	f.counter += size
	if f.counter >= f.every {
		f.sampled[t] += size
		f.amount[t] += f.counter
		f.counter = 0
	}
}

// upscale returns total * w[t] / sum(w), or zeros when nothing ticked.
func upscale(w []int64, total int64) []float64 {
	var all int64
	for _, s := range w {
		all += s
	}
	est := make([]float64, len(w))
	if all == 0 {
		return est
	}
	for t, s := range w {
		est[t] = float64(total) * float64(s) / float64(all)
	}
	return est
}

// estimates returns the upscaled estimates.
func (f *stride) estimates(total int64) []float64 { return upscale(f.sampled, total) }

// amountEstimates returns the allocation-amount estimates.
func (f *stride) amountEstimates(total int64) []float64 { return upscale(f.amount, total) }

// goExp is Go's runtime heap profiler (runtime.mallocgc and
// runtime/pprof): a per-thread byte counter set to an exponential draw
// with mean rate (as an integer, plus one, as runtime.fastexprand does);
// an object of size s is sampled when s >= counter, and then the counter
// is drawn afresh, else counter -= s. Each sampled object counts
// s/(1-exp(-s/rate)) bytes, pprof's scaling. The exact logarithm is used
// here instead of the runtime's 26-bit table approximation.
type goExp struct {
	rng  *rand.Rand
	rate float64
	next int64
	est  []float64
}

func newGoExp(rate int64, types int, seed1, seed2 uint64) *goExp {
	g := &goExp{rng: rand.New(rand.NewPCG(seed1, seed2)), rate: float64(rate), est: make([]float64, types)}
	g.next = g.draw()
	return g
}

func (g *goExp) draw() int64 {
	u := float64(g.rng.Uint64()>>11+1) * 0x1p-53 // (0, 1]
	return int64(-math.Log(u)*g.rate) + 1
}

func (g *goExp) observe(t int, size int64) {
	if size < g.next {
		g.next -= size
		return
	}
	s := float64(size)
	g.est[t] += s / -math.Expm1(-s/g.rate)
	g.next = g.draw()
}
