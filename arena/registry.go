package arena

import (
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
	"weak"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/holdings"
	"github.com/arenaprof/arenaprof/internal/poolgets"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
	"github.com/arenaprof/arenaprof/internal/unwind"
)

// The registry of live arenas: what each arena not yet freed holds, where
// it was made or taken from its pool, and since when. It is written at
// NewArena, Pool.Get and Put, Reset, Free, when an arena takes a new chunk
// or large buffer (the slow path), and read by readHoldings; the allocation
// fast path never touches it.
//
// The registry holds the arenas' records, never the arenas: an arena
// dropped without Free is still collected, and its record is removed by
// the sweep that follows the collection (see cleanup.go).

// holdStackDepth bounds the frames of the stack kept per arena.
const holdStackDepth = 32

// Arena states in the registry.
const (
	holdLive  = iota // made by NewArena or taken by Pool.Get
	holdIdle         // in a Pool, between Put and Get
	holdState = 3    // the state's bits in holding.mark
)

// holding is the registry's record of one arena. Its atomic fields are
// written by the arena's owner and read by readHoldings at any time.
type holding struct {
	arena weak.Pointer[Arena] // for the bump offsets (see usedNow)
	id    uint64              // the arena's ID
	// unreleased is whether an event was emitted since the arena's last
	// release, for the cleanup that releases a dropped arena (see
	// cleanup.go).
	unreleased atomic.Bool
	// mark is since<<2 | state, one word so that Pool.Get publishes both
	// with one store: since is the clock when the arena was made or taken
	// from its pool, state holdLive or holdIdle. The owner writes it with
	// plain stores (an atomic store, a locked exchange on amd64, cost Get
	// and Put about 2 ns each) and readHoldings reads it as usedNow reads the
	// offsets (see readMark).
	mark     int64
	gone     atomic.Bool // unregistered
	stack    atomic.Pointer[heldStack]
	labels   atomic.Pointer[hooks.Labels]
	pool     atomic.Pointer[poolRecord]
	reserved atomic.Int64 // bytes of chunks and large buffers
	// heap is the Go heap bytes the chunks and kept large buffers take
	// (their size classes and malloc headers; 0 for checked mode's mapped
	// chunks). Large buffers Reset does not keep are the caller's: the
	// arena holds no reference to them, so they are not counted.
	heap atomic.Int64
	// freshBytes is the part of heap taken while gcEpoch was
	// freshEpoch-1, the value it had when the arena last took heap
	// memory; freshEpoch is 0 while the owner changes them (see
	// noteReserved and freshNow).
	freshEpoch atomic.Uint64
	freshBytes atomic.Int64
	// looseUsed is the bytes handed out in large buffers Reset will not
	// keep (counted in closed).
	looseUsed atomic.Int64
	// closed is the bytes handed out since the last Reset in the chunks
	// the arena has left and in large buffers; the bytes of each
	// region's current chunk are its offset (see usedNow).
	closed atomic.Int64
	// slabs is every typed-slab region of the arena, republished (a new
	// slice) when one is added: regions are never removed before Free.
	slabs atomic.Pointer[[]*region]
	idx   int // position in registry.all, -1 if not listed; guarded by registry.mu
	// listed is whether the record is in the registry (see enlist); the
	// owner's.
	listed bool
	loose  int64        // bytes of large buffers not kept by Reset; the owner's
	taker  *takerFrames // the owner's; nil until a Get while profiling is on
}

// takerFrames are the physical frames of the last Get that took an arena
// while profiling was on: a Get from the same frames reuses its stack
// without expanding and interning it again. Only pooled arenas have them.
type takerFrames struct {
	n   int
	pcs [holdStackDepth]uintptr
}

// heldStack is a creating stack, immutable once published.
type heldStack struct{ pcs []uintptr }

// poolRecord identifies a Pool in the registry.
type poolRecord struct {
	id    uint64
	stack *heldStack // where the pool's first arena was taken
}

var registry struct {
	mu  sync.Mutex
	all []*holding
}

var poolIDs atomic.Uint64

// register makes the registry record of a new arena, made by the caller
// skip physical frames above register's caller. The record is listed in
// the registry only when the arena first takes memory (see enlist): an
// arena that holds nothing costs its NewArena no weak pointer and no lock,
// and one dropped before it allocates leaves nothing behind.
func (a *Arena) register(skip int) {
	h := &holding{id: a.id, idx: -1}
	//lint:ignore SA4016 holdLive is state 0 by design (holdIdle is 1, read back as mark&holdState); the OR spells out the since<<2 | state encoding
	h.mark = coarseNow()<<2 | holdLive
	h.labels.Store(labelsCopy(a.labels))
	a.pubKey = a.labels.Key()
	h.stack.Store(captureStack(skip+1, a.pcs[:holdStackDepth]))
	a.hold = h
}

// enlist lists the arena's record in the registry, with a weak pointer to
// the arena: from now on Holdings reports it, and the sweep after each
// garbage collection notices when it is dropped (see cleanup.go).
func (a *Arena) enlist() {
	h := a.hold
	h.arena = weak.Make(a)
	registry.mu.Lock()
	h.idx = len(registry.all)
	registry.all = append(registry.all, h)
	registry.mu.Unlock()
	h.listed = true
	armSweep()
}

// unregister removes h from the registry; it does nothing if h is gone or
// was never listed.
func unregister(h *holding) {
	if h.gone.Swap(true) {
		return
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if h.idx < 0 {
		return
	}
	last := registry.all[len(registry.all)-1]
	registry.all[h.idx] = last
	last.idx = h.idx
	registry.all[len(registry.all)-1] = nil
	registry.all = registry.all[:len(registry.all)-1]
	h.idx = -1
}

// taken records that the pool p handed a out to the caller skip physical
// frames above taken's caller. The caller's stack costs about 20 ns, as
// much as the rest of Get and Put: it is taken only while arena profiling
// is on (a consumer listens, see [hooks.Register]); otherwise the arena
// keeps the stack of the Get that made it, or that took it last while
// profiling was on. While profiling is on it also counts the Get (see
// package poolgets): a profile records the arenas its window handed out.
func (a *Arena) taken(p *Pool, skip int) {
	h := a.hold
	if samplingstate.Current().MeanBytes > 0 {
		poolgets.Add(a.id)
		if h.taker == nil {
			h.taker = new(takerFrames)
		}
		tf := h.taker
		var same bool
		tf.n, same = unwind.RepeatPhysicalStack(skip+1, tf.pcs[:], tf.n)
		if !same {
			st := captureStack(skip+1, a.pcs[:holdStackDepth])
			if h.stack.Load() != st {
				h.stack.Store(st)
			}
		}
	}
	if h.pool.Load() == nil {
		h.pool.Store(p.record(h.stack.Load()))
	}
	//lint:ignore SA4016 holdLive is state 0 by design, as in register
	h.mark = coarseNow()<<2 | holdLive
}

// idle records that a is back in its pool.
func (a *Arena) idle() { a.hold.mark = holdIdle }

// readMark returns h.mark. The owner writes it without synchronization,
// so it is read with a plain load, out of the race detector's sight, as
// usedNow reads the offsets: a word-sized load sees some value the owner
// wrote, and an arena taken or put back at the moment of the read may be
// listed in its state just before.
//
//go:norace
func readMark(h *holding) int64 { return h.mark }

// record returns the pool's record in the registry, made on first use
// with the stack st of the pool's first Get.
func (p *Pool) record(st *heldStack) *poolRecord {
	if r := p.rec.Load(); r != nil {
		return r
	}
	r := &poolRecord{id: poolIDs.Add(1), stack: st}
	if !p.rec.CompareAndSwap(nil, r) {
		return p.rec.Load()
	}
	return r
}

// publishLabels publishes the arena's labels. The owner keeps the key of
// the set it published last, so that a Get whose labels did not change
// compares two strings of its own (usually the same string) and touches
// nothing shared.
func (a *Arena) publishLabels() {
	if a.pubKey == a.labels.Key() {
		return
	}
	a.pubKey = a.labels.Key()
	a.hold.labels.Store(labelsCopy(a.labels))
}

// noLabels is the published copy of every empty label set.
var noLabels = new(hooks.Labels)

// labelsCopy returns a copy of l to publish: the record must not point
// into the arena.
func labelsCopy(l hooks.Labels) *hooks.Labels {
	if l.Key() == "" {
		return noLabels
	}
	c := l // allocated here, not on every call
	return &c
}

// stackCache holds the published copies of the stacks unwind.FastStack
// interned, so that the same creating site publishes the same pointer.
var stackCache [1 << 10]atomic.Pointer[heldStack]

// captureStack returns the stack of the caller skip physical frames above
// captureStack's caller, shared with every arena made or taken there.
//
//go:noinline
func captureStack(skip int, scratch []uintptr) *heldStack {
	st, hash := unwind.FastStack(skip+1, scratch)
	if hash == 0 || len(st) == 0 {
		// Not interned (frame-pointer unwinding is off): a copy.
		return &heldStack{pcs: append([]uintptr(nil), st...)}
	}
	slot := &stackCache[hash>>(64-10)]
	if s := slot.Load(); s != nil && len(s.pcs) == len(st) && unsafe.SliceData(s.pcs) == unsafe.SliceData(st) {
		return s
	}
	// FastStack's stack is interned and immutable: it can be shared.
	s := &heldStack{pcs: st}
	slot.Store(s)
	return s
}

// noteReserved records a new chunk or large buffer of n bytes taking heap
// bytes of the Go heap (sizeclass.HeapBytes; 0 for memory mapped off the
// heap), or, for a negative n and heap, one dropped.
func (a *Arena) noteReserved(n, heap int64) {
	if !a.hold.listed {
		a.enlist()
	}
	h := a.hold
	h.reserved.Add(n)
	switch {
	case heap > 0:
		// The total first, then the fresh part: readHoldings reads them
		// in the other order, so it never sees more fresh than total
		// from this write.
		h.heap.Add(heap)
		if e := gcEpoch.Load() + 1; h.freshEpoch.Load() == e {
			h.freshBytes.Add(heap)
		} else {
			// A reader that sees the new bytes sees the epoch change.
			h.freshEpoch.Store(0)
			h.freshBytes.Store(heap)
			h.freshEpoch.Store(e)
		}
	case heap < 0:
		// Which collection the dropped memory predates is not kept: it
		// comes off the fresh part first (then, if anything, the fresh
		// part left is short, counted as made before the collection).
		if h.freshEpoch.Load() == gcEpoch.Load()+1 {
			h.freshBytes.Add(-min(-heap, h.freshBytes.Load()))
		}
		h.heap.Add(heap)
	}
}

// noteLoose records a large buffer of n bytes that Reset will not keep.
func (a *Arena) noteLoose(n uintptr) {
	a.hold.loose += int64(n)
	a.noteReserved(int64(n), 0)
	a.noteClosed(n)
	a.hold.looseUsed.Add(int64(n))
}

// noteClosed records n bytes handed out in a chunk the region left or in
// a large buffer.
func (a *Arena) noteClosed(n uintptr) {
	if n != 0 {
		a.hold.closed.Add(int64(n))
	}
}

// noteSlab publishes a new typed-slab region.
func (a *Arena) noteSlab(r *region) {
	old := a.hold.slabs.Load()
	var s []*region
	if old != nil {
		s = append(s, *old...)
	}
	s = append(s, r)
	a.hold.slabs.Store(&s)
}

// noteReset records a Reset: nothing is handed out, and the large buffers
// Reset did not keep are gone (resetLarge has subtracted those it dropped).
func (a *Arena) noteReset() {
	h := a.hold
	if h.closed.Load() != 0 { // a load is a plain read; a store is a locked exchange
		h.closed.Store(0)
	}
	if h.loose != 0 {
		h.reserved.Add(-h.loose)
		h.looseUsed.Store(0)
		h.loose = 0
	}
}

// noteDropped records a Reset that dropped all the arena's memory (checked
// mode).
func (a *Arena) noteDropped() {
	h := a.hold
	h.closed.Store(0)
	h.reserved.Store(0)
	h.heap.Store(0)
	h.freshEpoch.Store(0)
	h.freshBytes.Store(0)
	h.looseUsed.Store(0)
	h.loose = 0
}

// freshNow returns the heap bytes h's arena took while gcEpoch was
// epoch, and all its heap bytes.
// Bytes read while the owner changes the epoch count as taken before (0).
func freshNow(h *holding, epoch uint64) (fresh, heap int64) {
	if e := h.freshEpoch.Load(); e == epoch+1 {
		fresh = h.freshBytes.Load() // before the total: see noteReserved
		if h.freshEpoch.Load() != e {
			fresh = 0
		}
	}
	heap = h.heap.Load()
	return min(max(0, fresh), heap), heap
}

// usedNow returns the bytes h's arena has handed out since its last
// Reset: the bytes of the chunks it left, plus the offset of each
// region's current chunk. The offsets are written by the arena's owner
// without synchronization (the fast path must stay a compare and a
// store), so they are read here with a plain load, out of the race
// detector's sight: a word-sized load sees some value the owner wrote (the
// Go memory model), exact for an arena not in use at the moment of the
// read, and at most one chunk per region off for one in use.
//
//go:norace
func usedNow(h *holding, a *Arena) int64 {
	used := h.closed.Load() + int64(a.bytes.off)
	if s := h.slabs.Load(); s != nil {
		for _, r := range *s {
			used += int64(r.off)
		}
	}
	return max(0, min(used, h.reserved.Load()))
}

// The clock of the registry: nanoseconds since the process started. A
// clock read costs about 50 ns on some virtual machines, more than
// Pool.Get itself, so Pool.Get reads a coarse copy of it, refreshed every
// clockTick while arenas are being taken: an age is at most about two
// ticks too old.
const clockTick = 100 * time.Millisecond

var (
	clockStart = time.Now()
	clockNow   atomic.Int64 // refreshed by the ticker while clockOn
	clockOn    atomic.Bool
	clockUsed  atomic.Bool // read since the last tick
)

// now reads the clock.
func now() int64 { return int64(time.Since(clockStart)) }

// coarseNow reads the coarse clock, starting its ticker if it is stopped.
func coarseNow() int64 {
	if !clockUsed.Load() {
		clockUsed.Store(true)
	}
	if !clockOn.Load() && clockOn.CompareAndSwap(false, true) {
		clockNow.Store(now())
		time.AfterFunc(clockTick, tick)
	}
	return clockNow.Load()
}

// tick refreshes the coarse clock, and stops when nobody read it since the
// previous tick.
func tick() {
	if !clockUsed.Swap(false) {
		clockOn.Store(false)
		return
	}
	clockNow.Store(now())
	time.AfterFunc(clockTick, tick)
}

func init() { holdings.SetReader(readHoldings) }

// readHoldings reads the registry for [holdings.Read].
func readHoldings() []holdings.Holding {
	registry.mu.Lock()
	all := append([]*holding(nil), registry.all...)
	registry.mu.Unlock()
	t := now()
	epoch := gcEpoch.Load()
	out := make([]holdings.Holding, 0, len(all))
	idle := map[*poolRecord]*holdings.Holding{}
	var pools []*poolRecord
	for _, h := range all {
		a := h.arena.Value()
		if a == nil {
			continue // collected; the sweep has not run yet
		}
		if h.gone.Load() {
			continue // freed since the copy
		}
		mark := readMark(h)
		fresh, heap := freshNow(h, epoch)
		switch mark & holdState {
		case holdLive:
			var l holdings.Labels
			if p := h.labels.Load(); p != nil && p.Key() != "" {
				l = p // no copy: the record's labels are immutable once published
			}
			var pcs []uintptr
			if s := h.stack.Load(); s != nil {
				pcs = s.pcs
			}
			out = append(out, holdings.Holding{
				Stack:    pcs,
				Labels:   l,
				Age:      time.Duration(max(0, t-mark>>2)),
				Arenas:   1,
				Reserved: h.reserved.Load(),
				Fresh:    fresh,
				Heap:     heap,
				Cycle:    epoch,
				Used:     usedNow(h, a),
				Loose:    h.looseUsed.Load(),
			})
		case holdIdle:
			p := h.pool.Load()
			if p == nil {
				continue
			}
			s := idle[p]
			if s == nil {
				s = &holdings.Holding{Pool: p.id, Cycle: epoch}
				if p.stack != nil {
					s.Stack = p.stack.pcs
				}
				idle[p] = s
				pools = append(pools, p)
			}
			s.Arenas++
			s.Reserved += h.reserved.Load()
			s.Heap += heap
			s.Fresh += fresh
		}
	}
	for _, p := range pools {
		out = append(out, *idle[p])
	}
	return out
}
