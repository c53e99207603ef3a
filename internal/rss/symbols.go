package rss

import (
	"hash/maphash"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/google/pprof/profile"
)

// The symbol cache. A service's heap sites are the same from one read to
// the next: each program counter is symbolized once, each stack of the
// heap profile copied once, and each location and function made once,
// for the life of the process (internal/pprofenc's HeapDelta keeps its
// symbols so for the agent's heap upload; export/internal/profbuild
// shares locations across profiles so). Profiles share the cached
// *profile.Location and *profile.Function values and the location lists
// of their go/heap/live samples, with ids unique across profiles; each
// profile lists those its samples use. A profile must therefore not be
// modified but for its samples' values and labels.
var symbols struct {
	sync.Mutex
	pcs    map[uintptr]*pcInfo
	stacks map[uint64]*stackInfo // by hash, chained by next
	// order is the stacks of the last read's records, in its order:
	// the runtime lists its buckets newest first, so that a record of
	// this read is most often the one as many places from the end in
	// the last (an exact comparison confirms it; a hash finds the rest).
	order []*stackInfo
	spare []*stackInfo // the order before, its memory reused
	est   []float64    // go/heap/live's estimates, reused by Profile
	locs  map[uintptr]*cachedLoc
	synth map[string]*cachedLoc
	funcs map[funcKey]*cachedFunc
	// gen marks the locations and functions the profile being built
	// lists; nextID is the last id given.
	gen, nextID uint64
}

// maxCached bounds the cache's program counters and stacks: past it, it
// is emptied (a program has a bounded number of allocation sites; this
// guards against one that does not). Ids keep growing across.
const maxCached = 1 << 20

var stackSeed = maphash.MakeSeed()

// pcInfo is what a program counter of a heap record's stack is: its
// frames (runtime.CallersFrames of it) and the facts the reads and the
// profile ask of it.
type pcInfo struct {
	frames []pcFrame
	// arena: the function is package arena's (a chunk's allocation);
	// runtime: the runtime's; allocator: the runtime's allocator
	// (mallocgc, newobject, makeslice, growslice...).
	arena, runtime, allocator bool
}

type pcFrame struct {
	fn, file string
	line     int64
}

// stackInfo is a stack of the heap profile, copied once: whether it is
// an arena's allocation, and the locations of its go/heap/live samples
// (the site, the runtime's frames trimmed, then the class frames).
type stackInfo struct {
	next  *stackInfo // of the same hash
	pcs   []uintptr
	arena bool
	live  []*profile.Location
	used  []*cachedLoc // the cached locations of live
}

type funcKey struct{ name, file string }

type cachedLoc struct {
	loc   *profile.Location
	funcs []*cachedFunc
	mark  uint64
}

type cachedFunc struct {
	fn   *profile.Function
	mark uint64
}

// allocatorPrefixes are the runtime's allocator functions, trimmed at the
// leaf of a stack of the runtime's own allocations.
var allocatorPrefixes = [...]string{"runtime.malloc", "runtime.new", "runtime.make", "runtime.grow"}

// resetSymbols empties the cache where it is unset or full; symbols must
// be locked.
func resetSymbols() {
	if symbols.pcs != nil && len(symbols.pcs) < maxCached && len(symbols.stacks) < maxCached {
		return
	}
	symbols.pcs = make(map[uintptr]*pcInfo)
	symbols.stacks = make(map[uint64]*stackInfo)
	symbols.order = nil
	symbols.locs = make(map[uintptr]*cachedLoc)
	symbols.synth = make(map[string]*cachedLoc)
	symbols.funcs = make(map[funcKey]*cachedFunc)
}

// symbolize returns what pc is; symbols must be locked.
func symbolize(pc uintptr) *pcInfo {
	if in, ok := symbols.pcs[pc]; ok {
		return in
	}
	in := &pcInfo{}
	if f := runtime.FuncForPC(pc - 1); f != nil {
		name := f.Name()
		in.arena = strings.HasPrefix(name, arenaPackage)
		in.runtime = strings.HasPrefix(name, "runtime.")
		for _, p := range allocatorPrefixes {
			in.allocator = in.allocator || strings.HasPrefix(name, p)
		}
	}
	frames := runtime.CallersFrames([]uintptr{pc})
	for {
		fr, more := frames.Next()
		if fr.Function != "" {
			in.frames = append(in.frames, pcFrame{fn: fr.Function, file: fr.File, line: int64(fr.Line)})
		}
		if !more {
			break
		}
	}
	symbols.pcs[pc] = in
	return in
}

// intern returns the cached stack equal to st, copying it the first time;
// symbols must be locked.
func intern(st []uintptr) *stackInfo {
	var h uint64
	if len(st) > 0 {
		h = maphash.Bytes(stackSeed, unsafe.Slice((*byte)(unsafe.Pointer(&st[0])), len(st)*int(unsafe.Sizeof(st[0]))))
	}
	for s := symbols.stacks[h]; s != nil; s = s.next {
		if slices.Equal(s.pcs, st) {
			return s
		}
	}
	s := &stackInfo{pcs: slices.Clone(st), next: symbols.stacks[h]}
	for _, pc := range st {
		if symbolize(pc).arena {
			s.arena = true
			break
		}
	}
	symbols.stacks[h] = s
	return s
}

// internAll returns the cached stacks of records, in order: each first
// looked for where the last read's order puts it (see symbols.order),
// then by hash. symbols must be locked.
func internAll(recs []runtime.MemProfileRecord) []*stackInfo {
	prev := symbols.order
	out := symbols.spare
	if cap(out) < len(recs) {
		out = make([]*stackInfo, len(recs)+len(recs)/4)
	}
	out = out[:len(recs)]
	shift := len(recs) - len(prev) // the buckets added since, first
	for i := range recs {
		st := recs[i].Stack()
		if j := i - shift; j >= 0 && j < len(prev) && slices.Equal(prev[j].pcs, st) {
			out[i] = prev[j]
			continue
		}
		out[i] = intern(st)
	}
	symbols.order, symbols.spare = out, prev[:0]
	return out
}

// function returns the cached function of a name and file.
func function(name, file string) *cachedFunc {
	k := funcKey{name, file}
	if f := symbols.funcs[k]; f != nil {
		return f
	}
	symbols.nextID++
	f := &cachedFunc{fn: &profile.Function{ID: symbols.nextID, Name: name, SystemName: name, Filename: file}}
	symbols.funcs[k] = f
	return f
}

// location returns the cached location of return address pc.
func location(pc uintptr) *cachedLoc {
	if l := symbols.locs[pc]; l != nil {
		return l
	}
	in := symbolize(pc)
	symbols.nextID++
	l := &cachedLoc{loc: &profile.Location{ID: symbols.nextID, Address: uint64(pc), Line: make([]profile.Line, len(in.frames))}}
	for i, fr := range in.frames {
		f := function(fr.fn, fr.file)
		l.funcs = append(l.funcs, f)
		l.loc.Line[i] = profile.Line{Function: f.fn, Line: fr.line}
	}
	symbols.locs[pc] = l
	return l
}

// synthetic returns the cached location of a frame that names a class
// path (or the rest of go/heap/live).
func synthetic(name string) *cachedLoc {
	if l := symbols.synth[name]; l != nil {
		return l
	}
	f := function(name, "")
	symbols.nextID++
	l := &cachedLoc{loc: &profile.Location{ID: symbols.nextID, Line: []profile.Line{{Function: f.fn}}}, funcs: []*cachedFunc{f}}
	symbols.synth[name] = l
	return l
}

// classFrames returns the cached locations of a class's frames, leaf
// first: go/heap/live, go/heap, go.
func classFrames(class string) []*cachedLoc {
	var out []*cachedLoc
	for p := class; ; {
		out = append(out, synthetic(p))
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return out
		}
		p = p[:i]
	}
}

// liveLocations returns the locations of a go/heap/live sample of stack
// s: its site, the runtime's frames at the leaf trimmed (trimRuntime),
// then the class frames; made once per stack.
func liveLocations(s *stackInfo) ([]*profile.Location, []*cachedLoc) {
	if s.live == nil {
		for _, pc := range trimRuntime(s.pcs) {
			s.used = append(s.used, location(pc))
		}
		s.used = append(s.used, classFrames(GoHeapLive)...)
		s.live = make([]*profile.Location, len(s.used))
		for i, l := range s.used {
			s.live[i] = l.loc
		}
	}
	return s.live, s.used
}
