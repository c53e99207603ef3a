// Package profbuild builds the pprof profiles of package export and of
// its agent: the arena profile of a snapshot, the peak profile and the
// live-arenas profile, in the memory of a [Builder] that a caller building
// one every interval (the agent's sources) reuses. Package export's Build
// and BuildArenas, its handlers, and export/agent's sources use it.
package profbuild

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/profiler"
)

// allocatorPackage is the package whose frames never appear in a profile.
const allocatorPackage = "github.com/arenaprof/arenaprof/arena."

// numSampleTypes is the number of values of an arena profile's sample.
const numSampleTypes = pprofmt.NumSampleTypes

// A Builder builds profiles one after another (package export's Build and
// BuildArenas, and [Peak], each build one in a new Builder), in the
// memory of the last one: its samples, values, label maps and slices. A caller that builds a profile every
// interval, such as the agent's arena, peak and arenas sources, then
// allocates little once the sizes have settled. A profile a Builder
// returns is valid until its next call, and must not be modified (but for
// its TimeNanos); Copy it to keep it. The zero Builder is ready to use. A
// Builder must not be used by two goroutines at once.
type Builder struct {
	p           profile.Profile
	mapping     [1]*profile.Mapping
	samples     []profile.Sample
	values      []int64
	sampleTypes []*profile.ValueType
	periodType  profile.ValueType
	// The live-arenas profiles' sample types, and their samples' keys
	// (see Arenas).
	holdingTypes []*profile.ValueType
	arenas       map[string]*arenasSlot
	arenasGen    uint64
	// The label maps of earlier profiles, kept while they are few.
	label  map[labelsKey]map[string][]string
	num    map[numKey]map[string][]int64
	units  [2]map[string][]string
	keyBuf []byte
}

// maxKeptLabelMaps bounds the label maps a Builder keeps between profiles.
const maxKeptLabelMaps = 1 << 12

// Build returns the arena profile of s, as package export's Build
// documents it, in the Builder's memory.
func (r *Builder) Build(s *profiler.Snapshot) (*profile.Profile, error) {
	if s == nil {
		return nil, errors.New("export: nil snapshot")
	}
	b := newBuilder(r)
	defer b.done()
	p := b.p
	if r.sampleTypes == nil {
		r.sampleTypes = pprofmt.SampleTypes()
	}
	p.SampleType = r.sampleTypes
	p.DefaultSampleType = "alloc_space"
	r.periodType = profile.ValueType{Type: "space", Unit: "bytes"}
	p.PeriodType = &r.periodType
	p.Period = s.MeanBytes
	p.TimeNanos = s.Start.UnixNano()
	if d := s.End.Sub(s.Start); d > 0 {
		p.DurationNanos = int64(d)
	}
	p.Comments = append(p.Comments, pprofmt.WindowComment(s.Window), pprofmt.PoolGetsComment(s.Stats.PoolGets, p.TimeNanos, p.DurationNanos))
	if c := pprofmt.MeansComment(pprofmt.MeansCommentPrefix, s.Means); c != "" {
		p.Comments = append(p.Comments, c)
	}
	if c := pprofmt.MeansComment(pprofmt.InUseMeansCommentPrefix, s.InUseMeans); c != "" {
		p.Comments = append(p.Comments, c)
	}
	if s.MeansIncomplete {
		p.Comments = append(p.Comments, "arenaprof means incomplete: more distinct sampling means were set than are remembered; intervals may lack the allowance of some")
	}
	if s.Stats.OverflowEvents > 0 || s.Stats.OverflowBuckets > 0 {
		p.Comments = append(p.Comments, fmt.Sprintf(
			"arenaprof overflow: %d events past the bound of %d buckets were aggregated without their stacks",
			s.Stats.OverflowEvents, s.Stats.MaxBuckets))
	}
	if s.Stats.TypelessEvents > 0 {
		p.Comments = append(p.Comments, fmt.Sprintf(
			"arenaprof typeless: %d events past the bound on overflow buckets were aggregated under type %s, without their type",
			s.Stats.TypelessEvents, pprofmt.TypelessTypeName))
	}
	if s.Stats.Lost > 0 {
		p.Comments = append(p.Comments, fmt.Sprintf(
			"arenaprof lost: %d events past every bucket bound (all %d typeless buckets taken by other means) were not aggregated; estimates miss their bytes",
			s.Stats.Lost, s.Stats.TypelessBuckets))
	}
	if d := s.Stats.Dropped - min(s.Stats.Dropped, s.Stats.Lost); d > 0 {
		p.Comments = append(p.Comments, fmt.Sprintf("arenaprof dropped: %d events without a valid weight", d))
	}
	// The samples and their values are carved from two arrays: two
	// allocations instead of two per sample, none when the Builder's
	// arrays of its last profile are large enough.
	r.samples = slices.Grow(r.samples[:0], len(s.Records))[:len(s.Records)]
	r.values = slices.Grow(r.values[:0], numSampleTypes*len(s.Records))[:numSampleTypes*len(s.Records)]
	samples, values := r.samples, r.values
	p.Sample = slices.Grow(p.Sample, len(s.Records))
	for i := range s.Records {
		r := &s.Records[i]
		v := recordValues(r)
		if v == [numSampleTypes]int64{} {
			continue
		}
		val := values[:numSampleTypes:numSampleTypes]
		values = values[numSampleTypes:]
		copy(val, v[:])
		smp := &samples[0]
		samples = samples[1:]
		*smp = profile.Sample{
			Value:    val,
			Label:    b.labels(r),
			NumLabel: b.numLabels(r),
			NumUnit:  b.numUnits(r.Overflow),
		}
		if r.Overflow {
			smp.Location = b.overflowLocation()
		} else {
			smp.Location = b.stackLocations(r.Stack)
		}
		p.Sample = append(p.Sample, smp)
	}
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("export: built an invalid profile: %w", err)
	}
	return p, nil
}

// recordValues returns the six sample values of a record. Weighted sums are
// rounded once, here.
func recordValues(r *profiler.Record) [numSampleTypes]int64 {
	return [numSampleTypes]int64{
		pprofmt.IndexAllocObjects: roundInt(r.AllocObjects),
		pprofmt.IndexAllocSpace:   roundInt(r.AllocBytes),
		pprofmt.IndexInuseObjects: roundInt(r.InuseObjects),
		pprofmt.IndexInuseSpace:   roundInt(r.InuseBytes),
		pprofmt.IndexAllocSamples: r.AllocSamples,
		pprofmt.IndexAllocTail:    r.AllocTail,
	}
}

func roundInt(x float64) int64 {
	switch {
	case !(x > 0): // also NaN
		return 0
	case x >= math.MaxInt64:
		return math.MaxInt64
	}
	return int64(math.Round(x))
}

// frameInfo is the symbolization of one program counter: the single
// logical frame runtime.CallersFrames gives for it.
type frameInfo struct {
	pc      uintptr // the call (or inline mark) pc
	fn      string
	file    string
	line    int64
	inlined bool // an inlined call: the next pc's frame is its caller in the same physical frame
}

type funcKey struct{ name, file string }

type labelsKey struct {
	typeName, labels string
}

type numKey struct {
	size, mean int64
	overflow   bool
}

type builder struct {
	p      *profile.Profile
	r      *Builder // whose maps and buffers the builder uses
	label  map[labelsKey]map[string][]string
	num    map[numKey]map[string][]int64
	units  *[2]map[string][]string
	keyBuf []byte
	// sym is the symbol cache, locked by the builder from newBuilder to
	// done; gen marks the locations and functions this profile uses.
	sym *symbolCache
	gen uint64
}

// symbolCache keeps the locations and functions of the stacks profiles
// were built of, across profiles: a service's allocation sites are few
// and the same from one profile to the next, and symbolizing them again
// for each profile cost an agent's upload about 110 KB of garbage.
// Profiles share these *profile.Location and *profile.Function values
// (and the location slices of samples with the same stack), with ids
// unique across profiles; a profile lists those its samples use. The
// cache is emptied when it reaches its bounds.
type symbolCache struct {
	sync.Mutex
	gen      uint64
	mapping  *profile.Mapping
	frames   map[uintptr]frameInfo
	stacks   map[string]*cachedStack
	locs     map[string]*cachedLoc
	funcs    map[funcKey]*cachedFunc
	overflow *cachedStack
	nextID   uint64 // the last location or function id given
}

// Bounds of the symbol cache.
const (
	maxCachedStacks = 1 << 15
	maxCachedLocs   = 1 << 16
)

// cachedStack is the locations of a stack; cachedLoc a location (nil loc:
// all its frames dropped) and the functions of its lines; each carries the
// generation of the last profile that listed it.
type cachedStack struct {
	locs   []*profile.Location
	cached []*cachedLoc
}

type cachedLoc struct {
	loc   *profile.Location
	funcs []*cachedFunc
	mark  uint64
}

type cachedFunc struct {
	fn   *profile.Function
	mark uint64
}

var symbols symbolCache

// newBuilder locks the symbol cache and returns a builder of a profile
// in r's memory (r's profile, emptied, and its label maps).
func newBuilder(r *Builder) *builder {
	c := &symbols
	c.Lock()
	if c.mapping == nil || len(c.stacks) >= maxCachedStacks || len(c.locs) >= maxCachedLocs || len(c.frames) >= maxCachedLocs {
		exe, _ := os.Executable()
		c.mapping = &profile.Mapping{
			ID: 1, File: exe,
			HasFunctions: true, HasFilenames: true, HasLineNumbers: true, HasInlineFrames: true,
		}
		c.frames = make(map[uintptr]frameInfo)
		c.stacks = make(map[string]*cachedStack)
		c.locs = make(map[string]*cachedLoc)
		c.funcs = make(map[funcKey]*cachedFunc)
		c.overflow = nil
	}
	c.gen++
	if r.label == nil || len(r.label)+len(r.num) > maxKeptLabelMaps {
		r.label = make(map[labelsKey]map[string][]string)
		r.num = make(map[numKey]map[string][]int64)
	}
	r.mapping[0] = c.mapping
	clear(r.p.Sample)
	clear(r.p.Location)
	clear(r.p.Function)
	r.p = profile.Profile{
		Mapping:  r.mapping[:],
		Sample:   r.p.Sample[:0],
		Location: r.p.Location[:0],
		Function: r.p.Function[:0],
		Comments: r.p.Comments[:0],
	}
	return &builder{
		p:      &r.p,
		r:      r,
		sym:    c,
		gen:    c.gen,
		label:  r.label,
		num:    r.num,
		units:  &r.units,
		keyBuf: r.keyBuf,
	}
}

// done releases the symbol cache, and hands the builder's buffer back
// to its Builder.
func (b *builder) done() {
	b.r.keyBuf = b.keyBuf
	b.sym.Unlock()
}

// use lists the locations of st, and their functions, in the profile the
// first time one of its samples uses them, and returns its locations.
func (b *builder) use(st *cachedStack) []*profile.Location {
	for _, cl := range st.cached {
		if cl.mark == b.gen || cl.loc == nil {
			continue
		}
		cl.mark = b.gen
		b.p.Location = append(b.p.Location, cl.loc)
		for _, cf := range cl.funcs {
			if cf.mark != b.gen {
				cf.mark = b.gen
				b.p.Function = append(b.p.Function, cf.fn)
			}
		}
	}
	return st.locs
}

// labels returns the string labels of a record's sample.
func (b *builder) labels(r *profiler.Record) map[string][]string {
	k := labelsKey{r.TypeName, r.Labels.Key()}
	if m, ok := b.label[k]; ok {
		return m
	}
	m := map[string][]string{}
	if r.TypeName != "" {
		m[pprofmt.LabelType] = []string{r.TypeName}
	}
	r.Labels.All(func(k, val string) bool {
		switch k {
		case pprofmt.LabelType, pprofmt.LabelBytes, pprofmt.LabelMean:
			k = pprofmt.ReservedLabelPrefix + k
		}
		m[k] = append(m[k], val)
		return true
	})
	if len(m) == 0 {
		m = nil
	}
	b.label[k] = m
	return m
}

// numLabels returns the numeric labels of a record's sample.
func (b *builder) numLabels(r *profiler.Record) map[string][]int64 {
	k := numKey{r.Size, r.MeanBytes, r.Overflow}
	if m, ok := b.num[k]; ok {
		return m
	}
	m := map[string][]int64{pprofmt.LabelMean: {r.MeanBytes}}
	if !r.Overflow {
		m[pprofmt.LabelBytes] = []int64{r.Size}
	}
	b.num[k] = m
	return m
}

// numUnits returns the units of the numeric labels.
func (b *builder) numUnits(overflow bool) map[string][]string {
	i := 0
	if overflow {
		i = 1
	}
	if b.units[i] == nil {
		b.units[i] = map[string][]string{pprofmt.LabelMean: {"bytes"}}
		if !overflow {
			b.units[i][pprofmt.LabelBytes] = []string{"bytes"}
		}
	}
	return b.units[i]
}

// stackLocations returns the locations of a stack, from the symbol cache.
func (b *builder) stackLocations(stack []uintptr) []*profile.Location {
	b.keyBuf = b.keyBuf[:0]
	for _, pc := range stack {
		b.keyBuf = binary.LittleEndian.AppendUint64(b.keyBuf, uint64(pc))
	}
	st, ok := b.sym.stacks[string(b.keyBuf)]
	if !ok {
		key := string(b.keyBuf)
		st = b.locations(stack)
		b.sym.stacks[key] = st
	}
	return b.use(st)
}

// frame symbolizes pc, with a cache.
func (b *builder) frame(pc uintptr) frameInfo {
	if f, ok := b.sym.frames[pc]; ok {
		return f
	}
	fr, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	f := frameInfo{pc: fr.PC, fn: fr.Function, file: fr.File, line: int64(fr.Line)}
	if f.pc == 0 {
		f.pc = pc - 1
	}
	f.inlined = fr.Function != "" && fr.Func == nil
	b.sym.frames[pc] = f
	return f
}

// dropFrame reports whether a frame never appears in a profile: the
// allocator's own and the goroutine entry.
func dropFrame(fn string) bool {
	return strings.HasPrefix(fn, allocatorPackage) || fn == "runtime.goexit"
}

func (b *builder) function(name, file string) *cachedFunc {
	k := funcKey{name, file}
	if f := b.sym.funcs[k]; f != nil {
		return f
	}
	b.sym.nextID++
	f := &cachedFunc{fn: &profile.Function{ID: b.sym.nextID, Name: name, SystemName: name, Filename: file}}
	b.sym.funcs[k] = f
	return f
}

// locations turns a stack of return pcs (one per logical frame, as
// runtime.Callers reports them) into locations: one per physical frame,
// whose lines are its inlined calls, innermost first.
func (b *builder) locations(stack []uintptr) *cachedStack {
	st := &cachedStack{
		locs:   make([]*profile.Location, 0, len(stack)),
		cached: make([]*cachedLoc, 0, len(stack)),
	}
	for i := 0; i < len(stack); {
		j := i
		for j < len(stack)-1 && b.frame(stack[j]).inlined {
			j++
		}
		group := stack[i : j+1]
		i = j + 1
		if cl := b.location(group); cl.loc != nil {
			st.locs = append(st.locs, cl.loc)
			st.cached = append(st.cached, cl)
		}
	}
	return st
}

func (b *builder) location(group []uintptr) *cachedLoc {
	b.keyBuf = b.keyBuf[:0]
	for _, pc := range group {
		b.keyBuf = binary.LittleEndian.AppendUint64(b.keyBuf, uint64(pc))
	}
	if l, ok := b.sym.locs[string(b.keyBuf)]; ok {
		return l
	}
	key := string(b.keyBuf)
	first := b.frame(group[0])
	cl := &cachedLoc{}
	var lines []profile.Line
	known := false
	for _, pc := range group {
		f := b.frame(pc)
		if f.fn == "" {
			continue
		}
		known = true
		if dropFrame(f.fn) {
			continue
		}
		cf := b.function(f.fn, f.file)
		cl.funcs = append(cl.funcs, cf)
		lines = append(lines, profile.Line{Function: cf.fn, Line: f.line})
	}
	if !known || len(lines) > 0 {
		b.sym.nextID++
		cl.loc = &profile.Location{
			ID:      b.sym.nextID,
			Mapping: b.sym.mapping,
			Address: uint64(first.pc),
			Line:    lines,
		}
	}
	b.sym.locs[key] = cl
	return cl
}

func (b *builder) overflowLocation() []*profile.Location {
	if b.sym.overflow == nil {
		f := b.function(pprofmt.OverflowFunction, "")
		b.sym.nextID++
		cl := &cachedLoc{
			loc: &profile.Location{
				ID:      b.sym.nextID,
				Mapping: b.sym.mapping,
				Line:    []profile.Line{{Function: f.fn}},
			},
			funcs: []*cachedFunc{f},
		}
		b.sym.overflow = &cachedStack{locs: []*profile.Location{cl.loc}, cached: []*cachedLoc{cl}}
	}
	return b.use(b.sym.overflow)
}
