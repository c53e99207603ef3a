package hooks_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/arenaprof/arenaprof/hooks"
)

// bufPool is a small free-list allocator of fixed-size buffers that
// reports its sampled allocations through hooks, with the per-byte model:
// every byte handed out is a trial with probability 1/mean; the buffer
// holding a success is reported once, with the offset of that byte.
type bufPool struct {
	size  int
	free  [][]byte
	id    uint64
	rng   *rand.Rand
	state *hooks.State // the state seen last: a new pointer means a change
	gap   int64        // failed trials left before the next success; -1: off
	pcs   [hooks.MaxStackDepth]uintptr
}

func newBufPool(size int) *bufPool {
	return &bufPool{size: size, id: hooks.NewArenaID(), rng: rand.New(rand.NewPCG(1, 2)), gap: -1}
}

// nextGap draws a geometric gap with p = 1/mean by inverse transform.
func (p *bufPool) nextGap(mean int64) int64 {
	if mean <= 1 {
		return 0
	}
	u := 1 - p.rng.Float64() // (0, 1]
	return int64(math.Log(u) / math.Log1p(-1/float64(mean)))
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
	st := hooks.Current() // one atomic load
	if st != p.state {    // sampling turned on or off, or a new mean
		p.state = st
		p.gap = -1
		if st.Enabled() {
			p.gap = p.nextGap(st.MeanBytes)
		}
	}
	if p.gap >= 0 {
		if p.gap < int64(p.size) { // this buffer holds the next success
			e := hooks.Event{
				TypeName:  "[]uint8",
				Size:      int64(p.size),
				Offset:    p.gap,
				MeanBytes: p.state.MeanBytes,
				Arena:     p.id,
				Time:      time.Now(),
			}
			e.Stack = p.pcs[:hooks.Callers(1, p.pcs[:])] // leaf: Get's caller
			hooks.Emit(&e)
			p.gap = p.nextGap(p.state.MeanBytes)
		} else {
			p.gap -= int64(p.size)
		}
	}
	return b
}

// Put takes a buffer back.
func (p *bufPool) Put(b []byte) { p.free = append(p.free, b) }

// Example shows a pool allocator of a service reporting its sampled
// allocations through hooks, so that the profiler sees them next to the
// arena's.
func Example() {
	_ = hooks.SetMeanBytes(4096)
	defer hooks.SetMeanBytes(hooks.DefaultMeanBytes)
	sampled := 0
	unregister := hooks.Register(hooks.ConsumerFunc(func(e *hooks.Event) {
		sampled++
	}))
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
