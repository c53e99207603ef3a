package arena

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"unsafe"

	"github.com/arenaprof/arenaprof/hooks"
	isampling "github.com/arenaprof/arenaprof/internal/sampling"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
	"github.com/arenaprof/arenaprof/internal/unwind"
)

// defaultChunkSize is the size of the byte chunks an arena carves
// pointer-free objects from, and the largest size a typed slab grows to,
// unless [WithChunkSize] sets another.
const defaultChunkSize = 64 << 10

// minChunkSize and maxChunkSize bound [WithChunkSize].
const (
	minChunkSize = 256
	maxChunkSize = 1 << 30
)

// noSample is the sampleAt of a region whose arena does not sample.
const noSample = ^uint64(0)

// maxAlloc bounds the size of one object (2^47 bytes on 64-bit platforms,
// 2^31 on 32-bit ones), like the runtime's limit for make.
const maxAlloc = 1<<(31+16*(^uintptr(0)>>63)) - 1

// zeroBase is the address of every zero-size object the arena hands out,
// as the runtime does for new(struct{}).
var zeroBase uint64

// region is one bump-allocation stream: the shared byte chunk of an arena,
// or the current typed slab of one pointer type. The fast path reads off
// and combined and writes off; everything else is the slow path's.
//
// Offsets, not addresses, are kept, so that no pointer ever points past the
// end of a chunk and no address is ever formed from a gap.
type region struct {
	off      uintptr // offset of the next free byte in the chunk
	combined uintptr // min(sampleAt, limit): the fast path's bound
	// allocs counts the allocations served from the region since the
	// last Reset: one increment beside the bump, in the cache line the
	// bump writes (see tally.go).
	allocs uintptr
	base   unsafe.Pointer // the current chunk
	limit  uintptr        // the chunk's size in bytes
	// sampleAt is the offset in the current chunk of the byte holding the
	// next successful trial of this region's stream; it may lie beyond the
	// chunk's end (the gap carries into the next chunk). noSample when the
	// arena does not sample. A uint64, so that offset + gap never overflows
	// (offsets < 2^31, gaps < 2^46, see isampling.MaxGapFactor).
	sampleAt uint64

	ti     *typeInfo // the slab's type; nil for the byte chunk
	chunks []chunk   // every chunk of the region, in allocation order
	cur    int       // index in chunks of the current chunk
	next   uintptr   // size in bytes of the next typed slab
	// slowOnly keeps the fast path away (combined stays 0): set on the
	// byte region of a poisoning arena, or when the descriptor layout
	// check failed (see rtype.go).
	slowOnly bool

	large     uintptr                // bytes of the large buffers handed out since Reset
	scratch   sliceHeader            // for ti.clear
	largeUsed []largeBuf             // large buffers handed out since Reset
	largeFree map[uintptr][]largeBuf // kept by Reset, by size class
}

// chunk is a block of memory owned by a region.
type chunk struct {
	base unsafe.Pointer
	size uintptr // bytes
	used uintptr // bytes handed out (high-water mark since the last Reset)
}

// Arena is a bump allocator whose allocations are sampled with the per-byte
// model of package profiler and reported through package hooks.
//
// An Arena must be used by one goroutine at a time (the race detector
// reports concurrent use); hand arenas to goroutines with a [Pool]. Memory
// from [New] and [MakeSlice] is zeroed, aligned for its type, and safe with
// the garbage collector: values whose type holds pointers live in typed
// slabs the collector scans, pointer-free values share untyped byte chunks.
//
// The zero Arena is not usable; call [NewArena].
type Arena struct {
	bytes region // the byte chunk shared by pointer-free types

	// The type table (see table.go): tab points to slots[0].
	tab      unsafe.Pointer
	mult     uint64
	shift    uint
	bits     uint
	slots    []tabEntry
	entries  []tabEntry // every key the table holds
	hashSeed uint64
	none     region // the region of empty slots: never has room

	small        [1 << minTableBits]tabEntry // the first table's slots
	smallEntries [4]tabEntry                 // the first entries' storage

	slabs map[uintptr]*region // typed slabs by type key

	id     uint64
	labels hooks.Labels
	base   hooks.Labels // the labels a Pool restores on Put
	// lctx, when not nil, is the context of the Get whose pprof labels
	// are still to be added to labels: a set not in the cache is built
	// only when an event needs it (see resolveLabels).
	lctx  context.Context
	tally func(bytes, allocs int64) // see ContextWithUsage
	// tctx is the context of a Get under a usage function once its
	// labels are resolved, and thash their hash: its events follow its
	// labels (see followLabels).
	tctx      context.Context
	thash     uint64
	chunkSize uintptr
	poison    bool
	checked   *checkedArena // nil unless in checked mode (see checked.go)
	freed     bool
	pooled    bool     // in a Pool, between Put and Get
	hold      *holding // the arena's record in the registry of live arenas
	pubKey    string   // the key of the labels last published in hold

	largeRetain uintptr // bound on largeKept
	largeKept   uintptr // bytes of the large buffers kept by Reset
	emitted     bool    // an event was emitted since the last Release

	state   *samplingstate.State // the state seen by the last slow path
	sampler isampling.GapSampler
	mean    int64 // the sampler's mean (samplingstate.State.TrialMeanBytes); 0 when sampling is turned off

	frames    [8]frameClass // see isEntryFrame
	nextFrame uint8

	event hooks.Event
	pcs   [unwind.MaxStackDepth + 4]uintptr // the entry point's frames, then the stack
}

// Option configures an [Arena] or a [Pool].
type Option func(*config)

// defaultConfig is the configuration of an arena made without options.
var defaultConfig = config{chunkSize: defaultChunkSize, largeRetain: defaultLargeRetain}

// applyOptions returns the default configuration changed by opts. The
// options are closures that take a pointer: the configuration they change
// lives on the heap, so NewArena calls this only when it has options.
func applyOptions(opts []Option) config {
	c := new(config)
	*c = defaultConfig
	for _, o := range opts {
		o(c)
	}
	return *c
}

type config struct {
	chunkSize    uintptr
	labels       hooks.Labels
	seed1, seed2 uint64
	seeded       bool
	poison       bool
	checked      int8 // 1 on, -1 off, 0 as ARENAPROF_CHECKED says
	largeRetain  uintptr
}

// WithChunkSize sets the size in bytes of the arena's byte chunks and the
// size its typed slabs grow to; the default is 64 KiB. Objects larger than
// a chunk get a buffer of their own, which Reset keeps for reuse (see
// [WithLargeRetain]). Larger chunks mean fewer slow-path refills and more
// memory held by each arena. It panics if n is outside [256, 1 GiB].
func WithChunkSize(n int) Option {
	if n < minChunkSize || n > maxChunkSize {
		panic(fmt.Sprintf("arenaprof: arena.WithChunkSize(%d): the chunk size must be in [%d, %d] bytes", n, minChunkSize, maxChunkSize))
	}
	return func(c *config) { c.chunkSize = uintptr(n) }
}

// WithLabels sets the labels carried by every event of the arena.
func WithLabels(l hooks.Labels) Option {
	return func(c *config) { c.labels = l }
}

// WithSeed seeds the arena's sampling generator, for reproducible tests and
// simulations. By default every arena draws from its own random seed. The
// arenas made with one seed pair (by a seeded [Pool], or by several
// NewArena calls) each draw their own independent stream: the n-th arena
// made with the seed in the process gets the stream derived from (seed1,
// seed2, n), so a program that makes its arenas in the same order draws the
// same streams on every run.
func WithSeed(seed1, seed2 uint64) Option {
	return func(c *config) { c.seed1, c.seed2, c.seeded = seed1, seed2, true }
}

// WithPoison makes [Arena.Reset] fill the arena's pointer-free memory with
// a non-zero pattern and makes every later allocation zero its own memory
// in the slow path, so that a value used after Reset reads garbage instead
// of plausible data. It is a debugging aid: allocation is much slower.
func WithPoison(on bool) Option {
	return func(c *config) { c.poison = on }
}

// NewArena returns an empty arena.
func NewArena(opts ...Option) *Arena {
	c := defaultConfig
	if len(opts) > 0 {
		c = applyOptions(opts)
	}
	a := &Arena{
		id:        hooks.NewArenaID(),
		labels:    c.labels,
		chunkSize: c.chunkSize,
		poison:    c.poison,

		largeRetain: c.largeRetain,
	}
	if c.seeded {
		a.sampler.Seed(nextSeed(c.seed1, c.seed2))
	} else {
		a.sampler.Seed(rand.Uint64(), rand.Uint64())
	}
	a.register(0)
	a.checked = newChecked(a, c.checked)
	a.bytes.sampleAt = noSample
	a.bytes.base = unsafe.Pointer(&zeroBase) // never nil: see newFast
	a.bytes.slowOnly = a.poison || !layoutOK
	a.clearTable()
	return a
}

// rounded[T] is T padded to a multiple of 8 bytes: unsafe.Sizeof(rounded[T]{})
// is the number of bytes an object of type T takes from a region. atomic.Int64 is 8-aligned on every
// platform.
type rounded[T any] struct {
	_ [0]atomic.Int64
	//lint:ignore U1000 only the type's size is used (unsafe.Sizeof), never a value
	v T
}

// fastSize returns the number of bytes an object of n bytes takes from a
// region: n rounded up to 8, so that every offset stays 8-aligned.
func fastSize(n uintptr) uintptr { return (n + 7) &^ 7 }

// New returns a pointer to a new zero value of type T allocated in a, like
// new(T). It panics if a was freed.
//
// New is small enough for the compiler to inline into its caller. For a
// pointer-free T its fast path is the bump of the arena's byte chunk: one
// compare against the chunk's combined limit (the end of the chunk or the
// next sampled byte, whichever comes first), one store. Whether T is
// pointer-free, its size and its alignment are constants of the
// instantiation: no lookup depends on how many types the program
// allocates. Other types call the slow path, whose first step is a probe
// of the arena's collision-free type table.
func New[T any](a *Arena) *T {
	return (*T)(newFast[T](a, newSlowKey))
}

// tryNew is the inlined part of [New] without the call to the slow path:
// it returns a pointer to a new zero value of type T allocated in a, or nil
// when the allocation needs the slow path (a new chunk, a sampled object,
// a type with pointers, a change of the sampling state, or a freed arena).
// It never samples: it returns nil whenever the object holds the next
// sampled byte. New is inlined whole, so callers need no such thing: it is
// kept here, beside the fast path of New that it must match, for the
// fast-path benchmarks (BenchmarkNew's impl=arena-trynew, in BENCHMARKS.md)
// and the tests that check that path alone, which are its only users.
//
//lint:ignore U1000 kept beside New for the fast-path benchmarks and tests, its only users
func tryNew[T any](a *Arena) *T {
	if off := a.bytes.off; off+unsafe.Sizeof(rounded[T]{})-1 < a.bytes.combined && pointerFree[T]() {
		a.bytes.off = off + unsafe.Sizeof(rounded[T]{})
		a.bytes.allocs++
		return (*T)(unsafe.Add(a.bytes.base, off))
	}
	return nil
}

// MakeSlice returns a new slice of type []T with the given length and
// capacity allocated in a, like make([]T, len, cap). It panics if len or
// cap is negative, if len > cap, if the size overflows, or if a was freed.
func MakeSlice[T any](a *Arena, len, cap int) []T {
	// uint(len) <= uint(cap) also rejects len < 0; the second compare
	// rejects cap <= 0 and sizes near maxAlloc, so n does not wrap. The
	// slow path panics, handles the empty slice, and serves types with
	// pointers from the type table. The bump's compare comes before T's
	// descriptor is read, and is written as in newFast (off+n-1 <
	// combined: a zero-size T at offset 0 takes the slow path), so that a
	// slow-only byte region never reaches the read.
	if uint(len) <= uint(cap) && uintptr(cap)-1 < maxAlloc/(unsafe.Sizeof(*new(T))+1) {
		n := (uintptr(cap)*unsafe.Sizeof(*new(T)) + 7) &^ 7
		if off := a.bytes.off; off+n-1 < a.bytes.combined && pointerFree[T]() {
			a.bytes.off = off + n
			a.bytes.allocs++
			return unsafe.Slice((*T)(unsafe.Add(a.bytes.base, off)), cap)[:len]
		}
	}
	return makeSlow[T](a, len, cap)
}

// tryMakeTyped is the first step of makeSlow: the type-table probe and
// bump for 0 < cap <= maxAlloc/size; nil means "take the slow path".
func tryMakeTyped[T any](a *Arena, cap int) unsafe.Pointer {
	r := a.lookup(typeKey[T]())
	// A type table entry has a size that is a multiple of 8.
	n := uintptr(cap) * unsafe.Sizeof(*new(T))
	if off := r.off; off+n <= r.combined && n != 0 {
		r.off = off + n
		r.allocs++
		return unsafe.Add(r.base, off)
	}
	return nil
}

// String returns a copy of s allocated in a.
func String(a *Arena, s string) string {
	return stringFast(a, s, stringSlow)
}

// stringFast is String's body: the bump of the byte region and the copy,
// else the slow path, passed as a parameter so that String inlines (see
// newFast).
func stringFast(a *Arena, s string, slow func(*Arena, string) string) string {
	if r, n := &a.bytes, (uintptr(len(s))+7)&^7; r.off+n <= r.combined {
		p := (*byte)(unsafe.Add(r.base, r.off))
		r.off += n
		r.allocs++
		copy(unsafe.Slice(p, len(s)), s)
		return unsafe.String(p, len(s))
	}
	return slow(a, s)
}

// stringSlow is the slow path of String.
//
//go:noinline
func stringSlow(a *Arena, s string) string {
	if len(s) == 0 {
		a.check() // String panics after Free, even for ""
		a.bytes.allocs++
		return ""
	}
	p := a.allocBytes(uintptr(len(s)), kindString, skipString+1)
	copy(unsafe.Slice((*byte)(p), len(s)), s)
	return unsafe.String((*byte)(p), len(s))
}

// Bytes returns a copy of b allocated in a, with capacity len(b). It returns
// nil if b is nil.
func Bytes(a *Arena, b []byte) []byte {
	return bytesFast(a, b, bytesSlow)
}

// bytesFast is Bytes's body, like stringFast.
func bytesFast(a *Arena, b []byte, slow func(*Arena, []byte) []byte) []byte {
	if r, n := &a.bytes, (uintptr(len(b))+7)&^7; r.off+n <= r.combined && b != nil {
		r.allocs++
		r.off += n
		// append to a slice of capacity len(b) never grows it; the
		// inliner charges it less than copy and a return.
		return append(unsafe.Slice((*byte)(unsafe.Add(r.base, r.off-n)), len(b))[:0], b...)
	}
	return slow(a, b)
}

// bytesSlow is the slow path of Bytes.
//
//go:noinline
func bytesSlow(a *Arena, b []byte) []byte {
	a.check() // Bytes panics after Free, even for nil and empty b
	if len(b) == 0 {
		a.bytes.allocs++
	}
	if b == nil {
		return nil
	}
	if len(b) == 0 {
		return unsafe.Slice((*byte)(unsafe.Pointer(&zeroBase)), 0)
	}
	p := a.allocBytes(uintptr(len(b)), kindBytes, skipString+1)
	c := unsafe.Slice((*byte)(p), len(b))
	copy(c, b)
	return c
}
