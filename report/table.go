package report

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/goheap"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/profiler"
)

// TableOptions configure [Table].
type TableOptions struct {
	// By is the grouping; the zero value groups by type.
	By GroupBy
	// InUse selects the bytes of objects still in use instead of the bytes
	// allocated. In-use intervals are conservative: the profile does not
	// record the tail of in-use events, so they cover every possible tail.
	InUse bool
	// N keeps the N largest groups in TableResult.Rows; 0 keeps all. The
	// total always covers every group.
	N int
	// Confidence of the intervals, strictly between 0 and 1; 0 means 0.95.
	Confidence float64
}

// TableRow is one group of a [Table] (or its total).
type TableRow struct {
	// Key identifies the group: a type name, a full function name, a stack
	// of full function names joined by [StackSep] leaf first, a label value,
	// or [NoneKey]; "total" for the total row.
	Key string
	// Display is Key as a table shows it: function names without their
	// import path. It equals Key for types and labels.
	Display string
	// Samples is the number of sample events (for in-use: events whose
	// objects are still in use, recovered from the in-use bytes).
	Samples int64
	// SamplesMax equals Samples, except for in-use rows with overflow
	// samples (mixed object sizes, no size label), whose event count is
	// only bounded: Samples <= count <= SamplesMax.
	SamplesMax int64
	// Tail is the raw sum of size-offset over the events. For in-use rows
	// the profile does not record it: Tail and TailMax bound it.
	Tail, TailMax int64
	// Bytes and Objects are the estimates: sums of the profile's values.
	Bytes, Objects int64
	// Lo and Hi bound the true bytes at the table's confidence.
	Lo, Hi float64
	// Share is Bytes as a fraction of the total's bytes (0 if that is 0).
	Share float64
}

// TableResult is the outcome of [Table].
type TableResult struct {
	By         GroupBy
	InUse      bool
	Confidence float64
	// Window is the profile's window marking (see [WindowOf]); it does not
	// apply to a Go heap profile.
	Window estimate.Window
	// GoHeap is set for a heap or allocs profile of the Go runtime, and
	// HeapRate is the runtime.MemProfileRate of its samples (or of the Go
	// heap samples of a combined memory profile; 0 if there are none).
	GoHeap   bool
	HeapRate int64
	// Groups is the number of groups, Rows the largest of them (at most
	// TableOptions.N), sorted by bytes, largest first, ties by key.
	Groups int
	Rows   []TableRow
	// Total covers every group; its Key is "total".
	Total TableRow
	// UnseenHi bounds, at the table's confidence, the bytes of any group
	// with no sample in the profile (a type absent from Rows): the upper
	// bound of zero events under every mean in force. It is 0 only for a
	// window whose end is on an event.
	UnseenHi float64
}

// sampleIndexes returns the position of each of the profile's sample types
// (see [SampleTypes]) in Sample.Value, looking them up by type and unit.
func sampleIndexes(p *profile.Profile) ([pprofmt.NumSampleTypes]int, error) {
	var idx [pprofmt.NumSampleTypes]int
	var missing []string
	for i, want := range pprofmt.SampleTypes() {
		idx[i] = -1
		for j, st := range p.SampleType {
			if st.Type == want.Type && st.Unit == want.Unit {
				idx[i] = j
				break
			}
		}
		if idx[i] < 0 {
			missing = append(missing, want.Type+"/"+want.Unit)
		}
	}
	if len(missing) > 0 {
		return idx, fmt.Errorf("report: not an arenaprof profile: it lacks the sample types %s", strings.Join(missing, ", "))
	}
	return idx, checkValueCounts(p)
}

// checkValueCounts returns an error if a sample of p has other than one
// value per sample type.
func checkValueCounts(p *profile.Profile) error {
	for _, s := range p.Sample {
		if len(s.Value) != len(p.SampleType) {
			return fmt.Errorf("report: malformed profile: a sample has %d values for %d sample types", len(s.Value), len(p.SampleType))
		}
	}
	return nil
}

// stratum holds the raw sums of one group under one mean. For in-use
// samples the tail is only bounded: tailLo <= u <= tailHi.
type stratum struct {
	samples, samplesHi, tailLo, tailHi int64
}

// group accumulates one row.
type group struct {
	row     TableRow
	strata  map[int64]*stratum // arena samples, by sampling mean
	certain int64              // bytes of the sampled arena objects (0 when their size is not recorded)
	heap    heapSums           // Go heap samples
}

// errOverflow reports sums too large for int64.
var errOverflow = errors.New("report: sums overflow int64")

func addChecked(a *int64, b int64, err *error) {
	r := *a + b // wraps on overflow, which is detected below
	if (b > 0 && r < *a) || (b < 0 && r > *a) {
		*err = errOverflow
		return
	}
	*a = r
}

// sampleMean returns the mean a sample's events were drawn under: its
// sampling_mean label, else the profile's Period.
func sampleMean(s *profile.Sample, period int64) (int64, error) {
	m, ok := firstNumLabel(s, pprofmt.LabelMean)
	if !ok {
		m = period
	}
	if m < 1 || m > profiler.MaxMeanBytes {
		if ok {
			return 0, fmt.Errorf("report: a sample has sampling_mean %d, outside [1, %d]", m, int64(profiler.MaxMeanBytes))
		}
		return 0, fmt.Errorf("report: a sample has no sampling_mean label and the profile's period %d is outside [1, %d]", m, int64(profiler.MaxMeanBytes))
	}
	return m, nil
}

// checkSampleMean refuses a sample whose allocated bytes contradict the
// mean it claims (its sampling_mean label, or the profile's period): a
// profile whose labels were rewritten, or merged from profiles of different
// means under one label, would otherwise give intervals for the wrong mean.
//
// The exporter writes alloc_space = round(n * WeightedBytes(size, mean))
// for n events of one size; merging or subtracting profiles adds at most
// one unit of rounding per event (and one for a subtraction), so a sample
// is refused when alloc_space is off by more than n+1. An overflow sample
// (mixed sizes, no size label) is refused when alloc_space is below
// n*mean - (n+1): every event's weight is at least the mean.
func checkSampleMean(s *profile.Sample, allocBytes, n, tail, mean int64) error {
	if n <= 0 || allocBytes < 0 || tail < 0 {
		return nil
	}
	tol := float64(n) + 1
	size, ok := firstNumLabel(s, pprofmt.LabelBytes)
	if !ok {
		if want := float64(n) * float64(mean); float64(allocBytes) < want-tol {
			return fmt.Errorf("report: a sample contradicts its sampling mean %d: %d events weigh at least %.0f bytes at that mean, the sample has %d allocated bytes", mean, n, want, allocBytes)
		}
		return nil
	}
	w, err := estimate.WeightedBytes(size, mean)
	if err != nil {
		return fmt.Errorf("report: a sample has an unusable size or mean: %v", err)
	}
	if want := float64(n) * w; math.Abs(float64(allocBytes)-want) > tol {
		return fmt.Errorf("report: a sample contradicts its sampling mean %d: %d events of %d bytes weigh %.0f bytes at that mean, the sample has %d allocated bytes", mean, n, size, want, allocBytes)
	}
	if tail < n || float64(tail) > float64(n)*float64(size) {
		return fmt.Errorf("report: a sample's tail %d is outside [%d, %d] for %d events of %d bytes", tail, n, n*size, n, size)
	}
	return nil
}

// Table groups the samples of an arenaprof profile and returns, for each
// group, the sample events, the estimated bytes and objects and the interval
// of the true bytes at the chosen confidence, largest group first, with a
// total row.
//
// Intervals come from each group's raw sums (alloc_samples, alloc_tail),
// split by sampling_mean (a sample without one counts under the profile's
// Period), with [estimate.GroupInterval] at the profile's window marking
// ([WindowOf]). For in-use rows the event count is recovered exactly from
// the in-use bytes and the object size (the exporter sums one weight per
// event and rounds once), and the unrecorded tail is bounded by
// count <= tail <= count*size; the interval runs from the lower bound at the
// smallest tail to the upper bound at the largest.
//
// Every group also gets a stratum without events for each sampling mean
// the profile lists as in force (its "arenaprof means=" comments, or
// "arenaprof inuse_means=" for in-use values) under which it had no event:
// bytes may have been allocated under that mean without drawing one, and
// the upper bound allows for them. A group without events and a profile
// without such comments (only the total of an empty profile) gets the
// interval of zero events under the profile's period, whose upper bound is
// not zero when the window's end is not on an event. UnseenHi is the upper
// bound of a group with no sample at all.
//
// Table returns an error for a profile without the arenaprof sample types,
// negative values (a delta taken out of order), a sampling mean out of
// range, a sample whose values contradict its sampling mean (see
// checkSampleMean: labels rewritten, or profiles of different means merged
// under one label), a malformed means comment, or sums that overflow.
func Table(p *profile.Profile, opts TableOptions) (*TableResult, error) {
	if p == nil {
		return nil, errors.New("report: nil profile")
	}
	conf := opts.Confidence
	if conf == 0 {
		conf = 0.95
	}
	if !(conf > 0 && conf < 1) {
		return nil, fmt.Errorf("report: confidence %v is not strictly between 0 and 1", conf)
	}
	if opts.N < 0 {
		return nil, fmt.Errorf("report: negative number of rows %d", opts.N)
	}
	switch opts.By.Kind {
	case "", GroupByType, GroupByFunc, GroupByStack, GroupBySize:
	case GroupByLabel:
		if opts.By.Label == "" {
			return nil, errors.New("report: grouping by label needs a label key")
		}
		if err := checkLabel(p, opts.By.Label); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("report: unknown grouping %q", string(opts.By.Kind))
	}
	by := opts.By
	if by.Kind == "" {
		by.Kind = GroupByType
	}
	goHeap := isGoHeap(p)
	var idx [pprofmt.NumSampleTypes]int
	if goHeap {
		if by.Kind == GroupByType {
			return nil, errors.New("report: a Go heap profile records no types; group it by func, stack or size")
		}
		if p.Period <= 0 {
			return nil, fmt.Errorf("report: a Go heap profile written with MemProfileRate %d samples nothing; set runtime.MemProfileRate above 0 before allocating", p.Period)
		}
		if err := checkValueCounts(p); err != nil {
			return nil, err
		}
	} else {
		var err error
		if idx, err = sampleIndexes(p); err != nil {
			return nil, err
		}
	}
	groups, total, err := groupSamples(p, idx, by, opts.InUse)
	if err != nil {
		return nil, err
	}
	shown := groups
	if opts.N > 0 && len(shown) > opts.N {
		shown = shown[:opts.N]
	}
	w := pprofmt.WindowOf(p)
	means, err := meansInForce(p, opts.InUse)
	if err != nil {
		return nil, err
	}
	res := &TableResult{By: by, InUse: opts.InUse, Confidence: conf, Window: w, Groups: len(groups), HeapRate: total.heap.rate, GoHeap: goHeap}
	for _, g := range append(shown[:len(shown):len(shown)], total) {
		g.allow(means)
		if err := g.interval(conf, w, p.Period); err != nil {
			return nil, err
		}
		g.row.Share = share(g.row.Bytes, total.row.Bytes)
	}
	if !goHeap {
		unseen := &group{strata: map[int64]*stratum{}}
		unseen.allow(means)
		if err := unseen.interval(conf, w, p.Period); err != nil {
			return nil, err
		}
		res.UnseenHi = unseen.row.Hi
	}
	res.Rows = make([]TableRow, len(shown))
	for i, g := range shown {
		res.Rows[i] = g.row
	}
	res.Total = total.row
	return res, nil
}

// meansInForce returns the sampling means the profile lists as in force
// during its window (for in-use values: since the profiler started), or
// nil for a profile that does not list them.
func meansInForce(p *profile.Profile, inuse bool) ([]int64, error) {
	if inuse {
		m, ok, err := pprofmt.MeansOf(p, pprofmt.InUseMeansCommentPrefix)
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		if ok {
			return m, nil
		}
	}
	m, _, err := pprofmt.MeansOf(p, pprofmt.MeansCommentPrefix)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return m, nil
}

// allow gives the group a stratum without events for every mean in force
// under which it had none: bytes allocated under that mean may have drawn
// no event, and the interval's upper bound must allow for them. A group
// made only of Go heap samples gets none (it holds no arena memory).
func (g *group) allow(means []int64) {
	if len(g.strata) == 0 && g.heap.rate != 0 {
		return
	}
	for _, m := range means {
		if g.strata[m] == nil {
			g.strata[m] = &stratum{}
		}
	}
}

func share(part, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return float64(part) / float64(total)
}

// contribution is what one sample adds to its group: the estimates, and the
// raw sums of its model (arena: per sampling mean; Go heap: counts, size,
// rate).
type contribution struct {
	bytes, objects                     int64
	heap                               bool
	mean                               int64 // arena
	samples, samplesHi, tailLo, tailHi int64 // arena; samples/samplesHi are the counts of heap samples too
	size, rate                         int64 // heap
	certain                            int64 // arena: bytes of the sampled objects, when their size is recorded
}

// arenaContribution reads an arenaprof sample (idx from sampleIndexes).
func arenaContribution(p *profile.Profile, idx [pprofmt.NumSampleTypes]int, s *profile.Sample, inuse bool) (c contribution, skip bool, err error) {
	v := func(i int) int64 { return s.Value[idx[i]] }
	what := "alloc"
	if inuse {
		what = "inuse"
	}
	if inuse {
		c.bytes, c.objects = v(pprofmt.IndexInuseSpace), v(pprofmt.IndexInuseObjects)
	} else {
		c.bytes, c.objects = v(pprofmt.IndexAllocSpace), v(pprofmt.IndexAllocObjects)
		c.samples, c.tailLo = v(pprofmt.IndexAllocSamples), v(pprofmt.IndexAllocTail)
		c.samplesHi, c.tailHi = c.samples, c.tailLo
	}
	if c.bytes == 0 && c.objects == 0 && c.samples == 0 && c.tailLo == 0 {
		return c, true, nil // empty bucket, e.g. in a delta profile
	}
	if c.bytes < 0 || c.objects < 0 || c.samples < 0 || c.tailLo < 0 {
		return c, false, fmt.Errorf("report: a sample has negative values (%s bytes %d, objects %d, sample events %d, tail %d); subtract profiles only in time order", what, c.bytes, c.objects, c.samples, c.tailLo)
	}
	if c.mean, err = sampleMean(s, p.Period); err != nil {
		return c, false, err
	}
	if err := checkSampleMean(s, v(pprofmt.IndexAllocSpace), v(pprofmt.IndexAllocSamples), v(pprofmt.IndexAllocTail), c.mean); err != nil {
		return c, false, err
	}
	if inuse {
		c.samples, c.samplesHi, c.tailLo, c.tailHi, err = inuseRawSums(s, c.bytes, c.mean)
	}
	if size, ok := firstNumLabel(s, pprofmt.LabelBytes); ok && size > 0 && c.samples <= math.MaxInt64/size {
		c.certain = c.samples * size
	}
	return c, false, err
}

// heapContribution reads a Go heap sample: of a runtime heap profile
// (objects, bytes and in-use values at value positions hidx; the raw count
// is recovered from the scaled values) or of a combined memory profile
// (rawAlloc >= 0: the raw alloc count the exporter recorded).
func heapContribution(s *profile.Sample, hidx [4]int, rate, rawAlloc int64, inuse bool) (c contribution, skip bool, err error) {
	c.heap = true
	c.rate = rate
	if l := s.NumLabel[pprofmt.LabelHeapRate]; len(l) > 0 {
		c.rate = l[0]
	}
	if c.rate <= 0 {
		return c, false, fmt.Errorf("report: a Go heap profile written with MemProfileRate %d samples nothing; set runtime.MemProfileRate above 0 before allocating", c.rate)
	}
	c.size, _ = firstNumLabel(s, pprofmt.LabelBytes)
	ao, ab := s.Value[hidx[0]], s.Value[hidx[1]]
	io, ib := s.Value[hidx[2]], s.Value[hidx[3]]
	if inuse {
		c.objects, c.bytes = io, ib
		c.samples, c.samplesHi, err = goheap.RawCount(io, ib, c.size, c.rate)
	} else {
		c.objects, c.bytes = ao, ab
		if rawAlloc >= 0 {
			c.samples, c.samplesHi = rawAlloc, rawAlloc
		} else {
			c.samples, c.samplesHi, err = goheap.RawCount(ao, ab, c.size, c.rate)
		}
	}
	if err != nil {
		return c, false, fmt.Errorf("report: %w", err)
	}
	if c.size <= 0 && c.samples > 0 {
		c.size = max(1, int64(math.Round(float64(ab)/float64(max(ao, 1)))))
	}
	return c, c.bytes == 0 && c.objects == 0 && c.samples == 0, nil
}

// walkContributions calls fn with the contribution of every sample of p
// that holds some, reading each sample with the model of its part: Go heap
// (a Go heap profile, or the heap part of a combined memory profile) or
// arena. idx are p's arena sample indexes; a Go heap profile needs none.
func walkContributions(p *profile.Profile, idx [pprofmt.NumSampleTypes]int, inuse bool, fn func(*profile.Sample, contribution) error) error {
	goHeap := isGoHeap(p)
	hidx := heapIndexes(p)
	for _, s := range p.Sample {
		var c contribution
		var skip bool
		var err error
		switch {
		case goHeap:
			c, skip, err = heapContribution(s, hidx, p.Period, -1, inuse)
		case isHeapSample(s):
			c, skip, err = heapContribution(s, hidx, 0, s.Value[idx[pprofmt.IndexAllocSamples]], inuse)
		default:
			c, skip, err = arenaContribution(p, idx, s, inuse)
		}
		if err != nil {
			return err
		}
		if skip {
			continue
		}
		if err := fn(s, c); err != nil {
			return err
		}
	}
	return nil
}

// groupSamples aggregates the samples of p into groups by g, and their
// total. idx are the arenaprof value positions (unused for a runtime heap
// profile).
func groupSamples(p *profile.Profile, idx [pprofmt.NumSampleTypes]int, g GroupBy, inuse bool) ([]*group, *group, error) {
	byKey := map[string]*group{}
	total := &group{row: TableRow{Key: "total", Display: "total"}, strata: map[int64]*stratum{}}
	werr := walkContributions(p, idx, inuse, func(s *profile.Sample, c contribution) error {
		var err error
		key, display := g.key(s)
		grp := byKey[key]
		if grp == nil {
			if display == "" {
				display = key
			}
			grp = &group{row: TableRow{Key: key, Display: display}, strata: map[int64]*stratum{}}
			byKey[key] = grp
		}
		for _, t := range []*group{grp, total} {
			addChecked(&t.row.Bytes, c.bytes, &err)
			addChecked(&t.row.Objects, c.objects, &err)
			addChecked(&t.row.Samples, c.samples, &err)
			addChecked(&t.row.SamplesMax, c.samplesHi, &err)
			if c.heap {
				t.heap.add(c.samples, c.samplesHi, c.size, c.rate, &err)
				continue
			}
			addChecked(&t.certain, c.certain, &err)
			addChecked(&t.row.Tail, c.tailLo, &err)
			addChecked(&t.row.TailMax, c.tailHi, &err)
			st := t.strata[c.mean]
			if st == nil {
				st = &stratum{}
				t.strata[c.mean] = st
			}
			addChecked(&st.samples, c.samples, &err)
			addChecked(&st.samplesHi, c.samplesHi, &err)
			addChecked(&st.tailLo, c.tailLo, &err)
			addChecked(&st.tailHi, c.tailHi, &err)
		}
		return err
	})
	if werr != nil {
		return nil, nil, werr
	}
	groups := make([]*group, 0, len(byKey))
	for _, grp := range byKey {
		groups = append(groups, grp)
	}
	sort.Slice(groups, func(i, j int) bool {
		if groups[i].row.Bytes != groups[j].row.Bytes {
			return groups[i].row.Bytes > groups[j].row.Bytes
		}
		return groups[i].row.Key < groups[j].row.Key
	})
	return groups, total, nil
}

// inuseRawSums recovers the raw sums of the in-use objects of one sample:
// bounds on its event count and on its tail.
//
// With the object size (the bytes label): the exporter sums the same weight
// WeightedBytes(size, mean) for every in-use event of the sample and rounds
// once, so the event count is round(inuse_space / weight) exactly. The tail
// of the in-use events was not recorded; each event contributes size-offset
// in [1, size], so count <= u <= count*size.
//
// Without it (an overflow sample, which aggregates objects of mixed sizes):
// every event's weight w = size/(1-(1-1/mean)^size) is at least mean and at
// least size, and the in-use bytes B are the rounded sum of the weights, so
// 1 <= count <= (B+1/2)/mean and count <= u <= B. Interval bounds grow with
// both the count and the tail, so the lower bound taken at the smallest
// (count, tail) and the upper at the largest still cover.
func inuseRawSums(s *profile.Sample, inuseBytes, mean int64) (count, countHi, tailLo, tailHi int64, err error) {
	size, ok := firstNumLabel(s, pprofmt.LabelBytes)
	if !ok {
		if inuseBytes <= 0 {
			return 0, 0, 0, 0, nil
		}
		countHi = max(1, int64((float64(inuseBytes)+0.5)/float64(mean)))
		return 1, countHi, 1, inuseBytes, nil
	}
	w, werr := estimate.WeightedBytes(size, mean)
	if werr != nil {
		return 0, 0, 0, 0, fmt.Errorf("report: a sample has an unusable size or mean: %v", werr)
	}
	c := math.Round(float64(inuseBytes) / w)
	if inuseBytes > 0 && c < 1 {
		return 0, 0, 0, 0, fmt.Errorf("report: a sample has %d in-use bytes, less than the weight %.0f of one event of %d bytes at mean %d", inuseBytes, w, size, mean)
	}
	if c >= math.MaxInt64 {
		return 0, 0, 0, 0, errOverflow
	}
	count = int64(c)
	hi, lo := bits.Mul64(uint64(count), uint64(size))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, 0, 0, 0, errOverflow
	}
	return count, count, count, int64(lo), nil
}

// interval fills row.Lo and row.Hi from the strata. For alloc the tail is
// exact; for inuse Lo uses the smallest possible tail and Hi the largest.
func (g *group) interval(conf float64, w estimate.Window, period int64) error {
	hasHeap := g.heap.rate != 0
	if !hasHeap {
		return g.arenaInterval(conf, w, period)
	}
	if len(g.strata) == 0 {
		lo, hi, err := g.heap.interval(conf)
		if err != nil {
			return fmt.Errorf("report: interval of group %q: %v", g.row.Key, err)
		}
		g.row.Lo, g.row.Hi = lo, hi
		return nil
	}
	// Arena and Go heap samples: each part at confidence 1-(1-conf)/2, so
	// that both hold together with probability at least conf.
	half := 1 - (1-conf)/2
	if err := g.arenaInterval(half, w, period); err != nil {
		return err
	}
	lo, hi, err := g.heap.interval(half)
	if err != nil {
		return fmt.Errorf("report: interval of group %q: %v", g.row.Key, err)
	}
	g.row.Lo += lo
	g.row.Hi += hi
	return nil
}

func (g *group) arenaInterval(conf float64, w estimate.Window, period int64) error {
	if len(g.strata) == 0 {
		if period < 1 || period > profiler.MaxMeanBytes {
			g.row.Lo, g.row.Hi = 0, 0
			return nil
		}
		g.strata[period] = &stratum{}
	}
	means := make([]int64, 0, len(g.strata))
	for m := range g.strata {
		means = append(means, m)
	}
	sort.Slice(means, func(i, j int) bool { return means[i] < means[j] })
	lo := make([]estimate.MeanSums, len(means))
	hi := make([]estimate.MeanSums, len(means))
	for i, m := range means {
		st := g.strata[m]
		lo[i] = estimate.MeanSums{Samples: st.samples, Tail: st.tailLo, MeanBytes: m}
		hi[i] = estimate.MeanSums{Samples: st.samplesHi, Tail: st.tailHi, MeanBytes: m}
	}
	// A row with events is shown because it has them: its lower bound is
	// conditional on that (estimate.SampledGroupInterval).
	interval := estimate.GroupInterval
	if g.row.Samples > 0 {
		interval = estimate.SampledGroupInterval
	}
	in, err := interval(lo, conf, w)
	if err != nil {
		return fmt.Errorf("report: interval of group %q: %v", g.row.Key, err)
	}
	g.row.Lo, g.row.Hi = in.Lo, in.Hi
	if g.row.TailMax != g.row.Tail || g.row.SamplesMax != g.row.Samples {
		in, err = estimate.GroupInterval(hi, conf, w)
		if err != nil {
			return fmt.Errorf("report: interval of group %q: %v", g.row.Key, err)
		}
		g.row.Hi = in.Hi
	}
	// The sampled objects exist: their bytes are a lower bound.
	g.row.Lo = max(g.row.Lo, float64(g.certain))
	g.row.Hi = max(g.row.Hi, g.row.Lo)
	if math.IsNaN(g.row.Lo) || math.IsNaN(g.row.Hi) || math.IsInf(g.row.Lo, 0) || math.IsInf(g.row.Hi, 0) {
		return fmt.Errorf("report: interval of group %q is not finite", g.row.Key)
	}
	return nil
}

// checkLabel returns an error if p has samples but none carries the string
// label key, naming the labels they do carry: grouping by it would give a
// single "(none)" row.
func checkLabel(p *profile.Profile, key string) error {
	if len(p.Sample) == 0 {
		return nil
	}
	str, num := map[string]bool{}, map[string]bool{}
	for _, s := range p.Sample {
		if len(s.Label[key]) > 0 {
			return nil
		}
		for k := range s.Label {
			str[k] = true
		}
		for k := range s.NumLabel {
			num[k] = true
		}
	}
	if num[key] {
		hint := ""
		if key == pprofmt.LabelBytes {
			hint = "; group by object size with the grouping size"
		}
		return fmt.Errorf("report: %q is a numeric label, not a string label%s", key, hint)
	}
	names := slices.Sorted(maps.Keys(str))
	if len(names) == 0 {
		return fmt.Errorf("report: no sample carries the label %q, nor any string label", key)
	}
	return fmt.Errorf("report: no sample carries the label %q; the profile's string labels are %s", key, strings.Join(names, ", "))
}
