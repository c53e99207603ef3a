package hooks_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
)

// bufPool is a small free-list allocator of fixed-size buffers that
// reports its sampled allocations through hooks, with the per-byte model:
// every byte handed out is a trial with probability 1/mean; the buffer
// holding a success is reported once, with the offset of that byte.
type bufPool struct {
	size int
	free [][]byte
	id   uint64
	rng  *rand.Rand
	mean int64 // the mean of the running trial stream; 0: not started
	gap  int64 // failed trials left before the next success
	pcs  [64]uintptr
}

func newBufPool(size int) *bufPool {
	return &bufPool{size: size, id: hooks.NewArenaID(), rng: rand.New(rand.NewPCG(1, 2))}
}

// nextGap reads the mean in force and draws a geometric gap with
// p = 1/mean by inverse transform. Reading the mean at each success picks
// up a change soon enough: every event carries the mean it was drawn under.
func (p *bufPool) nextGap() {
	p.mean = hooks.MeanBytes()
	p.gap = 0
	if p.mean > 1 {
		u := 1 - p.rng.Float64() // (0, 1]
		p.gap = int64(math.Log(u) / math.Log1p(-1/float64(p.mean)))
	}
}

// Get hands out a buffer, sampling it.
func (p *bufPool) Get() []byte {
	var b []byte
	if n := len(p.free); n > 0 {
		b, p.free = p.free[n-1], p.free[:n-1]
		clear(b)
	} else {
		b = make([]byte, p.size)
	}
	if p.mean <= 0 { // first use, or sampling was off
		if p.nextGap(); p.mean <= 0 {
			return b
		}
	}
	if p.gap >= int64(p.size) {
		p.gap -= int64(p.size)
		return b
	}
	// This buffer holds the next success. Emit costs little while no
	// consumer is registered.
	e := hooks.Event{
		TypeName:  "[]uint8",
		Size:      int64(p.size),
		Offset:    p.gap,
		MeanBytes: p.mean,
		Arena:     p.id,
		Time:      time.Now(),
	}
	e.Stack = p.pcs[:runtime.Callers(2, p.pcs[:])] // leaf: Get's caller
	hooks.Emit(&e)
	p.nextGap()
	return b
}

// Put takes a buffer back.
func (p *bufPool) Put(b []byte) { p.free = append(p.free, b) }

// Example shows a pool allocator of a service reporting its sampled
// allocations through hooks, so that the profiler sees them next to the
// arena's.
func Example() {
	_ = hooks.SetMeanBytes(4096)
	defer hooks.SetMeanBytes(samplingstate.DefaultMeanBytes)
	var sampled counter
	unregister := hooks.Register(&sampled)
	defer unregister()

	pool := newBufPool(1024)
	for range 4000 {
		b := pool.Get()
		pool.Put(b)
	}
	// 4000 buffers of 1 KiB at a mean of 4 KiB: about
	// 4000 * (1 - (1-1/4096)^1024) = 885 sampled.
	fmt.Println(sampled > 700 && sampled < 1100)
	// Output: true
}

// counter counts sampled objects and ignores releases.
type counter int

func (c *counter) Sampled(*hooks.Event) { *c++ }
func (c *counter) Released(uint64)      {}

// byLabels sums the sampled bytes per label set.
type byLabels map[string]int64

// Sampled is called on the allocating goroutine: be quick, copy what you
// keep.
func (m byLabels) Sampled(e *hooks.Event) { m[e.Labels.String()] += e.Size }
func (m byLabels) Released(uint64)        {}

// ExampleRegister counts the bytes sampled per label set.
func ExampleRegister() {
	bytes := byLabels{}
	unregister := hooks.Register(bytes)
	defer unregister()

	hooks.Emit(&hooks.Event{TypeName: "main.user", Size: 48, Offset: 3, MeanBytes: 1,
		Labels: hooks.NewLabels("route", "/users"), Arena: hooks.NewArenaID()})
	fmt.Println(bytes)
	// Output: map[{route="/users"}:48]
}

// ExampleEmit reports one sampled object of an allocator and then its
// release.
func ExampleEmit() {
	id := hooks.NewArenaID() // once per allocator instance
	unregister := hooks.Register(logger{})
	defer unregister()

	// The allocator's 4096-byte block holds the sampled byte at offset 100.
	hooks.Emit(&hooks.Event{TypeName: "[]uint8", Size: 4096, Offset: 100,
		MeanBytes: hooks.MeanBytes(), Arena: id})
	// The allocator freed everything it had handed out.
	hooks.Release(id)
	// Output:
	// sampled []uint8 of 4096 bytes
	// released
}

// logger is a consumer that wants releases too.
type logger struct{}

func (logger) Sampled(e *hooks.Event) { fmt.Printf("sampled %s of %d bytes\n", e.TypeName, e.Size) }
func (logger) Released(uint64)        { fmt.Println("released") }
