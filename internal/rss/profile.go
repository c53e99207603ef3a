package rss

import (
	"fmt"
	"runtime"
	"slices"
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
	commentNote    = "arenaprof note: "
	commentNoSmaps = "arenaprof smaps=unread"
	// commentPeak marks a peak profile: the highest RSS the watch saw
	// since the time it gives (RFC 3339), read every WatchTick.
	commentPeak = "arenaprof rss peak since="
	// restFrame is the frame of go/heap/live's bytes not in a sampled
	// row's estimate: the exact class total minus the estimates.
	restFrame = "(exact total minus sampled estimates)"
)

// builder interns functions and locations.
type builder struct {
	p      *profile.Profile
	funcs  map[string]*profile.Function
	locs   map[uintptr]*profile.Location
	synth  map[string]*profile.Location
	labels map[string]map[string][]string
}

func (b *builder) function(name, file string) *profile.Function {
	k := name + "\x00" + file
	if f, ok := b.funcs[k]; ok {
		return f
	}
	f := &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: name, SystemName: name, Filename: file}
	b.funcs[k] = f
	b.p.Function = append(b.p.Function, f)
	return f
}

func (b *builder) location(pc uintptr) *profile.Location {
	if l, ok := b.locs[pc]; ok {
		return l
	}
	l := &profile.Location{ID: uint64(len(b.p.Location) + 1), Address: uint64(pc)}
	frames := runtime.CallersFrames([]uintptr{pc})
	var lines []profile.Line
	for {
		fr, more := frames.Next()
		if fr.Function != "" {
			lines = append(lines, profile.Line{Function: b.function(fr.Function, fr.File), Line: int64(fr.Line)})
		}
		if !more {
			break
		}
	}
	l.Line = lines
	b.locs[pc] = l
	b.p.Location = append(b.p.Location, l)
	return l
}

// synthetic returns the location of a frame that names a class path.
func (b *builder) synthetic(name string) *profile.Location {
	if l, ok := b.synth[name]; ok {
		return l
	}
	l := &profile.Location{ID: uint64(len(b.p.Location) + 1), Line: []profile.Line{{Function: b.function(name, "")}}}
	b.synth[name] = l
	b.p.Location = append(b.p.Location, l)
	return l
}

// classFrames returns the frames of a class, leaf first: go/heap/live,
// go/heap, go.
func (b *builder) classFrames(class string) []*profile.Location {
	var out []*profile.Location
	for p := class; ; {
		out = append(out, b.synthetic(p))
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return out
		}
		p = p[:i]
	}
}

func (b *builder) classLabel(class string) map[string][]string {
	if m, ok := b.labels[class]; ok {
		return m
	}
	m := map[string][]string{pprofmt.LabelClass: {class}}
	b.labels[class] = m
	return m
}

// Profile writes r and its breakdown as a resident-memory profile.
func Profile(r *Reading, bd *Breakdown) (*profile.Profile, error) {
	p := &profile.Profile{
		SampleType:        pprofmt.RSSSampleTypes(),
		DefaultSampleType: SampleResident,
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            r.Rate,
		TimeNanos:         r.Time.UnixNano(),
	}
	b := &builder{p: p, funcs: map[string]*profile.Function{}, locs: map[uintptr]*profile.Location{},
		synth: map[string]*profile.Location{}, labels: map[string]map[string][]string{}}
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
	for _, n := range bd.Notes {
		p.Comments = append(p.Comments, commentNote+n)
	}
	add := func(class string, site []*profile.Location, v, count int64, num map[string][]int64) {
		locs := append(site, b.classFrames(class)...)
		s := &profile.Sample{Location: locs, Value: []int64{v, count}, Label: b.classLabel(class), NumLabel: num}
		if num != nil {
			s.NumUnit = map[string][]string{pprofmt.LabelBytes: {"bytes"}, pprofmt.LabelHeapRate: {"bytes"}}
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
		add(GoHeapLive, []*profile.Location{b.synthetic(restFrame)}, bd.Bytes[iLive], 0, nil)
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
	est := make([]float64, len(r.Heap))
	var sum float64
	for i, h := range r.Heap {
		if r.Rate <= 1 {
			est[i] = float64(h.Count * h.Size)
		} else {
			est[i] = float64(h.Count) * rule.Weight(h.Size, r.Rate)
		}
		sum += est[i]
	}
	scale := 1.0
	if sum > float64(live) {
		scale = float64(live) / sum
	}
	var given int64
	for i, h := range r.Heap {
		v := int64(est[i] * scale)
		given += v
		site := make([]*profile.Location, 0, len(h.Stack))
		for _, pc := range trimRuntime(h.Stack) {
			site = append(site, b.location(pc))
		}
		add(GoHeapLive, site, v, h.Count, map[string][]int64{pprofmt.LabelBytes: {h.Size}, pprofmt.LabelHeapRate: {r.Rate}})
	}
	if rest := live - given; rest > 0 {
		add(GoHeapLive, []*profile.Location{b.synthetic(restFrame)}, rest, 0, nil)
	}
}

// trimRuntime drops the runtime's frames at the leaf of a heap record's
// stack (mallocgc and its callers), as runtime/pprof's heap profile does;
// of a stack of the runtime's own allocations (a new goroutine's g, say),
// only its allocator's frames.
func trimRuntime(st []uintptr) []uintptr {
	for i, pc := range st {
		if f := runtime.FuncForPC(pc - 1); f == nil || !strings.HasPrefix(f.Name(), "runtime.") {
			return st[i:]
		}
	}
	for i, pc := range st {
		name := runtime.FuncForPC(pc - 1).Name()
		if !slices.ContainsFunc([]string{"runtime.malloc", "runtime.new", "runtime.make", "runtime.grow"}, func(p string) bool { return strings.HasPrefix(name, p) }) {
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
			l := b.location(pc)
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
