package bench

import (
	"strconv"
	"testing"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
	"github.com/ortuman/nuke"
)

const resetEvery = 1024

type obj8 struct{ a int64 }
type obj32 struct{ a, b, c, d int64 }
type obj256 struct{ a [32]int64 }
type objStr struct {
	s string
	n [3]int64
}

var (
	sink8   *obj8
	sink32  *obj32
	sink256 *obj256
	sinkStr *objStr
	sinkB   []byte
)

// allocs runs the same loop body over every implementation of this file;
// goarena_test.go adds the experimental arena.
type allocs struct {
	name      string // the experimental arena's loop body, see goarena_test.go
	arenaprof func(a *arena.Arena)
	nuke      func(a nuke.Arena)
	heap      func()
}

func run(b *testing.B, fns allocs) {
	b.Run("impl=arenaprof", func(b *testing.B) {
		a := arena.NewArena()
		b.ReportAllocs()
		for i := range b.N {
			if i%resetEvery == 0 {
				a.Reset()
			}
			fns.arenaprof(a)
		}
	})
	b.Run("impl=arenaprof-sampled", func(b *testing.B) {
		if err := hooks.SetMeanBytes(samplingstate.DefaultMeanBytes); err != nil {
			b.Fatal(err)
		}
		var n eventCount
		defer hooks.Register(&n)()
		a := arena.NewArena()
		b.ReportAllocs()
		for i := range b.N {
			if i%resetEvery == 0 {
				a.Reset()
			}
			fns.arenaprof(a)
		}
	})
	b.Run("impl=nuke", func(b *testing.B) {
		// Room for resetEvery objects of up to 4 KiB in 64 KiB buffers.
		a := nuke.NewMonotonicArena(64<<10, 64)
		b.ReportAllocs()
		for i := range b.N {
			if i%resetEvery == 0 {
				a.Reset(false)
			}
			fns.nuke(a)
		}
	})
	b.Run("impl=heap", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			fns.heap()
		}
	})
	if f := goArena(fns.name); f != nil {
		b.Run("impl=goarena", f)
	}
}

func BenchmarkNew(b *testing.B) {
	b.Run("size=8", func(b *testing.B) {
		run(b, allocs{
			name:      "new8",
			arenaprof: func(a *arena.Arena) { sink8 = arena.New[obj8](a) },
			nuke:      func(a nuke.Arena) { sink8 = nuke.New[obj8](a) },
			heap:      func() { sink8 = new(obj8) },
		})
	})
	b.Run("size=32", func(b *testing.B) {
		run(b, allocs{
			name:      "new32",
			arenaprof: func(a *arena.Arena) { sink32 = arena.New[obj32](a) },
			nuke:      func(a nuke.Arena) { sink32 = nuke.New[obj32](a) },
			heap:      func() { sink32 = new(obj32) },
		})
	})
	b.Run("size=256", func(b *testing.B) {
		run(b, allocs{
			name:      "new256",
			arenaprof: func(a *arena.Arena) { sink256 = arena.New[obj256](a) },
			nuke:      func(a nuke.Arena) { sink256 = nuke.New[obj256](a) },
			heap:      func() { sink256 = new(obj256) },
		})
	})
	b.Run("size=str32", func(b *testing.B) {
		run(b, allocs{
			name:      "newStr",
			arenaprof: func(a *arena.Arena) { sinkStr = arena.New[objStr](a) },
			nuke:      func(a nuke.Arena) { sinkStr = nuke.New[objStr](a) },
			heap:      func() { sinkStr = new(objStr) },
		})
	})
}

func BenchmarkMakeSlice(b *testing.B) {
	for _, n := range []int{64, 4096} {
		b.Run("size="+strconv.Itoa(n), func(b *testing.B) {
			run(b, allocs{
				name:      "slice" + strconv.Itoa(n),
				arenaprof: func(a *arena.Arena) { sinkB = arena.MakeSlice[byte](a, n, n) },
				nuke:      func(a nuke.Arena) { sinkB = nuke.MakeSlice[byte](a, n, n) },
				heap:      func() { sinkB = make([]byte, n) },
			})
		})
	}
}

// TestSameValues checks that every implementation hands out zeroed,
// usable memory, so the benchmarks compare like with like.
func TestSameValues(t *testing.T) {
	a := arena.NewArena()
	n := nuke.NewMonotonicArena(4096, 4)
	for i := range 100 {
		p, q := arena.New[obj32](a), nuke.New[obj32](n)
		if *p != (obj32{}) || *q != (obj32{}) {
			t.Fatal("not zeroed")
		}
		p.a, q.a = int64(i), int64(i)
		s, u := arena.MakeSlice[byte](a, 64, 64), nuke.MakeSlice[byte](n, 64, 64)
		if len(s) != 64 || len(u) != 64 {
			t.Fatal("bad slices")
		}
	}
	a.Free()
	n.Reset(true)
}

// eventCount is a hooks.Consumer that counts the sampled objects.
type eventCount int

func (n *eventCount) Sampled(*hooks.Event) { *n++ }
func (n *eventCount) Released(uint64)      {}
