package arena

import (
	"reflect"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
	"github.com/arenaprof/arenaprof/internal/sizeclass"
	"github.com/arenaprof/arenaprof/internal/unwind"
)

// typeInfo is what the slow path knows about a type, computed once per
// type with reflect and shared by every arena.
type typeInfo struct {
	key   uintptr
	typ   reflect.Type
	name  string
	size  uintptr
	align uintptr
	ptrs  bool // the type holds pointers: its values live in typed slabs

	sliceOnce sync.Once
	sliceTyp  reflect.Type
	sliceName string

	// newSlab returns the first element of a new zeroed [n]T.
	newSlab func(n int) unsafe.Pointer
	// clear zeroes n values of type T at p, with write barriers.
	// scratch is memory of the caller's (a region's) the clear function
	// may use, so that it need not allocate.
	clear func(p unsafe.Pointer, n int, scratch *sliceHeader)
}

func (ti *typeInfo) slice() (reflect.Type, string) {
	ti.sliceOnce.Do(func() {
		ti.sliceTyp = reflect.SliceOf(ti.typ)
		ti.sliceName = ti.sliceTyp.String()
	})
	return ti.sliceTyp, ti.sliceName
}

var infos sync.Map // type key -> *typeInfo

// infoOf returns the type information of T.
func infoOf[T any]() *typeInfo {
	k := typeKey[T]()
	if v, ok := infos.Load(k); ok {
		return v.(*typeInfo)
	}
	t := reflect.TypeFor[T]()
	ti := &typeInfo{
		key:   k,
		typ:   t,
		name:  t.String(),
		size:  t.Size(),
		align: uintptr(t.Align()),
		ptrs:  hasPointers(t),
		newSlab: func(n int) unsafe.Pointer {
			return unsafe.Pointer(unsafe.SliceData(make([]T, n)))
		},
		clear: func(p unsafe.Pointer, n int, _ *sliceHeader) {
			clear(unsafe.Slice((*T)(p), n))
		},
	}
	v, _ := infos.LoadOrStore(k, ti)
	return v.(*typeInfo)
}

// sliceHeader is the layout of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// infoByKey returns the type information of the type whose pointer type
// has descriptor key (see typeKey).
func infoByKey(key uintptr) *typeInfo {
	if v, ok := infos.Load(key); ok {
		return v.(*typeInfo)
	}
	// An interface holding a nil *T is its type word and a nil data word.
	var x any
	(*[2]uintptr)(unsafe.Pointer(&x))[0] = key
	t := reflect.TypeOf(x).Elem()
	st := reflect.SliceOf(t)
	ti := &typeInfo{
		key:   key,
		typ:   t,
		name:  t.String(),
		size:  t.Size(),
		align: uintptr(t.Align()),
		ptrs:  hasPointers(t),
		newSlab: func(n int) unsafe.Pointer {
			return reflect.MakeSlice(reflect.SliceOf(t), n, n).UnsafePointer()
		},
		clear: func(p unsafe.Pointer, n int, scratch *sliceHeader) {
			// A []T in scratch, cleared through reflect: typed, with
			// write barriers, and without allocating.
			*scratch = sliceHeader{p, n, n}
			reflect.NewAt(st, unsafe.Pointer(scratch)).Elem().Clear()
			*scratch = sliceHeader{}
		},
	}
	v, _ := infos.LoadOrStore(key, ti)
	return v.(*typeInfo)
}

var (
	stringInfo = &typeInfo{typ: reflect.TypeFor[string](), name: "string", size: 1, align: 1}
	bytesInfo  = &typeInfo{typ: reflect.TypeFor[[]byte](), name: "[]uint8", size: 1, align: 1}
)

// hasPointers reports whether values of type t hold pointers the garbage
// collector must see.
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.UnsafePointer, reflect.Map, reflect.Chan,
		reflect.Func, reflect.Interface, reflect.String, reflect.Slice:
		return true
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

// Allocation kinds, for the event's type.
const (
	kindObject = iota
	kindSlice
	kindString
	kindBytes
)

// skipString is the number of physical frames between Arena.alloc and the
// allocator's entry point (New, MakeSlice, String or Bytes): newSlow,
// makeSlow or allocBytes, which are never inlined. The entry point itself
// is dropped as one logical frame (see emit), whether or not the compiler
// inlined it into the user's function.
const skipString = 1

// skipEmit is the number of physical frames emit skips before the ones its
// callers name: emit and alloc, which are never inlined.
const skipEmit = 2

// newSlowKey is the slow path of New[T]; x holds a nil *T, whose type word
// is the type key of T. Its first step serves T from the type table; it is
// kept small (no frame to set up) for that step's sake.
//
//go:noinline
func newSlowKey(a *Arena, x any) unsafe.Pointer {
	key := *(*uintptr)(unsafe.Pointer(&x))
	if e := a.slot(key); e.key == key {
		r := e.reg
		if off := r.off; off+e.size <= r.combined {
			r.off = off + e.size
			r.allocs++
			return unsafe.Add(r.base, off)
		}
	}
	return newSlower(a, key)
}

// newSlower is the rest of New's slow path.
//
//go:noinline
func newSlower(a *Arena, key uintptr) unsafe.Pointer {
	ti := infoByKey(key)
	if ti.size == 0 {
		a.check()
		a.bytes.allocs++ // counted like the fast path's zero-size bump
		return unsafe.Pointer(&zeroBase)
	}
	return a.alloc(ti, 1, kindObject, skipString+1)
}

// makeSlow is the slow path of MakeSlice.
//
//go:noinline
func makeSlow[T any](a *Arena, len, cap int) []T {
	if uint(len) <= uint(cap) && uintptr(cap)-1 < maxAlloc/(unsafe.Sizeof(*new(T))+1) {
		if p := tryMakeTyped[T](a, cap); p != nil {
			return unsafe.Slice((*T)(p), cap)[:len]
		}
	}
	ti := infoOf[T]()
	switch {
	case len < 0:
		panic("arenaprof: arena.MakeSlice: len out of range")
	case cap < 0:
		panic("arenaprof: arena.MakeSlice: cap out of range")
	case len > cap:
		panic("arenaprof: arena.MakeSlice: len larger than cap")
	case ti.size > 0 && uintptr(cap) > maxAlloc/ti.size:
		panic("arenaprof: arena.MakeSlice: cap out of range (size overflows)")
	}
	if cap == 0 || ti.size == 0 {
		a.check()
		a.bytes.allocs++
		return unsafe.Slice((*T)(unsafe.Pointer(&zeroBase)), cap)[:len]
	}
	p := a.alloc(ti, uintptr(cap), kindSlice, skipString)
	return unsafe.Slice((*T)(p), cap)[:len]
}

// allocBytes is the slow path of String and Bytes.
//
//go:noinline
func (a *Arena) allocBytes(n uintptr, kind int, skip int) unsafe.Pointer {
	ti := stringInfo
	if kind == kindBytes {
		ti = bytesInfo
	}
	if n > maxAlloc {
		panic("arenaprof: arena: string or byte slice too large")
	}
	return a.alloc(ti, n, kind, skip)
}

// check panics if the arena was freed.
func (a *Arena) check() {
	if a.freed {
		panic("arenaprof: arena used after Free")
	}
}

// regionFor returns the region objects of type ti come from, and installs
// the type-table entry when the fast path can serve the type through it.
func (a *Arena) regionFor(ti *typeInfo) *region {
	r := &a.bytes
	if ti.ptrs {
		r = a.slabs[ti.key]
		if r == nil {
			if a.slabs == nil {
				a.slabs = make(map[uintptr]*region)
			}
			r = &region{ti: ti, sampleAt: noSample}
			a.redraw(r)
			a.slabs[ti.key] = r
			a.noteSlab(r)
		}
	}
	// The fast path bumps by the size rounded up to 8, so it can serve a
	// slab only if that is the element size (always so on 64-bit
	// platforms, where a type with pointers is 8-aligned). Stricter
	// alignments than 8 do not exist in Go today; they take the slow path.
	// Pointer-free types need no entry: the fast path reads their
	// descriptor when layoutOK, and without it their region, the byte
	// region, is slow-only (an entry for it could never bump).
	if ti.key != 0 && !a.poison && ti.align <= 8 && ti.size > 0 &&
		ti.ptrs && ti.size%8 == 0 {
		a.install(ti.key, r, fastSize(ti.size))
	}
	return r
}

// alloc is the common slow path: it hands out count values of type ti,
// refilling the region, sampling the object and picking up a change of the
// sampling state as needed. skip is the number of physical frames between
// alloc and the allocator's entry point.
//
//go:noinline
func (a *Arena) alloc(ti *typeInfo, count uintptr, kind int, skip int) unsafe.Pointer {
	a.check()
	if st := samplingstate.Current(); st != a.state {
		if a.mean == 0 {
			a.setState(st) // no stream running: start it before this object
		} else {
			// Who listens changes at once; a new mean takes over after
			// this object (pickUpMean), so that the success that brought
			// the old stream here is not discarded.
			a.state = st
		}
	}
	if a.lctx != nil {
		a.resolveLabels() // before the first chunk, so that the live view has them
	}
	r := a.regionFor(ti)
	r.allocs++
	n := count * ti.size
	if !ti.ptrs {
		// Pointer-free values share the byte chunk: keep every offset
		// 8-aligned, and honour a stricter alignment by padding.
		n = fastSize(n)
		if ti.align > 8 {
			r.off = (r.off + ti.align - 1) &^ (ti.align - 1)
			if r.off > r.limit {
				r.off = r.limit
			}
		}
	}
	if n > r.limit-r.off {
		if n > a.maxChunk(r) {
			p := a.allocLarge(r, ti, count, n, kind, skip)
			a.pickUpMean()
			return p
		}
		a.refill(r, n)
	}
	p := unsafe.Add(r.base, r.off)
	if a.poison && !ti.ptrs {
		clear(unsafe.Slice((*byte)(p), n))
	}
	if r.sampleAt < uint64(r.off+n) {
		// The object holds the stream's next successful trial.
		if a.state.MeanBytes > 0 { // else nobody listens: only the trial is drawn
			off := int64(r.sampleAt - uint64(r.off))
			a.emit(ti, kind, int64(n), off, skip)
		}
		r.sampleAt = uint64(r.off+n) + uint64(a.sampler.Next())
	}
	r.off += n
	r.combined = combined(r)
	a.pickUpMean()
	return p
}

// allocLarge hands out an object larger than a chunk in memory of its own,
// sampled from the region's stream as if it lay at the region's offset.
//
//go:noinline
func (a *Arena) allocLarge(r *region, ti *typeInfo, count, n uintptr, kind int, skip int) unsafe.Pointer {
	p := a.takeLarge(r, ti, count, n)
	r.large += n
	if r.sampleAt != noSample {
		rem := r.sampleAt - uint64(r.off)
		if rem < uint64(n) {
			if a.state.MeanBytes > 0 {
				a.emit(ti, kind, int64(n), int64(rem), skip+1) // and allocLarge
			}
			r.sampleAt = uint64(r.off) + uint64(a.sampler.Next())
		} else {
			r.sampleAt -= uint64(n)
		}
		r.combined = combined(r)
	}
	return p
}

// maxChunk is the largest object served from the region's chunks.
func (a *Arena) maxChunk(r *region) uintptr {
	if r.ti != nil && r.ti.size > a.chunkSize {
		return r.ti.size // a slab holds at least one element
	}
	return a.chunkSize
}

// firstSlab is the size in bytes of a type's first slab; later slabs
// double up to the chunk size.
const firstSlab = 1 << 10

// refill makes a chunk with room for n bytes the region's current one. The
// stream's remaining gap carries over: the bytes left at the end of the old
// chunk get no trials, and no trial is lost or invented.
func (a *Arena) refill(r *region, n uintptr) {
	rem := noSample
	if r.sampleAt != noSample {
		rem = r.sampleAt - uint64(r.off)
	}
	if len(r.chunks) > 0 {
		r.chunks[r.cur].used = r.off
		a.noteClosed(r.off)
	}
	// Reuse a chunk kept by Reset if it is large enough.
	next := r.cur + 1
	if len(r.chunks) == 0 {
		next = 0
	}
	if next < len(r.chunks) && r.chunks[next].size >= n {
		r.cur = next
	} else {
		r.chunks = append(r.chunks, a.newChunk(r, n))
		r.cur = len(r.chunks) - 1
		if next < r.cur {
			// Move the new chunk before the ones too small for it, so that
			// Reset's order stays "used chunks first".
			r.chunks[next], r.chunks[r.cur] = r.chunks[r.cur], r.chunks[next]
			r.cur = next
		}
	}
	c := &r.chunks[r.cur]
	r.base, r.limit, r.off = c.base, c.size, 0
	r.sampleAt = rem
	r.combined = combined(r)
}

// newChunk allocates a chunk of at least n bytes for the region.
func (a *Arena) newChunk(r *region, n uintptr) chunk {
	if r.ti == nil {
		if a.checked != nil {
			c := a.checkedChunk(r, n)
			a.noteReserved(int64(c.size), 0) // mapped off the heap
			return c
		}
		// 8 bytes of slack past the end: a zero-size object the fast path
		// places at the chunk's end still points into the chunk.
		size := max(a.chunkSize, n)
		s := make([]uint64, size/8+1)
		a.noteReserved(int64(len(s))*8, sizeclass.HeapBytes(int64(len(s))*8, false))
		return chunk{base: unsafe.Pointer(unsafe.SliceData(s)), size: size}
	}
	if r.next == 0 {
		r.next = min(firstSlab, a.chunkSize)
	}
	size := max(r.next, n)
	r.next = min(2*r.next, a.chunkSize)
	elems := size / r.ti.size
	a.noteReserved(int64(elems*r.ti.size), sizeclass.HeapBytes(int64(elems*r.ti.size), true))
	return chunk{base: r.ti.newSlab(int(elems)), size: elems * r.ti.size}
}

// combined returns the fast path's bound for the region: 0 for a region
// the fast path must not serve.
func combined(r *region) uintptr {
	if r.slowOnly {
		return 0
	}
	if r.sampleAt < uint64(r.limit) {
		return uintptr(r.sampleAt)
	}
	return r.limit
}

// setState picks up a change of the global sampling state. The trial
// stream runs at the state's TrialMeanBytes whether or not anybody listens
// (events are emitted only while MeanBytes > 0), so the bytes allocated
// after a consumer registers get their trials at once.
func (a *Arena) setState(st *samplingstate.State) {
	a.state = st
	a.pickUpMean()
}

// pickUpMean switches the trial streams to the mean of a.state, if it
// changed. alloc calls it after the object it was called for has had its
// trials under the old mean: that slow path may have been entered because
// the object holds the old stream's next success, and discarding that
// success would drop an event because it is one (estimates would lose
// about one old mean per change). A new mean redraws every region's gap
// from its current offset: the trials since the last draw all failed, and
// by the memorylessness of the geometric gap the pending one can be
// discarded, at a point that does not depend on its outcome, and redrawn
// under the new mean, which keeps the trials that follow independent;
// every event carries the mean its gap was drawn under.
func (a *Arena) pickUpMean() {
	st := a.state
	if st.TrialMeanBytes == a.mean {
		return
	}
	a.mean = st.TrialMeanBytes
	_ = a.sampler.SetMean(st.TrialMeanBytes) // hooks bounds the mean
	a.redraw(&a.bytes)
	for _, r := range a.slabs {
		a.redraw(r)
	}
}

// redraw draws a fresh gap for the region.
func (a *Arena) redraw(r *region) {
	if a.mean > 0 {
		r.sampleAt = uint64(r.off) + uint64(a.sampler.Next())
	} else {
		r.sampleAt = noSample
	}
	r.combined = combined(r)
}

// emit reports a sampled object. skip is the number of physical frames
// between alloc and the allocator's entry point.
//
// The stack is captured by frame-pointer unwinding (unwind.FastStack),
// whose skip counts physical frames: emit, alloc, allocLarge, newSlow,
// makeSlow and allocBytes are marked //go:noinline so that their number is
// fixed. The entry point (New, MakeSlice, String or Bytes) comes next, as
// its own physical frame or inlined into the user's function; either way
// it is the first logical frame of what FastCallers returns, and is
// dropped, so the leaf frame is the user's function.
//
//go:noinline
func (a *Arena) emit(ti *typeInfo, kind int, size, offset int64, skip int) {
	// The event is the arena's own, reused: only the fields that change
	// are written (Time stays zero).
	e := &a.event
	e.TypeName, e.Type = ti.name, ti.typ
	e.Size, e.Offset, e.MeanBytes = size, offset, a.mean
	if a.lctx != nil {
		a.resolveLabels()
	} else if a.tctx != nil {
		a.followLabels()
	}
	e.Labels, e.Arena = a.labels, a.id
	if kind == kindSlice {
		e.Type, e.TypeName = ti.slice()
	}
	// FastStack expands the physical frames into logical ones only for a
	// stack it has not seen: most events reuse a stored expansion.
	st, hash := unwind.FastStack(skipEmit+skip, a.pcs[:])
	n := len(st)
	// The entry point's frames: New and newFast inlined into it (and,
	// through a function value, the wrapper's inlined copy of both), or
	// String and stringFast, Bytes and bytesFast, MakeSlice, or Append,
	// AppendString, Grow and ReadAll with their slow paths (appendSlow,
	// growSlow, growBy, growInPlace).
	drop := min(n, 1)
	for drop < n && a.isEntryFrame(st[drop]) {
		drop++
	}
	e.Stack = st[drop:min(n, drop+unwind.MaxStackDepth)]
	// The frames dropped and the cut are a function of the physical
	// frames, so their hash still tells stacks apart.
	e.StackHash = hash
	a.emitted = true
	h := a.hold
	if !h.listed {
		a.enlist() // the sweep must see the arena to release its events if it is dropped
	}
	if !h.unreleased.Load() { // a load is a plain read; a store is a locked exchange
		h.unreleased.Store(true)
	}
	hooks.Emit(e)
	e.Stack = nil
	e.Type = nil
}

// entryFrames caches, by program counter, whether a frame of an event's
// stack belongs to an entry point of the allocator.
var entryFrames sync.Map // uintptr -> bool

// isEntryFrame reports whether pc, a logical frame of a stack in the form
// runtime.Callers gives, is in an entry point of the allocator or in the
// fast path inlined into it. The arena remembers its last answers: events
// come from a few call sites, and a miss in a shared map is slow when the
// event path is cold.
func (a *Arena) isEntryFrame(pc uintptr) bool {
	for _, e := range a.frames {
		if e.pc == pc {
			return e.entry
		}
	}
	is := isEntryFrame(pc)
	a.frames[a.nextFrame%uint8(len(a.frames))] = frameClass{pc, is}
	a.nextFrame++
	return is
}

// frameClass is a remembered answer of isEntryFrame.
type frameClass struct {
	pc    uintptr
	entry bool
}

// isEntryFrame is Arena.isEntryFrame without the arena's memory.
func isEntryFrame(pc uintptr) bool {
	if v, ok := entryFrames.Load(pc); ok {
		return v.(bool)
	}
	f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	const pkg = "github.com/arenaprof/arenaprof/arena."
	name, ok := strings.CutPrefix(f.Function, pkg)
	is := false
	if ok {
		switch name {
		case "String", "stringFast", "Bytes", "bytesFast", "AppendString", "ReadAll":
			is = true
		default:
			generic, _, _ := strings.Cut(name, "[")
			switch generic {
			case "New", "newFast", "MakeSlice", "Append", "appendFast", "appendSlow",
				"Grow", "growFast", "growSlow", "growBy", "growInPlace":
				is = generic != name
			}
		}
	}
	entryFrames.Store(pc, is)
	return is
}

// Reset makes all the arena's memory available again, zeroed, and keeps it
// for reuse. Values handed out before Reset must not be used afterwards: a
// value whose type holds pointers may be handed out again, to a new owner.
// Doing so is a logic error but never a memory-safety one: the garbage
// collector always sees memory of the right type. In checked mode (see
// [WithChecked]) Reset makes the pointer-free memory inaccessible and
// clears and drops the rest instead of keeping it.
//
// If the arena emitted an event since its previous Reset, consumers are
// told through [hooks.Release]. Reset panics if the arena was freed.
func (a *Arena) Reset() {
	a.check()
	a.endTally()
	a.release()
	if a.checked != nil {
		a.resetChecked(howReset)
		a.noteDropped()
		return
	}
	a.resetRegion(&a.bytes)
	for _, r := range a.slabs {
		a.resetRegion(r)
	}
	a.noteReset()
}

func (a *Arena) resetRegion(r *region) {
	a.resetLarge(r)
	if len(r.chunks) == 0 {
		return
	}
	r.chunks[r.cur].used = r.off
	for i := range r.chunks {
		c := &r.chunks[i]
		if c.used == 0 {
			continue
		}
		switch {
		case r.ti != nil:
			r.ti.clear(c.base, int(c.used/r.ti.size), &r.scratch)
		case a.poison:
			b := unsafe.Slice((*byte)(c.base), c.used)
			for j := range b {
				b[j] = 0xa5
			}
		default:
			clear(unsafe.Slice((*byte)(c.base), c.used))
		}
		c.used = 0
	}
	// Carry the stream over: the trials already drawn stay valid.
	if r.sampleAt != noSample {
		r.sampleAt -= uint64(r.off)
	}
	r.cur = 0
	r.base, r.limit, r.off = r.chunks[0].base, r.chunks[0].size, 0
	r.combined = combined(r)
}

// Free drops the arena's memory for the garbage collector to reclaim. The
// values handed out stay valid for as long as they are referenced (except
// in checked mode, see [WithChecked], where Free releases them like
// Reset), but the arena can no longer be used: New, MakeSlice, String,
// Bytes and Reset panic. Calling Free again does nothing. An arena dropped without Free is
// released for the profiler by the garbage collector (see the package
// documentation); Free releases it at once.
func (a *Arena) Free() {
	if a.freed {
		return
	}
	a.endTally()
	a.release()
	if a.checked != nil {
		a.resetChecked(howFree)
	}
	unregister(a.hold)
	a.freed = true
	a.clearTable()
	a.largeKept = 0
	// off > combined: even a zero-size New takes the slow path, and panics.
	a.bytes = region{sampleAt: noSample, base: unsafe.Pointer(&zeroBase), off: 1}
	a.slabs = nil
}

func (a *Arena) release() {
	if a.emitted {
		a.emitted = false
		a.hold.unreleased.Store(false)
		hooks.Release(a.id)
	}
}
