package hooks

import (
	"fmt"
	"log"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arenaprof/arenaprof/internal/samplingstate"
)

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
	// with it (package arena hashes the physical frames, which determine
	// the logical ones), so that a consumer can look its record
	// of the stack up without hashing the stack itself. Events of one
	// allocator with equal stacks have equal hashes, except stacks cut at
	// the depth limit, which may differ below the cut. Equal hashes do not
	// mean equal stacks: compare the stacks. 0 means none was computed.
	StackHash uint64
	// Labels are the labels of the arena (or allocator) the object came from.
	Labels Labels
	// Arena identifies the allocator instance the object came from: a
	// value of [NewArenaID], so that it differs from every other
	// allocator's; see [Release].
	Arena uint64
	// Time is when the object was allocated, if the allocator records it,
	// else zero. Package arena leaves it zero: reading the clock cost about
	// as much as the rest of an event on a virtual machine. A consumer that
	// needs the time reads the clock in Sampled, which runs on the
	// allocating goroutine at the allocation.
	Time time.Time
}

// validate reports what is wrong with an event an allocator is about to
// emit, or nil. [Emit] drops invalid events and counts them.
func (e *Event) validate() error {
	switch {
	case e.Size <= 0:
		return fmt.Errorf("hooks: event size %d is not positive", e.Size)
	case e.Offset < 0 || e.Offset >= e.Size:
		return fmt.Errorf("hooks: event offset %d is outside the object [0, %d)", e.Offset, e.Size)
	case e.MeanBytes <= 0 || e.MeanBytes > samplingstate.MaxMeanBytes:
		return fmt.Errorf("hooks: event mean %d is outside [1, %d]", e.MeanBytes, int64(samplingstate.MaxMeanBytes))
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

type consumer struct {
	c        Consumer
	name     string
	disabled atomic.Bool
}

var (
	mu        sync.Mutex // serialises changes of consumers; Emit loads it
	consumers atomic.Pointer[[]*consumer]
	nextArena atomic.Uint64

	// onPanic, when set (by the tests' onConsumerPanic), is told of a
	// consumer's panic instead of package log.
	onPanic atomic.Pointer[func(error)]
)

func init() {
	consumers.Store(new([]*consumer))
}

// SetMeanBytes sets the sampling mean: the mean distance in bytes between
// sampled bytes, so that each byte allocated is sampled with probability
// p = 1/n. It plays the part [runtime.MemProfileRate] plays for the Go heap,
// and like it is one setting for the whole process. n = 1 samples every
// object; n <= 0 turns sampling off even while consumers are registered.
// The default is 102400: on average one sampled byte per 100 KiB
// allocated, the value .NET uses for its AllocationSampled events.
//
// Allocators pick the change up at their next slow path; every event
// records the mean it was drawn under, so estimates stay unbiased across the
// change, and profiles list every mean in force during their window. It
// returns an error, and changes nothing, if n is above 2^40.
func SetMeanBytes(n int64) error { return samplingstate.SetMean(n) }

// MeanBytes returns the configured sampling mean (in force while at least
// one consumer is registered), 0 if sampling was turned off.
func MeanBytes() int64 { return samplingstate.Mean() }

// Register adds a consumer of sampled allocations and returns the function
// that removes it. Registering the
// first consumer turns sampling on, at the mean [SetMeanBytes] configured.
// Calling unregister more than once is harmless.
func Register(c Consumer) (unregister func()) {
	if c == nil {
		panic("arenaprof: hooks.Register with a nil consumer")
	}
	rec := &consumer{c: c, name: fmt.Sprintf("%T", c)}
	mu.Lock()
	old := *consumers.Load()
	next := append(old[:len(old):len(old)], rec)
	consumers.Store(&next)
	samplingstate.SetListening(true)
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
			samplingstate.SetListening(len(next) > 0)
		})
	}
}

// Emit delivers a sampled allocation to every registered consumer, on the
// calling goroutine. An invalid event (Size <= 0, Offset outside
// [0, Size), or MeanBytes outside [1, 2^40]) is dropped. A consumer that
// panics is disabled and the panic logged with package log; the allocating
// goroutine carries on.
func Emit(e *Event) {
	if e.validate() != nil {
		return
	}
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
			err := fmt.Errorf("hooks: consumer %s panicked and was disabled: %v", c.name, r)
			if h := onPanic.Load(); h != nil {
				(*h)(err)
			} else {
				log.Print("arenaprof: ", err)
			}
		}
	}()
	if e != nil {
		c.c.Sampled(e)
	} else {
		c.c.Released(*released)
	}
}

// NewArenaID returns an identity, unique in the process and never 0, for an
// allocator instance to put in its events' Arena field and pass to
// [Release].
func NewArenaID() uint64 { return nextArena.Add(1) }
