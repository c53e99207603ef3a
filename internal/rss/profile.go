package rss

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/goheap"
	"github.com/arenaprof/arenaprof/internal/holdings"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// The resident-memory profile's format.
const (
	// SampleResident is the default sample type: resident bytes, summing to
	// the RSS.
	SampleResident = "resident"
	// SampleHeapCount is the raw count of sampled objects of a
	// go/heap/live row (0 on every other sample), with its object size in
	// the numeric label bytes and the MemProfileRate in memprofilerate:
	// what the intervals are computed from.
	SampleHeapCount = "heap_samples"
	// Comment prefixes.
	commentMark    = "arenaprof rss: resident memory by class"
	commentRSS     = "arenaprof rss_bytes="
	commentTime    = "arenaprof read="
	commentCurrent = "arenaprof cgroup_memory_current="
	commentMax     = "arenaprof cgroup_memory_max="
	commentLimit   = "arenaprof gomemlimit="
	commentNote    = "arenaprof note: "
	commentNoSmaps = "arenaprof smaps=unread"
	// commentPeak marks a peak profile: the highest RSS the watch saw
	// since the time it gives (RFC 3339), read every WatchTick.
	commentPeak = "arenaprof rss peak since="
	// restFrame is the frame of go/heap/live's bytes not in a sampled
	// row's estimate: the exact class total minus the estimates.
	restFrame = "(exact total minus sampled estimates)"
)

// builder lists the cached locations and functions a profile uses, and
// hands out samples, their values and the location lists of the samples
// not of go/heap/live from slabs. symbols is locked while it builds.
type builder struct {
	p      *profile.Profile
	gen    uint64
	labels map[string]map[string][]string
	nums   map[[2]int64]map[string][]int64
	units  map[string][]string
	// The slabs: samples, two values each, and location lists.
	samples []profile.Sample
	values  []int64
	locSlab []*profile.Location
}

// use lists a cached location, and its functions, in the profile the
// first time a sample uses it.
func (b *builder) use(cl *cachedLoc) *profile.Location {
	if cl.mark != b.gen {
		cl.mark = b.gen
		b.p.Location = append(b.p.Location, cl.loc)
		for _, f := range cl.funcs {
			if f.mark != b.gen {
				f.mark = b.gen
				b.p.Function = append(b.p.Function, f.fn)
			}
		}
	}
	return cl.loc
}

// locList returns a location list of length n from the slab.
func (b *builder) locList(n int) []*profile.Location {
	if len(b.locSlab)+n > cap(b.locSlab) {
		b.locSlab = make([]*profile.Location, 0, max(1024, n))
	}
	b.locSlab = b.locSlab[:len(b.locSlab)+n]
	return b.locSlab[len(b.locSlab)-n : len(b.locSlab) : len(b.locSlab)]
}

// sample returns a sample from the slab, with its two values in the
// order of pprofmt.RSSSampleTypes: the raw count, then the resident
// bytes.
func (b *builder) sample(v, count int64) *profile.Sample {
	if len(b.samples) == cap(b.samples) {
		n := max(64, min(cap(b.p.Sample)-len(b.p.Sample), 1<<14))
		b.samples = make([]profile.Sample, 0, n)
		b.values = make([]int64, 0, 2*n)
	}
	b.samples = b.samples[:len(b.samples)+1]
	b.values = append(b.values, count, v)
	s := &b.samples[len(b.samples)-1]
	s.Value = b.values[len(b.values)-2 : len(b.values) : len(b.values)]
	return s
}

// numLabel returns the numeric labels of a go/heap/live row of object
// size size at MemProfileRate rate, one map for each pair.
func (b *builder) numLabel(size, rate int64) map[string][]int64 {
	k := [2]int64{size, rate}
	if m, ok := b.nums[k]; ok {
		return m
	}
	m := map[string][]int64{pprofmt.LabelBytes: {size}, pprofmt.LabelHeapRate: {rate}}
	b.nums[k] = m
	return m
}

func (b *builder) classLabel(class string) map[string][]string {
	if m, ok := b.labels[class]; ok {
		return m
	}
	m := map[string][]string{pprofmt.LabelClass: {class}}
	b.labels[class] = m
	return m
}

// Profile writes r and its breakdown as a resident-memory profile. Its
// locations and functions, and its go/heap/live samples' location lists,
// are shared with the other profiles built (see symbols): it must not be
// modified but for its samples' values and labels and its comments and
// times (profile.Merge and Compact copy it whole).
func Profile(r *Reading, bd *Breakdown) (*profile.Profile, error) {
	p := &profile.Profile{
		SampleType:        pprofmt.RSSSampleTypes(),
		DefaultSampleType: SampleResident,
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            r.Rate,
		TimeNanos:         r.Time.UnixNano(),
	}
	n := len(r.Heap) + 2*len(r.Holdings) + len(Classes) + 3
	p.Sample = make([]*profile.Sample, 0, n)
	symbols.Lock()
	defer symbols.Unlock()
	resetSymbols()
	symbols.gen++
	b := &builder{p: p, gen: symbols.gen, labels: map[string]map[string][]string{},
		nums:    map[[2]int64]map[string][]int64{},
		units:   map[string][]string{pprofmt.LabelBytes: {"bytes"}, pprofmt.LabelHeapRate: {"bytes"}},
		samples: make([]profile.Sample, 0, n), values: make([]int64, 0, 2*n)}
	p.Comments = append(p.Comments, commentMark, pprofmt.GoVersionComment(runtime.Version()),
		commentTime+r.Time.UTC().Format(time.RFC3339Nano))
	if r.SmapsErr != nil {
		p.Comments = append(p.Comments, commentNoSmaps)
	} else {
		p.Comments = append(p.Comments, fmt.Sprintf("%s%d", commentRSS, bd.RSS))
	}
	if r.CgroupCurrent >= 0 {
		p.Comments = append(p.Comments, fmt.Sprintf("%s%d", commentCurrent, r.CgroupCurrent))
	}
	if r.CgroupMax >= 0 {
		p.Comments = append(p.Comments, fmt.Sprintf("%s%d", commentMax, r.CgroupMax))
	}
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		p.Comments = append(p.Comments, fmt.Sprintf("%s%d", commentLimit, l))
	}
	for _, n := range bd.Notes {
		p.Comments = append(p.Comments, commentNote+n)
	}
	add := func(class string, site []*profile.Location, v, count int64, num map[string][]int64) {
		cf := classFrames(class)
		locs := b.locList(len(site) + len(cf))
		copy(locs, site)
		for i, cl := range cf {
			locs[len(site)+i] = b.use(cl)
		}
		s := b.sample(v, count)
		s.Location, s.Label, s.NumLabel = locs, b.classLabel(class), num
		if num != nil {
			s.NumUnit = b.units
		}
		p.Sample = append(p.Sample, s)
	}
	// go/heap/live by site: each record's estimate under the runtime's
	// sampler rule, then the rest of the exact total.
	rule, err := goheap.RuleOf(runtime.Version())
	if err != nil {
		return nil, err
	}
	if bd.Bytes[iLive] > 0 && r.Rate > 0 && len(r.Heap) > 0 {
		b.heapRows(r, rule, bd.Bytes[iLive], add)
	} else if bd.Bytes[iLive] != 0 {
		add(GoHeapLive, []*profile.Location{b.use(synthetic(restFrame))}, bd.Bytes[iLive], 0, nil)
	}
	for i, c := range Classes {
		switch i {
		case iLive, iArenaUsed, iArenaFree:
			continue
		}
		if r.SmapsErr != nil && (i == iBinary || i == iFiles || i == iNonGo || i == iUnattributed) {
			continue
		}
		add(c, nil, bd.Bytes[i], 0, nil)
	}
	b.arenas(r.Holdings, bd, add)
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("rss: building the profile: %w", err)
	}
	return p, nil
}

// heapRows adds go/heap/live by allocation site: each record's estimate
// under the runtime's sampler rule, so that go tool pprof shows the
// sites; the exact class total live is kept. When the estimates sum below
// it, the rest is one more sample (restFrame); when above, every row is
// scaled down by the same factor (pprof's totals add absolute values, so
// no sample may be negative). The rows' raw counts (heap_samples) are
// not scaled: arenaprof rss computes the estimates and their intervals
// from them.
func (b *builder) heapRows(r *Reading, rule goheap.Rule, live int64, add func(string, []*profile.Location, int64, int64, map[string][]int64)) {
	est := symbols.est[:0]
	var sum float64
	for i := range r.Heap {
		h := &r.Heap[i]
		e := float64(h.Count * h.Size)
		if r.Rate > 1 {
			e = float64(h.Count) * rule.Weight(h.Size, r.Rate)
		}
		est = append(est, e)
		sum += e
	}
	symbols.est = est
	scale := 1.0
	if sum > float64(live) {
		scale = float64(live) / sum
	}
	var given int64
	for i := range r.Heap {
		h := &r.Heap[i]
		v := int64(est[i] * scale)
		given += v
		st := h.st
		if st == nil {
			st = intern(h.Stack)
		}
		locs, used := liveLocations(st)
		for _, cl := range used {
			b.use(cl)
		}
		s := b.sample(v, h.Count)
		s.Location, s.Label, s.NumLabel, s.NumUnit = locs, b.classLabel(GoHeapLive), b.numLabel(h.Size, r.Rate), b.units
		b.p.Sample = append(b.p.Sample, s)
	}
	if rest := live - given; rest > 0 {
		add(GoHeapLive, []*profile.Location{b.use(synthetic(restFrame))}, rest, 0, nil)
	}
}

// trimRuntime drops the runtime's frames at the leaf of a heap record's
// stack (mallocgc and its callers), as runtime/pprof's heap profile does;
// of a stack of the runtime's own allocations (a new goroutine's g, say),
// only its allocator's frames. symbols must be locked.
func trimRuntime(st []uintptr) []uintptr {
	for i, pc := range st {
		if !symbolize(pc).runtime {
			return st[i:]
		}
	}
	for i, pc := range st {
		if !symbolize(pc).allocator {
			return st[i:]
		}
	}
	return st
}

// arenas adds arena/used and arena/free by each arena's (or idle pool's)
// site and labels; their totals are the breakdown's (the registry's
// bytes, capped as Classify capped them).
func (b *builder) arenas(hs []holdings.Holding, bd *Breakdown, add func(string, []*profile.Location, int64, int64, map[string][]int64)) {
	leftUsed, leftFree := bd.Bytes[iArenaUsed], bd.Bytes[iArenaFree]
	for _, h := range hs {
		if h.Heap <= 0 {
			continue
		}
		held := min(max(0, h.Used-h.Loose), h.Heap)
		used := min(held, leftUsed)
		free := min(h.Heap-held, leftFree)
		leftUsed -= used
		leftFree -= free
		var site []*profile.Location
		skipping := true
		for _, pc := range h.Stack {
			l := b.use(location(pc))
			if skipping && len(l.Line) > 0 && strings.HasPrefix(l.Line[len(l.Line)-1].Function.Name, arenaPackage) {
				continue // the arena's own frames (NewArena, Pool.Get)
			}
			skipping = false
			site = append(site, l)
		}
		if used != 0 {
			b.addLabelled(ArenaUsed, site, used, h, add)
		}
		if free != 0 {
			b.addLabelled(ArenaFree, site, free, h, add)
		}
	}
	// What the caps left (bytes the shortfall did not take, rounding).
	if leftUsed != 0 {
		add(ArenaUsed, nil, leftUsed, 0, nil)
	}
	if leftFree != 0 {
		add(ArenaFree, nil, leftFree, 0, nil)
	}
}

// addLabelled adds a sample of an arena's bytes with its labels, or
// pool_idle and pool for a pool's idle arenas.
func (b *builder) addLabelled(class string, site []*profile.Location, v int64, h holdings.Holding, add func(string, []*profile.Location, int64, int64, map[string][]int64)) {
	n := len(b.p.Sample)
	add(class, site, v, 0, nil)
	if h.Labels == nil && h.Pool == 0 {
		return
	}
	m := map[string][]string{pprofmt.LabelClass: {class}}
	if h.Labels != nil {
		h.Labels.All(func(k, v string) bool {
			if k != pprofmt.LabelClass {
				m[k] = []string{v}
			}
			return true
		})
	}
	if h.Pool != 0 {
		m[pprofmt.LabelPoolIdle] = []string{"true"}
		m[pprofmt.LabelPool] = []string{fmt.Sprint(h.Pool)}
	}
	b.p.Sample[n].Label = m
}
