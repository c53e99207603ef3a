package report

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/goheap"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// A profile's samples follow one of three models, decided once, when the
// profile is read (modelOf), from its sample types:
//
//   - arena (arenaModel, arena.go): arenaprof's per-byte sampling. Each
//     group's raw sums (events and tails, per sampling mean) get an exact
//     negative-binomial interval.
//   - Go heap (heapModel, heap.go): the runtime's Poisson sampling at
//     runtime.MemProfileRate. Each group's raw counts per object size get
//     a gamma interval.
//   - exact counts (the live-arenas profile, holdings.go): nothing is
//     sampled and nothing gets an interval; [Holdings] reads it.
//
// A combined memory profile (export.BuildMemory) holds arena samples and Go
// heap samples side by side; its model (combinedModel) reads each sample
// with the model of its part (the label memory=heap) and bounds a group
// that holds both by the two parts' intervals at half the miss probability
// each. Grouping (table.go) and the ratio test (diff.go) go through the
// model and never ask what kind of sample they hold.

// model reads the samples of one profile.
type model interface {
	// read returns what sample s adds to its group, or skip for a sample
	// that holds nothing (an empty bucket of a delta profile).
	read(s *profile.Sample) (c contribution, skip bool, err error)
	// newSums returns the empty raw sums of one group, or of the total
	// (total true), which may be bounded differently.
	newSums(total bool) sums
	// unseenHi bounds the bytes of a group with no sample in the profile
	// at confidence conf (see TableResult.UnseenHi).
	unseenHi(conf float64) (float64, error)
}

// sums are the raw sums of one group under its profile's model: what the
// group's interval and its side of Diff's ratio test come from.
type sums interface {
	// add adds one sample's contribution; err keeps the first error.
	add(c contribution, err *error)
	// interval returns bounds on the group's true bytes at confidence
	// conf; row holds the group's totals.
	interval(row *TableRow, conf float64) (lo, hi float64, err error)
	// ratioAllowance is the least weight of the extra event the ratio
	// test's upper side gets (see ratio.go): the largest mean in force for
	// a group with arena samples, which may have allocated bytes under it
	// without drawing an event; 0 otherwise.
	ratioAllowance() float64
	// memProfileRate is the MemProfileRate of the group's Go heap samples,
	// 0 if it has none.
	memProfileRate() int64
}

// contribution is what one sample adds to its group: the estimates and
// event counts every model has, and the raw sums of its own model.
type contribution struct {
	bytes, objects     int64
	samples, samplesHi int64 // events: samples <= true count <= samplesHi
	tailLo, tailHi     int64 // arena: bounds on the tail sum
	mean               int64 // arena: the sampling mean
	certain            int64 // arena: bytes of the sampled objects, when their size is recorded
	size               int64 // object size (0: mixed or unknown)
	rate               int64 // Go heap: MemProfileRate
	heap               bool  // read by the Go heap model (for a combined profile's sums)
	// ratio is the sample's part of the ratio test's weighted sums, at
	// the smallest and at the largest event count (none: it adds nothing).
	ratio ratioTerms
}

// modelOf chooses the model of a profile's samples from its facts (f,
// from describe) and checks that they can be grouped by by under it. It
// returns an error for a profile of anything other than sampled memory:
// CPU, goroutines, contention, a live-arenas profile (exact counts, read
// by Holdings), or a Go heap profile written with MemProfileRate 0, which
// sampled nothing.
func modelOf(f *pprofmt.Facts, by groupBy, opts TableOptions) (model, error) {
	inuse := opts.InUse
	if f.MeansErr != nil {
		return nil, f.MeansErr
	}
	switch f.Kind {
	case pprofmt.KindGoHeap:
		if by.kind() == groupByType {
			return nil, errors.New("report: a Go heap profile records no types; group it by func, stack or size")
		}
		if f.Period <= 0 {
			return nil, fmt.Errorf("report: a Go heap profile written with MemProfileRate %d samples nothing; set runtime.MemProfileRate above 0 before allocating", f.Period)
		}
		if f.ValuesErr != nil {
			return nil, f.ValuesErr
		}
		hm := &heapModel{idx: f.Heap, rate: f.Period, inuse: inuse, rawAlloc: -1, merged: f.HeapRaw[0] >= 0, raw: f.HeapRaw, window: f.Window}
		return hm, hm.setRule(f.GoVersions, opts)
	case pprofmt.KindHoldings:
		return nil, errors.New("report: a live-arenas profile holds exact counts, not samples: read it with Holdings")
	case pprofmt.KindOther:
		return nil, f.NotMemory
	}
	if f.ValuesErr != nil {
		return nil, f.ValuesErr
	}
	arena := &arenaModel{period: f.Period, idx: f.Arena, varIdx: f.Var, inuse: inuse, window: f.Window, means: f.InForce(inuse)}
	if f.HeapSamples {
		hm := &heapModel{idx: f.Heap, inuse: inuse, rawAlloc: f.Arena[pprofmt.IndexAllocSamples], merged: f.HeapRaw[0] >= 0, raw: f.HeapRaw, window: f.Window}
		return &combinedModel{arena: arena, heap: hm}, hm.setRule(f.GoVersions, opts)
	}
	return arena, nil
}

// setRule chooses the sampler's rule: by the Go releases vs the profile
// names (pprofmt.Facts.GoVersions), else by opts.GoVersion, else the rule
// of Go 1.24 and later.
func (m *heapModel) setRule(vs []string, opts TableOptions) error {
	m.anyOrder = opts.AnyOrder
	if len(vs) == 0 {
		if opts.GoVersion == "" {
			return nil
		}
		r, err := goheap.RuleOf(opts.GoVersion)
		if err != nil {
			return fmt.Errorf("report: GoVersion: %v", err)
		}
		m.rule, m.goVersion = r, opts.GoVersion
		return nil
	}
	for i, v := range vs {
		r, err := goheap.RuleOf(v)
		if err != nil {
			return fmt.Errorf("report: the profile's comment %q: %v", pprofmt.GoVersionComment(v), err)
		}
		if i > 0 && r != m.rule {
			return fmt.Errorf("report: the profile merges Go heap samples of Go releases whose heap samplers differ (%s): read the parts apart", strings.Join(vs, ", "))
		}
		m.rule = r
	}
	m.goVersion = strings.Join(vs, ",")
	return nil
}

// combinedModel reads a combined memory profile: arena samples with the
// arena model, Go heap samples (label memory=heap) with the Go heap model.
type combinedModel struct {
	arena *arenaModel
	heap  *heapModel
}

func (m *combinedModel) read(s *profile.Sample) (contribution, bool, error) {
	if isHeapSample(s) {
		return m.heap.read(s)
	}
	return m.arena.read(s)
}

func (m *combinedModel) newSums(total bool) sums {
	return &combinedSums{arena: m.arena.newArenaSums(), heap: heapSums{m: m.heap, total: total}}
}

// heapPart returns the Go heap model of m, nil if it has none.
func heapPart(m model) *heapModel {
	switch m := m.(type) {
	case *heapModel:
		return m
	case *combinedModel:
		return m.heap
	}
	return nil
}

func (m *combinedModel) unseenHi(conf float64) (float64, error) { return m.arena.unseenHi(conf) }

// combinedSums are a group of a combined profile: its arena part and its
// Go heap part.
type combinedSums struct {
	arena *arenaSums
	heap  heapSums
}

func (c *combinedSums) add(x contribution, err *error) {
	if x.heap {
		c.heap.add(x, err)
		return
	}
	c.arena.add(x, err)
}

// interval bounds a group with both parts by the sum of the parts' bounds,
// each at confidence 1-(1-conf)/2, so that both hold together with
// probability at least conf. A group of Go heap samples only gets no
// allowance for unseen arena bytes (it holds no arena memory).
func (c *combinedSums) interval(row *TableRow, conf float64) (lo, hi float64, err error) {
	if c.heap.rate == 0 {
		return c.arena.interval(row, conf)
	}
	if c.arena.events == 0 {
		return c.heap.interval(row, conf)
	}
	half := 1 - (1-conf)/2
	alo, ahi, err := c.arena.interval(row, half)
	if err != nil {
		return 0, 0, err
	}
	hlo, hhi, err := c.heap.interval(row, half)
	if err != nil {
		return 0, 0, err
	}
	return alo + hlo, ahi + hhi, nil
}

func (c *combinedSums) ratioAllowance() float64 { return c.arena.ratioAllowance() }

func (c *combinedSums) memProfileRate() int64 { return c.heap.rate }
