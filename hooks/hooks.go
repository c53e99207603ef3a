package hooks

import (
	"cmp"
	"fmt"
	"log"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMeanBytes is the default mean distance, in bytes, between sampled
// bytes: the value .NET uses for its AllocationSampled events.
const DefaultMeanBytes = 102400

// MaxMeanBytes is the largest mean [SetMeanBytes] accepts (2^40 bytes).
const MaxMeanBytes = 1 << 40

// MaxStackDepth is the number of frames allocators capture per event.
const MaxStackDepth = 64

// Event describes one sampled allocation: the object that contains the first
// successful per-byte trial since the allocator's previous sample.
//
// An Event and its Stack are valid only during the consumer's call: the
// allocator may reuse them afterwards. A consumer copies what it keeps.
type Event struct {
	// TypeName is the Go type of the object as reflect prints it
	// ("main.user", "[]uint8"); empty if unknown.
	TypeName string
	// Type is the object's type where the allocator knows it, else nil.
	// For a slice allocation it is the slice type.
	Type reflect.Type
	// Size is the number of bytes the allocator handed out for the object
	// (rounded up to its alignment). Always > 0.
	Size int64
	// Offset is the 0-based offset of the successful trial in the object,
	// 0 <= Offset < Size.
	Offset int64
	// MeanBytes is the mean (1/p) in effect when the trial was drawn.
	MeanBytes int64
	// Stack holds the return program counters of the allocating goroutine,
	// leaf first, as runtime.Callers returns them, starting at the function
	// that called the allocator. It is read-only: the allocator may share
	// it between events.
	Stack []uintptr
	// StackHash, if not 0, is a hash of the stack that the allocator got
	// with it (from [FastStack]: a hash of the physical frames, which
	// determine the logical ones), so that a consumer can look its record
	// of the stack up without hashing the stack itself. Events of one
	// allocator with equal stacks have equal hashes, except stacks cut at
	// the depth limit, which may differ below the cut. Equal hashes do not
	// mean equal stacks: compare the stacks. 0 means none was computed.
	StackHash uint64
	// Labels are the labels of the arena (or allocator) the object came from.
	Labels Labels
	// Arena identifies the allocator instance the object came from; see
	// [NewArenaID] and [Release].
	Arena uint64
	// Time is when the object was allocated, if the allocator records it,
	// else zero. Package arena leaves it zero: reading the clock cost about
	// as much as the rest of an event on a virtual machine. A consumer that
	// needs the time reads the clock in Sampled, which runs on the
	// allocating goroutine at the allocation.
	Time time.Time
}

// Validate reports what is wrong with an event an allocator is about to
// emit, or nil. [Emit] drops invalid events and counts them.
func (e *Event) Validate() error {
	switch {
	case e.Size <= 0:
		return fmt.Errorf("hooks: event size %d is not positive", e.Size)
	case e.Offset < 0 || e.Offset >= e.Size:
		return fmt.Errorf("hooks: event offset %d is outside the object [0, %d)", e.Offset, e.Size)
	case e.MeanBytes <= 0 || e.MeanBytes > MaxMeanBytes:
		return fmt.Errorf("hooks: event mean %d is outside [1, %d]", e.MeanBytes, int64(MaxMeanBytes))
	}
	return nil
}

// Consumer receives sampled allocations and releases.
type Consumer interface {
	// Sampled is called synchronously on the allocating goroutine for each
	// sampled object. It must be quick and must not retain e or e.Stack.
	Sampled(e *Event)
	// Released is called when every object that the allocator identified by
	// arena handed out so far is gone (an arena was reset or freed).
	// Objects it hands out afterwards may carry the same identity.
	Released(arena uint64)
}

// State is the sampling configuration allocators read in their slow path.
// A State is immutable; every change installs a new one, so an allocator
// can detect a change by comparing the pointer it last saw with [Current].
type State struct {
	// MeanBytes is the mean distance between sampled bytes, or 0 when
	// sampling is off (no consumer, or a mean <= 0 was set).
	MeanBytes int64
	// TrialMeanBytes is the mean of the trial streams allocators keep
	// running: the configured mean even while no consumer is registered,
	// so that every byte allocated after a consumer registers gets its
	// trial (an allocator draws its trials at all times and emits only
	// while MeanBytes > 0); 0 after SetMeanBytes with n <= 0.
	TrialMeanBytes int64
}

// Enabled reports whether sampling is on.
func (s *State) Enabled() bool { return s.MeanBytes > 0 }

type consumer struct {
	c        Consumer
	name     string
	disabled atomic.Bool
	panics   atomic.Uint64
}

var (
	mu         sync.Mutex // serialises changes; readers use the atomics below
	consumers  atomic.Pointer[[]*consumer]
	configured = int64(DefaultMeanBytes)
	current    atomic.Pointer[State]
	nextArena  atomic.Uint64

	events    [eventShards]paddedCounter
	invalid   atomic.Uint64
	panicked  atomic.Uint64
	lastPanic atomic.Pointer[string]

	onPanic atomic.Pointer[func(error)]

	// epoch counts the changes of the configured mean; lastEpoch holds,
	// for each positive mean configured so far, the last epoch in which
	// it was in force (at most maxMeanHistory means; see MeansSince).
	epoch     uint64
	lastEpoch = map[int64]uint64{DefaultMeanBytes: 0}
	forgotten uint64 // the largest lastEpoch of a mean evicted from lastEpoch, plus 1
)

// maxMeanHistory bounds the number of distinct means [MeansSince] remembers.
const maxMeanHistory = 1024

func init() {
	current.Store(&State{TrialMeanBytes: configured})
	consumers.Store(new([]*consumer))
}

// Current returns the sampling state in force. It is one atomic load.
func Current() *State { return current.Load() }

// publish installs a new State; mu must be held.
func publish() {
	mean := int64(0)
	if len(*consumers.Load()) > 0 && configured > 0 {
		mean = configured
	}
	current.Store(&State{MeanBytes: mean, TrialMeanBytes: configured})
}

// SetMeanBytes sets the mean distance in bytes between sampled bytes
// (p = 1/n). n = 1 samples every object; n <= 0 turns sampling off even
// while consumers are registered. Allocators pick the change up at their
// next slow path; every event records the mean it was drawn under, so
// estimates stay unbiased across the change. Every mean set is recorded,
// so that profiles can list the means in force during their window (see
// [MeansSince]). It returns an error, and changes nothing, if n is above
// [MaxMeanBytes].
func SetMeanBytes(n int64) error {
	if n > MaxMeanBytes {
		return fmt.Errorf("hooks: mean %d bytes is above the maximum %d", n, int64(MaxMeanBytes))
	}
	if n < 0 {
		n = 0
	}
	mu.Lock()
	defer mu.Unlock()
	if n != configured {
		epoch++
		if n > 0 {
			if _, ok := lastEpoch[n]; !ok && len(lastEpoch) >= maxMeanHistory {
				evictOldestMean()
			}
		}
	}
	configured = n
	if n > 0 {
		lastEpoch[n] = epoch
	}
	publish()
	return nil
}

// evictOldestMean forgets the mean last in force longest ago; mu is held.
func evictOldestMean() {
	var old int64
	oldE := ^uint64(0)
	for m, e := range lastEpoch {
		if m != configured && e < oldE {
			old, oldE = m, e
		}
	}
	delete(lastEpoch, old)
	forgotten = max(forgotten, oldE+1)
}

// MeanEpoch returns the number of changes of the configured mean since the
// process started: pass it to [MeansSince] later to learn every mean in
// force from now on.
func MeanEpoch() uint64 {
	mu.Lock()
	defer mu.Unlock()
	return epoch
}

// MeanInForce is one sampling mean configured at some point, and the last
// epoch (see [MeanEpoch]) in which it was.
type MeanInForce struct {
	MeanBytes int64
	LastEpoch uint64
}

// MeansSince returns, in increasing order of mean, every positive mean that
// was configured (see [SetMeanBytes]) at some point from epoch since (a
// value of [MeanEpoch]) until now, and the current epoch. Allocators pick a
// change up at their next slow path, so these are the means their trial
// streams ran at during that time, except for a stream that had not yet
// picked up an older change (its events carry their mean all the same).
// complete is false if more than 1024 distinct means were configured and
// some in force since then were forgotten.
func MeansSince(since uint64) (means []MeanInForce, now uint64, complete bool) {
	mu.Lock()
	defer mu.Unlock()
	for m, e := range lastEpoch {
		if e >= since {
			means = append(means, MeanInForce{MeanBytes: m, LastEpoch: e})
		}
	}
	slices.SortFunc(means, func(a, b MeanInForce) int { return cmp.Compare(a.MeanBytes, b.MeanBytes) })
	return means, epoch, since >= forgotten
}

// MeanBytes returns the configured mean (which is in force while at least
// one consumer is registered), 0 if sampling was turned off.
func MeanBytes() int64 {
	mu.Lock()
	defer mu.Unlock()
	return configured
}

// ConsumerFunc is a [Consumer] that only wants the sampled allocations:
// it calls the function for each one and ignores releases.
type ConsumerFunc func(*Event)

// Sampled calls f(e).
func (f ConsumerFunc) Sampled(e *Event) { f(e) }

// Released does nothing.
func (f ConsumerFunc) Released(uint64) {}

// Register adds a consumer of sampled allocations (use [ConsumerFunc] for a
// plain function) and returns the function that removes it. Registering the
// first consumer turns sampling on, at the mean [SetMeanBytes] configured.
// Calling unregister more than once is harmless.
func Register(c Consumer) (unregister func()) {
	if c == nil {
		panic("arenaprof: hooks.Register with a nil consumer")
	}
	if f, ok := c.(ConsumerFunc); ok && f == nil {
		panic("arenaprof: hooks.Register with a nil ConsumerFunc")
	}
	rec := &consumer{c: c, name: fmt.Sprintf("%T", c)}
	mu.Lock()
	old := *consumers.Load()
	next := append(old[:len(old):len(old)], rec)
	consumers.Store(&next)
	publish()
	mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			old := *consumers.Load()
			next := make([]*consumer, 0, len(old))
			for _, x := range old {
				if x != rec {
					next = append(next, x)
				}
			}
			consumers.Store(&next)
			publish()
		})
	}
}

// Emit delivers a sampled allocation to every registered consumer, on the
// calling goroutine. Invalid events (see [Event.Validate]) are dropped and
// counted. A consumer that panics is disabled, the panic is counted in
// [Stats] and reported through the handler set by [OnConsumerPanic]; the
// allocating goroutine carries on.
func Emit(e *Event) {
	if e.Validate() != nil {
		invalid.Add(1)
		return
	}
	events[e.Arena%eventShards].n.Add(1)
	for _, c := range *consumers.Load() {
		if !c.disabled.Load() {
			deliver(c, e, nil)
		}
	}
}

// Release tells every consumer that the objects handed out so far by the
// allocator identified by arena are gone. Allocators call it from Reset and
// Free, and only if they emitted an event since the previous release.
func Release(arena uint64) {
	for _, c := range *consumers.Load() {
		if !c.disabled.Load() {
			deliver(c, nil, &arena)
		}
	}
}

func deliver(c *consumer, e *Event, released *uint64) {
	defer func() {
		if r := recover(); r != nil {
			c.disabled.Store(true)
			c.panics.Add(1)
			panicked.Add(1)
			err := fmt.Errorf("hooks: consumer %s panicked and was disabled: %v", c.name, r)
			msg := err.Error()
			lastPanic.Store(&msg)
			if h := onPanic.Load(); h != nil {
				(*h)(err)
			} else {
				log.Print("arenaprof: ", msg)
			}
		}
	}()
	if e != nil {
		c.c.Sampled(e)
	} else {
		c.c.Released(*released)
	}
}

// OnConsumerPanic sets the function told when a consumer panics and is
// disabled; nil restores the default, which logs one line with package log.
func OnConsumerPanic(fn func(error)) {
	if fn == nil {
		onPanic.Store(nil)
		return
	}
	onPanic.Store(&fn)
}

// Stats counts what passed through the hooks since the process started.
type Stats struct {
	Events         uint64 // valid events emitted
	Invalid        uint64 // events dropped by Emit because Validate failed
	Consumers      int    // consumers registered now
	Disabled       int    // of those, disabled after a panic
	ConsumerPanics uint64 // panics recovered from consumers
	LastPanic      string // the message of the last one, if any
}

// ReadStats returns the counters.
func ReadStats() Stats {
	s := Stats{Invalid: invalid.Load(), ConsumerPanics: panicked.Load()}
	for i := range events {
		s.Events += events[i].n.Load()
	}
	for _, c := range *consumers.Load() {
		s.Consumers++
		if c.disabled.Load() {
			s.Disabled++
		}
	}
	if p := lastPanic.Load(); p != nil {
		s.LastPanic = *p
	}
	return s
}

// NewArenaID returns an identity, unique in the process, for an allocator
// instance to put in its events' Arena field.
func NewArenaID() uint64 { return nextArena.Add(1) }

// Callers fills pcs with the return program counters of the calling
// goroutine's stack, as [runtime.Callers] does, and returns how many it
// wrote. skip = 0 makes the caller of Callers the leaf frame; each further
// unit skips one more logical frame (inlined frames count, so the result
// does not depend on the compiler's inlining decisions). [FastCallers] gives
// the same stacks at a fraction of the cost, but counts physical frames.
func Callers(skip int, pcs []uintptr) int {
	return runtime.Callers(skip+2, pcs)
}

// eventShards is how many counters Emit spreads its event count over, by
// arena: one counter shared by every core would make each event on one core
// invalidate the cache line the others write to. Arenas in use at the same
// time have nearby identities, so up to 64 of them count on counters of
// their own; with 16, 32 goroutines of 32 arenas shared counters in pairs
// and spent 1.5x the CPU per event of 2 goroutines.
const eventShards = 64

// paddedCounter is a counter alone on its cache line.
type paddedCounter struct {
	n atomic.Uint64
	_ [56]byte
}
