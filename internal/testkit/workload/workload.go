package workload

import (
	"fmt"
	"iter"
	"math/rand/v2"
)

// Type is one kind of allocated object in a workload.
type Type struct {
	// Name is the Go type name as reflect prints it ("main.record", "[]uint8").
	Name string
	// Site is the function that allocates it, for programs that replay the
	// workload with real call sites.
	Site string
	// MinSize and MaxSize bound the sizes of its objects, in bytes.
	MinSize, MaxSize int64
}

// Alloc is one allocation of a stream.
type Alloc struct {
	// Type indexes the workload's Types.
	Type int
	// Size is the object's size in bytes: positive and a multiple of 8.
	Size int64
	// Request is the 0-based index of the request the allocation belongs
	// to in a request workload, else 0.
	Request int
}

// Workload is a named, seeded allocation stream with exact per-type totals.
type Workload struct {
	// Name is a short identifier ("periodic", "mixed", "requests").
	Name string
	// Description says what the stream models, in one sentence.
	Description string
	// Types lists the allocated types; Alloc.Type indexes it.
	Types []Type
	// Totals holds the exact bytes allocated per type by every stream,
	// whatever the seed.
	Totals []int64
	// Objects holds the exact number of objects allocated per type.
	Objects []int64

	gen func(r *rand.Rand, yield func(Alloc) bool)
}

// Stream returns the allocations of the workload for a seed. The same
// seed always gives the same stream. For the periodic workload the seed
// is unused: the pattern is the point.
func (w *Workload) Stream(seed uint64) iter.Seq[Alloc] {
	return func(yield func(Alloc) bool) {
		r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
		w.gen(r, yield)
	}
}

// TotalBytes returns the sum of Totals.
func (w *Workload) TotalBytes() int64 {
	var t int64
	for _, b := range w.Totals {
		t += b
	}
	return t
}

// All returns the workloads of the accuracy study at their default scale,
// in a fixed order.
func All() []*Workload {
	return []*Workload{Periodic(), Mixed(), Requests()}
}

// ByName returns the default-scale workload with the given name.
func ByName(name string) (*Workload, error) {
	for _, w := range All() {
		if w.Name == name {
			return w, nil
		}
	}
	return nil, fmt.Errorf("workload: unknown workload %q (have periodic, mixed, requests)", name)
}

// pairs draws count values in [lo, hi] (multiples of step) so that their
// sum is exactly count*(lo+hi)/2: each fresh uniform draw x leaves its
// complement lo+hi-x in a pool, and every later draw either takes a random
// complement from the pool or draws afresh (a fair coin), until the pool
// must be emptied. Taking complements at random moments, rather than right
// after their partner, keeps the stream free of any exact period. count
// must be even, and next must be called exactly count times.
type pairs struct {
	lo, hi, step int64
	left         int64 // values still to draw
	pool         []int64
}

func newPairs(lo, hi, step, count int64) *pairs {
	return &pairs{lo: lo, hi: hi, step: step, left: count}
}

func (p *pairs) next(r *rand.Rand) int64 {
	if p.lo == p.hi {
		return p.lo
	}
	p.left--
	// left-len(pool) stays even, so a fresh draw always has room for its
	// complement.
	if k := len(p.pool); k > 0 && (p.left+1 == int64(k) || r.IntN(2) == 0) {
		i := r.IntN(k)
		x := p.pool[i]
		p.pool[i] = p.pool[k-1]
		p.pool = p.pool[:k-1]
		return x
	}
	x := p.lo + p.step*r.Int64N((p.hi-p.lo)/p.step+1)
	p.pool = append(p.pool, p.lo+p.hi-x)
	return x
}

// PeriodicCycle is the length in bytes of the periodic workload's repeating
// pattern; 25 cycles are exactly 102400 bytes.
const PeriodicCycle = 4096

// Periodic returns a loop that allocates the same 4096-byte pattern 25000
// times (102.4 MB): one 2048-byte event, a 512-byte span, eight 64-byte
// points, a span, eight points. The cycle divides 102400, so a fixed
// 100 KB stride always lands on the same position of the pattern.
func Periodic() *Workload {
	const cycles = 25000
	types := []Type{
		{Name: "main.event", Site: "main.emitEvent", MinSize: 2048, MaxSize: 2048},
		{Name: "main.span", Site: "main.openSpan", MinSize: 512, MaxSize: 512},
		{Name: "main.point", Site: "main.addPoint", MinSize: 64, MaxSize: 64},
	}
	const event, span, point = 0, 1, 2
	pattern := []Alloc{{Type: event, Size: 2048}, {Type: span, Size: 512}}
	for range 8 {
		pattern = append(pattern, Alloc{Type: point, Size: 64})
	}
	pattern = append(pattern, Alloc{Type: span, Size: 512})
	for range 8 {
		pattern = append(pattern, Alloc{Type: point, Size: 64})
	}
	w := &Workload{
		Name:        "periodic",
		Description: "a loop repeating a 4096-byte pattern of three types (2048 B, 2x512 B, 16x64 B) 25000 times",
		Types:       types,
		Totals:      []int64{cycles * 2048, cycles * 2 * 512, cycles * 16 * 64},
		Objects:     []int64{cycles, cycles * 2, cycles * 16},
		gen: func(_ *rand.Rand, yield func(Alloc) bool) {
			for range cycles {
				for _, a := range pattern {
					if !yield(a) {
						return
					}
				}
			}
		},
	}
	return w
}

// Mixed returns a random interleaving of tiny objects (16 B nodes, 48 B
// entries, 8..64 B byte slices, about 5 MiB each) with twenty huge
// 1..8 MiB float slices (90 MiB).
func Mixed() *Workload {
	const mib = 1 << 20
	types := []Type{
		{Name: "main.node", Site: "main.newNode", MinSize: 16, MaxSize: 16},
		{Name: "main.entry", Site: "main.newEntry", MinSize: 48, MaxSize: 48},
		{Name: "[]uint8", Site: "main.newKey", MinSize: 8, MaxSize: 64},
		{Name: "[]float64", Site: "main.newMatrix", MinSize: mib, MaxSize: 8 * mib},
	}
	counts := []int64{327680, 109226, 145636, 20} // all even
	w := &Workload{
		Name:        "mixed",
		Description: "tiny objects (8..64 B, about 5 MiB per type) randomly interleaved with twenty 1..8 MiB slices",
		Types:       types,
		Objects:     counts,
	}
	for i, t := range types {
		w.Totals = append(w.Totals, counts[i]*(t.MinSize+t.MaxSize)/2)
	}
	w.gen = func(r *rand.Rand, yield func(Alloc) bool) {
		left := append([]int64(nil), counts...)
		var all int64
		for _, c := range left {
			all += c
		}
		ps := make([]*pairs, len(types))
		for i, t := range types {
			ps[i] = newPairs(t.MinSize, t.MaxSize, 8, counts[i])
		}
		// A uniformly random merge: each next object's type is drawn in
		// proportion to the objects each type has left.
		for ; all > 0; all-- {
			k := r.Int64N(all)
			ti := 0
			for k >= left[ti] {
				k -= left[ti]
				ti++
			}
			left[ti]--
			if !yield(Alloc{Type: ti, Size: ps[ti].next(r)}) {
				return
			}
		}
	}
	return w
}

// DefaultRequests is the number of requests of [Requests].
const DefaultRequests = 6144

// Requests returns [NewRequests] with [DefaultRequests] requests (about
// 108 MB).
func Requests() *Workload {
	w, err := NewRequests(DefaultRequests)
	if err != nil {
		panic(err) // unreachable: the default is valid
	}
	return w
}

// Request workload layout.
const (
	reqHeader = iota
	reqRecord
	reqField
	reqIndex
	reqStats
)

// NewRequests returns a request-handling service: each request allocates
// a 96-byte header, 40..60 records of 48 bytes (50 on average), each with a
// 16..240-byte field buffer; every 64th request also allocates a
// 64 KiB..1 MiB index buffer, and every 16th a 1 KiB stats snapshot (the
// periodic element). requests must be a positive multiple of 128 (so
// that every antithetic pair completes) and at most 1<<24.
func NewRequests(requests int) (*Workload, error) {
	if requests <= 0 || requests%128 != 0 || requests > 1<<24 {
		return nil, fmt.Errorf("workload: requests must be a positive multiple of 128 up to %d, got %d", 1<<24, requests)
	}
	n := int64(requests)
	types := []Type{
		reqHeader: {Name: "main.requestHeader", Site: "main.parseHeader", MinSize: 96, MaxSize: 96},
		reqRecord: {Name: "main.record", Site: "main.parseRecord", MinSize: 48, MaxSize: 48},
		reqField:  {Name: "[]uint8", Site: "main.readField", MinSize: 16, MaxSize: 240},
		reqIndex:  {Name: "[]uint64", Site: "main.buildIndex", MinSize: 64 << 10, MaxSize: 1 << 20},
		reqStats:  {Name: "main.stats", Site: "main.snapshotStats", MinSize: 1024, MaxSize: 1024},
	}
	objects := []int64{n, 50 * n, 50 * n, n / 64, n / 16}
	w := &Workload{
		Name:        "requests",
		Description: fmt.Sprintf("%d requests, each a 96 B header and about 50 records of 48 B with 16..240 B field buffers; a 64 KiB..1 MiB index every 64th request, a 1 KiB stats snapshot every 16th", requests),
		Types:       types,
		Objects:     objects,
	}
	for i, t := range types {
		w.Totals = append(w.Totals, objects[i]*(t.MinSize+t.MaxSize)/2)
	}
	w.gen = func(r *rand.Rand, yield func(Alloc) bool) {
		field := newPairs(types[reqField].MinSize, types[reqField].MaxSize, 8, objects[reqField])
		index := newPairs(types[reqIndex].MinSize, types[reqIndex].MaxSize, 8, objects[reqIndex])
		count := newPairs(40, 60, 1, n)
		for i := range requests {
			records := count.next(r)
			if !yield(Alloc{Type: reqHeader, Size: 96, Request: i}) {
				return
			}
			for range records {
				if !yield(Alloc{Type: reqRecord, Size: 48, Request: i}) {
					return
				}
				if !yield(Alloc{Type: reqField, Size: field.next(r), Request: i}) {
					return
				}
			}
			if i%64 == 63 {
				if !yield(Alloc{Type: reqIndex, Size: index.next(r), Request: i}) {
					return
				}
			}
			if i%16 == 15 {
				if !yield(Alloc{Type: reqStats, Size: 1024, Request: i}) {
					return
				}
			}
		}
	}
	return w, nil
}
