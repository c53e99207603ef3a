package report

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/goheap"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// AdviseOptions configure [Advise].
type AdviseOptions struct {
	// By is the grouping: "site" (the zero value), "func", "stack" or
	// "label=KEY". A site is named by the first frame of the stack outside
	// the standard library and the runtime (the frame a user can change:
	// main's, or a module's), then the leaf that allocated, as in
	// "main.handle via reflect.growslice"; a stack wholly in the standard
	// library by its leaf, marked "(standard library only)". The others
	// are spelled as in [TableOptions.By].
	By string
	// Confidence of every interval, strictly between 0 and 1; 0 means
	// 0.95.
	Confidence float64
	// Lifetime is the longest mean lifetime of a candidate for an arena;
	// 0 means 100ms, the span of a request.
	Lifetime time.Duration
	// N keeps the N first rows in AdviseResult.Rows; 0 keeps all. The
	// total and the predicted saving always cover every group.
	N int
	// GoVersion and AnyOrder are as in [TableOptions].
	GoVersion string
	AnyOrder  bool
}

// SizeCount is the estimated number of objects of one size a group
// allocated in the window.
type SizeCount struct {
	Size    int64   // bytes per object (the profile's label "bytes")
	Objects float64 // estimated objects of that size
}

// AdviseRow is one group of [Advise] (or its total).
type AdviseRow struct {
	// Key and Display are as in [TableRow].
	Key, Display string
	// Alloc estimates the bytes the group allocated in the window;
	// AllocLo and AllocHi bound them at the result's confidence.
	// AllocSamples is the number of sampled objects behind it.
	Alloc, AllocLo, AllocHi float64
	AllocSamples            int64
	// Live estimates the group's bytes in use at the later profile;
	// LiveLo and LiveHi bound them. LiveSamples is the number of sampled
	// objects behind it.
	Live, LiveLo, LiveHi float64
	LiveSamples          int64
	// Lifetime is the mean lifetime of the group's objects by Little's
	// law, Live / (Alloc / window); LifetimeLo and LifetimeHi bound it at
	// the result's confidence (each side's bytes bounded at half its miss
	// probability). Lifetime and LifetimeHi are +Inf for a group that
	// allocated nothing sampled in the window.
	Lifetime, LifetimeLo, LifetimeHi time.Duration
	// Candidate reports that the group allocated in the window and its
	// LifetimeHi is at most AdviseOptions.Lifetime: its objects die
	// young enough to live in a request's arena.
	Candidate bool
	// Undecided reports that the group allocated in the window and is no
	// candidate although LifetimeLo is at most AdviseOptions.Lifetime:
	// the profiles cannot tell whether its objects die young enough.
	Undecided bool
	// Sizes are the object sizes the group allocated in the window, most
	// bytes first: one size calls for arena.New of its type, many sizes
	// or large ones for arena.MakeSlice.
	Sizes []SizeCount
}

// AdviseResult is the outcome of [Advise].
type AdviseResult struct {
	By         string // the grouping, "" spelled "site"
	Confidence float64
	Lifetime   time.Duration
	// Window is the time between the two profiles, from their own
	// timestamps.
	Window time.Duration
	// HeapRate is runtime.MemProfileRate; HeapSampler, HeapGoVersion and
	// AnyOrder are as in [TableResult].
	HeapRate                   int64
	HeapSampler, HeapGoVersion string
	AnyOrder                   bool
	// Groups is the number of groups with samples in the window or in use
	// at its end; Candidates the number of them that are candidates.
	// Rows are the first of them (at most AdviseOptions.N): candidates
	// first, then the rest, each by Alloc, largest first, ties by key.
	Groups, Candidates int
	// Undecided counts the groups that allocated in the window and are
	// no candidates although their lifetime's lower bound is at most
	// AdviseOptions.Lifetime: the profiles cannot tell whether they die
	// young. MinAllocRate is the allocation rate, in bytes per second, a
	// group never seen in use needs to be a candidate (MemProfileRate
	// times ln(2/alpha), alpha the miss probability of each side of a
	// lifetime, over Lifetime): lowering MemProfileRate lowers it.
	Undecided    int
	MinAllocRate float64
	Rows         []AdviseRow
	// Total covers every group, and what no sample saw.
	Total AdviseRow
	// GCSaving is the candidates' share of all bytes allocated in the
	// window: under GOGC pacing, the share of GC cycles saved when the
	// candidates allocate in arenas instead. GCSavingLo and GCSavingHi
	// bound it at the result's confidence. See ACCURACY.md, "Advice".
	GCSaving, GCSavingLo, GCSavingHi float64
	// Limits states, in one sentence, where GCSaving stops predicting the
	// GC cycles saved (GOMEMLIMIT pacing, a changing live heap, objects
	// that outlive their arena); Advise sets it and [FormatAdvise] prints
	// it under the saving.
	Limits string
}

// Advise reads two cumulative Go heap profiles of one process, earlier
// and later (runtime/pprof's heap or allocs profile, net/http/pprof's
// /debug/pprof/heap), and says which groups of allocations to move into
// arenas: for each group the bytes allocated between them, the bytes in
// use at later, the mean lifetime of the group's objects by Little's law
// (live bytes over the window's allocation rate), each with an interval
// at opts.Confidence, and whether the group is a candidate (its
// lifetime's upper bound at most opts.Lifetime). The predicted saving is
// the candidates' share of every byte allocated in the window, with its
// interval.
//
// The runtime publishes a heap profile's counts at the end of a garbage
// collection cycle: take both profiles right after one (net/http/pprof's
// ?gc=1, runtime.GC before pprof's WriteTo), or the window's ends are
// those of the last cycles before them.
//
// Advise returns an error, and no numbers, for profiles that are not Go
// heap profiles (an arenaprof profile is read by [Table]), unsymbolized
// profiles grouped by func or stack, profiles of two binaries, a later
// profile no later than the earlier one or with counts below the earlier
// one's (two processes, or a restart), and a change of MemProfileRate
// between them.
func Advise(earlier, later *profile.Profile, opts AdviseOptions) (*AdviseResult, error) {
	if earlier == nil || later == nil {
		return nil, errors.New("report: Advise of a nil profile")
	}
	conf := opts.Confidence
	if conf == 0 {
		conf = 0.95
	}
	if !(conf > 0 && conf < 1) {
		return nil, fmt.Errorf("report: confidence %v is not strictly between 0 and 1", conf)
	}
	life := opts.Lifetime
	if life == 0 {
		life = 100 * time.Millisecond
	}
	if life < 0 {
		return nil, fmt.Errorf("report: negative lifetime %v", life)
	}
	if opts.N < 0 {
		return nil, fmt.Errorf("report: negative number of rows %d", opts.N)
	}
	by := groupBy(opts.By)
	if by == "" {
		by = groupBy(groupBySite)
	}
	if k := by.kind(); k != groupBySite && k != groupByFunc && k != groupByStack && k != groupByLabel {
		return nil, fmt.Errorf("report: Advise groups by site, func, stack or label=KEY, not %q", by)
	}
	fe, _ := pprofmt.Describe(earlier) // groupHeap's modelOf returns the errors
	fl, _ := pprofmt.Describe(later)
	window, err := checkAdvisePair(earlier, later, fe, fl, by)
	if err != nil {
		return nil, err
	}
	delta, err := heapDelta(earlier, later, fe.Heap, fl.Heap)
	if err != nil {
		return nil, err
	}
	fd, _ := pprofmt.Describe(delta)
	topts := TableOptions{By: string(by), Confidence: conf, GoVersion: opts.GoVersion, AnyOrder: opts.AnyOrder}
	ag, hm, err := groupHeap(delta, fd, topts)
	if err != nil {
		return nil, err
	}
	topts.InUse = true
	lg, _, err := groupHeap(later, fl, topts)
	if err != nil {
		return nil, err
	}
	a := adviser{conf: conf, half: (1 + conf) / 2, window: window, rate: later.Period, rule: hm.rule, anyOrder: opts.AnyOrder}
	res := &AdviseResult{By: string(by), Confidence: conf, Lifetime: life, Window: window, HeapRate: later.Period,
		MinAllocRate: float64(later.Period) * math.Log(2/(1-a.half)) / life.Seconds(),
		Limits:       savingLimits, HeapSampler: hm.rule.String(), HeapGoVersion: hm.goVersion, AnyOrder: opts.AnyOrder}
	keys := slices.Collect(maps.Keys(ag.groups))
	for k := range lg.groups {
		if ag.groups[k] == nil {
			keys = append(keys, k)
		}
	}
	rows := make([]AdviseRow, 0, len(keys))
	candidates := counts{map[int64]int64{}, map[int64]int64{}} // the candidates' raw alloc counts
	for _, k := range keys {
		r, err := a.row(ag.groups[k], lg.groups[k], false)
		if err != nil {
			return nil, err
		}
		r.Candidate = r.AllocSamples > 0 && r.LifetimeHi <= life
		r.Undecided = r.AllocSamples > 0 && !r.Candidate && r.LifetimeLo <= life
		if r.Undecided {
			res.Undecided++
		}
		if r.Candidate {
			res.Candidates++
			c := heapCounts(ag.groups[k])
			for s, n := range c.lo {
				candidates.lo[s] += n
			}
			for s, n := range c.hi {
				candidates.hi[s] += n
			}
		}
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(x, y AdviseRow) int {
		if x.Candidate != y.Candidate {
			if x.Candidate {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(y.Alloc, x.Alloc); c != 0 {
			return c
		}
		return cmp.Compare(x.Key, y.Key)
	})
	res.Groups = len(rows)
	if opts.N > 0 && len(rows) > opts.N {
		rows = rows[:opts.N]
	}
	res.Rows = rows
	if res.Total, err = a.row(ag.total, lg.total, true); err != nil {
		return nil, err
	}
	res.GCSaving, res.GCSavingLo, res.GCSavingHi, err = a.saving(candidates, heapCounts(ag.total))
	if err != nil {
		return nil, err
	}
	return res, nil
}

// groupHeap groups the samples of a Go heap profile, whose facts are f,
// without intervals.
func groupHeap(p *profile.Profile, f *pprofmt.Facts, opts TableOptions) (*grouped, *heapModel, error) {
	by := groupBy(opts.By)
	if by.kind() == groupByLabel {
		if err := checkLabel(f, by.label()); err != nil {
			return nil, nil, err
		}
	}
	m, err := modelOf(f, by, opts)
	if err != nil {
		return nil, nil, err
	}
	hm, ok := m.(*heapModel)
	if !ok {
		return nil, nil, errors.New("report: Advise reads Go heap profiles only")
	}
	g, err := groupSamples(p, m, by)
	return g, hm, err
}

// counts are a group's raw counts by object size: lo <= true count <= hi
// (they differ only for in-use samples at a MemProfileRate below 129,
// whose raw count the scaled values only bound).
type counts struct{ lo, hi map[int64]int64 }

// heapCounts returns a group's raw counts (none for no group).
func heapCounts(g *group) counts {
	if g == nil {
		return counts{}
	}
	if h, ok := g.sums.(*heapSums); ok {
		return counts{h.count, h.countHi}
	}
	return counts{}
}

// adviser bounds the rows of Advise.
type adviser struct {
	conf, half float64 // the confidence, and the one of each side of a lifetime
	window     time.Duration
	rate       int64
	rule       goheap.Rule
	anyOrder   bool
}

// bounds returns the interval of bytes of raw counts c at conf: a
// group's (total false), or the whole profile's or what lies outside a
// set of groups (total true: any order, and unsampled bytes). Without
// samples it is [0, R·ln(2/alpha)]: a group may have allocated that much
// unseen.
func (a adviser) bounds(c counts, total bool, conf float64) (lo, hi float64, err error) {
	b := goheap.Group
	switch {
	case total:
		b = goheap.Total
	case a.anyOrder:
		b = goheap.AnyOrder
	}
	lo, hi, err = goheap.Interval(goheap.Strata(c.lo), a.rate, a.rule, b, conf)
	if err == nil && !maps.Equal(c.lo, c.hi) {
		_, hi, err = goheap.Interval(goheap.Strata(c.hi), a.rate, a.rule, b, conf)
	}
	return lo, max(lo, hi), err
}

// row returns a group's row from its groups in the window's delta
// (alloc) and in the later profile (live); either may be nil.
func (a adviser) row(alloc, live *group, total bool) (AdviseRow, error) {
	var r AdviseRow
	var err error
	for _, g := range []*group{alloc, live} {
		if g != nil {
			r.Key, r.Display = g.row.Key, g.row.Display
		}
	}
	ac, lc := heapCounts(alloc), heapCounts(live)
	if alloc != nil {
		r.Alloc, r.AllocSamples = float64(alloc.row.Bytes), alloc.row.Samples
	}
	if live != nil {
		r.Live, r.LiveSamples = float64(live.row.Bytes), live.row.Samples
	}
	if r.AllocLo, r.AllocHi, err = a.bounds(ac, total, a.conf); err != nil {
		return r, fmt.Errorf("report: alloc interval of group %q: %v", r.Key, err)
	}
	if r.LiveLo, r.LiveHi, err = a.bounds(lc, total, a.conf); err != nil {
		return r, fmt.Errorf("report: live interval of group %q: %v", r.Key, err)
	}
	aLo, aHi, err := a.bounds(ac, total, a.half)
	if err != nil {
		return r, fmt.Errorf("report: alloc interval of group %q: %v", r.Key, err)
	}
	lLo, lHi, err := a.bounds(lc, total, a.half)
	if err != nil {
		return r, fmt.Errorf("report: live interval of group %q: %v", r.Key, err)
	}
	w := a.window.Seconds()
	r.Lifetime = seconds(r.Live, r.Alloc, w)
	r.LifetimeLo = seconds(lLo, aHi, w)
	r.LifetimeHi = seconds(lHi, aLo, w)
	r.Sizes = a.sizes(ac.lo)
	return r, nil
}

// seconds is live·window/alloc as a duration: +Inf (the largest
// duration) when alloc is 0 and live is not, 0 when both are.
func seconds(live, alloc, window float64) time.Duration {
	if live <= 0 {
		return 0
	}
	s := live * window / alloc
	if alloc <= 0 || s*1e9 >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(math.Round(s * 1e9))
}

// sizes returns the estimated objects by size of raw counts, most bytes
// first.
func (a adviser) sizes(counts map[int64]int64) []SizeCount {
	out := make([]SizeCount, 0, len(counts))
	for s, c := range counts {
		if c > 0 && s > 0 {
			out = append(out, SizeCount{Size: s, Objects: float64(c) * a.rule.Weight(s, a.rate) / float64(s)})
		}
	}
	slices.SortFunc(out, func(x, y SizeCount) int {
		if c := cmp.Compare(y.Objects*float64(y.Size), x.Objects*float64(x.Size)); c != 0 {
			return c
		}
		return cmp.Compare(x.Size, y.Size)
	})
	return out
}

// saving returns the candidates' share of the bytes allocated in the
// window and its interval: with C the candidates' bytes and O the rest
// (every other group, and what no sample saw), the share C/(C+O) rises
// with C and falls with O, so bounds on C and O that hold together bound
// it. Each is taken at half the miss probability (Bonferroni), whatever
// the dependence between them.
func (a adviser) saving(cand, total counts) (share, lo, hi float64, err error) {
	if len(cand.lo) == 0 {
		return 0, 0, 0, nil
	}
	// The rest: at least the total's least count less the candidates'
	// largest, at most the total's largest less the candidates' least.
	rest := counts{map[int64]int64{}, map[int64]int64{}}
	var cBytes, tBytes float64
	for s, c := range total.lo {
		if d := c - cand.hi[s]; d > 0 {
			rest.lo[s] = d
		}
		tBytes += float64(c) * a.rule.Weight(s, a.rate)
		cBytes += float64(cand.lo[s]) * a.rule.Weight(s, a.rate)
	}
	for s, c := range total.hi {
		if d := c - cand.lo[s]; d > 0 {
			rest.hi[s] = d
		}
	}
	cLo, cHi, err := a.bounds(cand, false, a.half)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("report: the candidates' interval: %v", err)
	}
	oLo, oHi, err := a.bounds(rest, true, a.half)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("report: the other groups' interval: %v", err)
	}
	if tBytes > 0 {
		share = cBytes / tBytes
	}
	lo, hi = cLo/(cLo+oHi), cHi/(cHi+oLo)
	return share, min(lo, share), max(hi, share), nil
}

// checkAdvisePair checks that earlier and later are Go heap profiles of
// one process, later the later, at one MemProfileRate, and returns the
// window between them.
func checkAdvisePair(earlier, later *profile.Profile, fe, fl *pprofmt.Facts, by groupBy) (time.Duration, error) {
	for i, p := range []*profile.Profile{earlier, later} {
		name := [2]string{"EARLIER", "LATER"}[i]
		if f := [2]*pprofmt.Facts{fe, fl}[i]; f.Kind != pprofmt.KindGoHeap {
			if f.Kind == pprofmt.KindArena || f.Kind == pprofmt.KindHoldings {
				return 0, fmt.Errorf("report: %s is an arenaprof profile, not a Go heap profile: its memory is in arenas already; read it with arenaprof top (Table)", name)
			}
			return 0, fmt.Errorf("report: %s is not a Go heap profile (sample types %s); advise reads /debug/pprof/heap or runtime/pprof's heap profile", name, sampleTypeNames(p))
		}
		if p.Period <= 0 {
			return 0, fmt.Errorf("report: %s was written with MemProfileRate %d, which samples nothing", name, p.Period)
		}
		if f := [2]*pprofmt.Facts{fe, fl}[i]; f.HeapRaw[0] >= 0 {
			return 0, fmt.Errorf("report: %s is a merge of several Go heap profiles (Merge): advise compares two profiles of one process, each as runtime/pprof wrote it", name)
		}
		if by.kind() != groupByLabel {
			if err := pprofmt.CheckSymbolized(p); err != nil {
				return 0, fmt.Errorf("report: %s: %s", name, strings.TrimPrefix(err.Error(), "report: "))
			}
		}
		if p.TimeNanos == 0 {
			return 0, fmt.Errorf("report: %s records no time; advise needs the profiles' own times for the window", name)
		}
	}
	if be, bl := mainBuildID(earlier), mainBuildID(later); be != "" && bl != "" && be != bl {
		return 0, fmt.Errorf("report: the profiles are of two binaries (build IDs %s and %s); advise compares two profiles of one process", be, bl)
	}
	if earlier.Period != later.Period {
		return 0, fmt.Errorf("report: MemProfileRate changed from %d (EARLIER) to %d (LATER): the runtime scales every record by the rate in force when it writes, so the window cannot be read; set runtime.MemProfileRate once, before allocating", earlier.Period, later.Period)
	}
	if later.TimeNanos <= earlier.TimeNanos {
		return 0, fmt.Errorf("report: LATER (%s) is not later than EARLIER (%s); give the older profile first",
			time.Unix(0, later.TimeNanos).UTC().Format(time.RFC3339Nano), time.Unix(0, earlier.TimeNanos).UTC().Format(time.RFC3339Nano))
	}
	return time.Duration(later.TimeNanos - earlier.TimeNanos), nil
}

// mainBuildID is the build ID of a profile's main binary, "" if none.
func mainBuildID(p *profile.Profile) string {
	if len(p.Mapping) == 0 {
		return ""
	}
	return p.Mapping[0].BuildID
}

// sampleTypeNames lists a profile's sample types.
func sampleTypeNames(p *profile.Profile) string {
	names := make([]string, len(p.SampleType))
	for i, st := range p.SampleType {
		names[i] = st.Type
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// heapDelta returns later minus earlier: a Go heap profile whose alloc
// values are what each record allocated between them, and whose in-use
// values are 0. The runtime never drops a record, so every record of
// earlier must be in later with counts at least as high; otherwise the
// profiles are of two processes, or the process restarted.
func heapDelta(earlier, later *profile.Profile, eidx, idx [4]int) (*profile.Profile, error) {
	var kb keyBuilder
	before, _ := allocRecords(earlier, eidx, &kb)
	after, order := allocRecords(later, idx, &kb)
	d := &profile.Profile{
		SampleType: later.SampleType, DefaultSampleType: later.DefaultSampleType,
		PeriodType: later.PeriodType, Period: later.Period, Comments: later.Comments,
		Mapping: later.Mapping, Location: later.Location, Function: later.Function,
		TimeNanos: later.TimeNanos, DurationNanos: later.TimeNanos - earlier.TimeNanos,
		Sample: make([]*profile.Sample, 0, len(order)),
	}
	for k, e := range before {
		if after[k] == nil {
			return nil, fmt.Errorf("report: EARLIER has allocations at %s that LATER lacks: the profiles are of two processes, or the process restarted between them", describeSample(e.s))
		}
	}
	for _, k := range order {
		r := after[k]
		if e := before[k]; e != nil {
			r.objects -= e.objects
			r.bytes -= e.bytes
			if r.objects < 0 || r.bytes < 0 {
				return nil, fmt.Errorf("report: LATER counts fewer allocations than EARLIER at %s: the profiles are of two processes, or the process restarted between them", describeSample(r.s))
			}
		}
		if r.objects == 0 && r.bytes == 0 {
			continue
		}
		v := make([]int64, len(r.s.Value))
		v[idx[0]], v[idx[1]] = r.objects, r.bytes
		d.Sample = append(d.Sample, &profile.Sample{Location: r.s.Location, Value: v, Label: r.s.Label, NumLabel: r.s.NumLabel, NumUnit: r.s.NumUnit})
	}
	return d, nil
}

// allocRecord is the alloc values of the samples of one record.
type allocRecord struct {
	s              *profile.Sample // the first of them
	objects, bytes int64
}

// allocRecords returns the alloc values of p's samples by record key (see
// keyBuilder), samples of one key summed (runtime/pprof writes records
// that differ only in hidden runtime frames apart), and the keys in the
// order of their first sample.
func allocRecords(p *profile.Profile, idx [4]int, kb *keyBuilder) (map[recordKey]*allocRecord, []recordKey) {
	recs := make(map[recordKey]*allocRecord, len(p.Sample))
	order := make([]recordKey, 0, len(p.Sample))
	for _, s := range p.Sample {
		if s.Value[idx[0]] == 0 && s.Value[idx[1]] == 0 {
			// A record whose first allocations the runtime has not
			// published yet (they are, at the end of the next GC cycle):
			// runtime/pprof writes it with zero values and no size.
			continue
		}
		k := kb.key(s)
		r := recs[k]
		if r == nil {
			r = &allocRecord{s: s}
			recs[k] = r
			order = append(order, k)
		}
		r.objects += s.Value[idx[0]]
		r.bytes += s.Value[idx[1]]
	}
	return recs, order
}

// recordKey identifies a heap record: two 64-bit hashes of its stack
// (each frame's address, functions and lines), labels and object size.
// Two records of 200,000 collide with probability about 1e-28.
type recordKey [2]uint64

// keyBuilder builds the keys of heap records; the seeds are this
// process's, so keys compare within one process only.
type keyBuilder struct {
	b     []byte
	seeds [2]maphash.Seed
	init  bool
}

func (kb *keyBuilder) key(s *profile.Sample) recordKey {
	if !kb.init {
		kb.seeds, kb.init = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, true
	}
	b := kb.b[:0]
	for _, loc := range s.Location {
		b = binary.LittleEndian.AppendUint64(b, loc.Address)
		for _, ln := range loc.Line {
			if ln.Function != nil {
				b = append(b, ln.Function.Name...)
			}
			b = append(b, 0)
			b = binary.LittleEndian.AppendUint64(b, uint64(ln.Line))
		}
		b = append(b, 0xff)
	}
	if len(s.Label) > 0 {
		for _, k := range slices.Sorted(maps.Keys(s.Label)) {
			b = append(b, k...)
			b = append(b, 0)
			for _, v := range s.Label[k] {
				b = append(b, v...)
				b = append(b, 0)
			}
			b = append(b, 0xfe)
		}
	}
	if sz, ok := firstNumLabel(s, pprofmt.LabelBytes); ok {
		b = append(b, "#bytes="...)
		b = binary.LittleEndian.AppendUint64(b, uint64(sz))
	}
	kb.b = b
	return recordKey{maphash.Bytes(kb.seeds[0], b), maphash.Bytes(kb.seeds[1], b)}
}

// describeSample names a sample by its leaf function and object size.
func describeSample(s *profile.Sample) string {
	where := "a stack without functions"
	if len(s.Location) > 0 {
		where = fmt.Sprintf("0x%x", s.Location[0].Address)
		if ln := s.Location[0].Line; len(ln) > 0 && ln[0].Function != nil {
			where = ln[0].Function.Name
		}
	}
	if sz, ok := firstNumLabel(s, pprofmt.LabelBytes); ok {
		where += fmt.Sprintf(" (%d-byte objects)", sz)
	}
	return where
}
