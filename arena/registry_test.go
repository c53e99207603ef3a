package arena

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/holdings"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
)

// holdingsOf returns the live holdings whose label "test" is name.
func holdingsOf(name string) []holdings.Holding {
	var out []holdings.Holding
	for _, h := range readHoldings() {
		if l, ok := h.Labels.(*hooks.Labels); ok && labelIs(*l, "test", name) {
			out = append(out, h)
		}
	}
	return out
}

// labelIs reports whether l's label key is value.
func labelIs(l hooks.Labels, key, value string) bool {
	v, ok := l.Get(key)
	return ok && v == value
}

// idleOf returns the idle holding of pool p, if it has one.
func idleOf(p *Pool) (holdings.Holding, bool) {
	r := p.rec.Load()
	for _, h := range readHoldings() {
		if r != nil && h.Pool == r.id {
			return h, true
		}
	}
	return holdings.Holding{}, false
}

// leafFunction returns the first function of stack that is not NewArena
// or Pool.Get.
func leafFunction(stack []uintptr) string {
	frames := runtime.CallersFrames(stack)
	for {
		f, more := frames.Next()
		switch strings.TrimPrefix(f.Function, "github.com/arenaprof/arenaprof/arena.") {
		case "NewArena", "(*Pool).Get":
		default:
			return f.Function
		}
		if !more {
			return ""
		}
	}
}

//go:noinline
func makeHeld(name string) *Arena {
	return NewArena(WithChunkSize(4096), WithLabels(hooks.NewLabels("test", name)))
}

func TestHoldingsExact(t *testing.T) {
	for _, c := range []struct {
		name           string
		alloc          func(a *Arena)
		reserved, used int64
	}{
		// A byte chunk holds 8 bytes of slack past its end.
		{"bytes", func(a *Arena) { MakeSlice[byte](a, 1000, 1000) }, 4096 + 8, 1000},
		{"two chunks", func(a *Arena) {
			MakeSlice[byte](a, 3000, 3000)
			MakeSlice[byte](a, 3000, 3000)
		}, 2 * (4096 + 8), 6000},
		// A typed slab starts at 1 KiB: 25 values of 40 bytes.
		{"pointers", func(a *Arena) { New[objStr](a) }, 1000, 40},
		// Larger than a chunk: a large buffer of its size class.
		{"large", func(a *Arena) { MakeSlice[byte](a, 10000, 10000) }, int64(largeClass(10000)), 10000},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := makeHeld(c.name)
			c.alloc(a)
			hs := holdingsOf(c.name)
			if len(hs) != 1 {
				t.Fatalf("%d holdings, want 1", len(hs))
			}
			h := hs[0]
			if h.Arenas != 1 || h.Reserved != c.reserved || h.Used != c.used {
				t.Errorf("arenas, reserved, used = %d, %d, %d, want 1, %d, %d", h.Arenas, h.Reserved, h.Used, c.reserved, c.used)
			}
			if fn := leafFunction(h.Stack); !strings.HasSuffix(fn, ".makeHeld") {
				t.Errorf("creating function %q, want makeHeld", fn)
			}
			if h.Age < 0 || h.Age > time.Minute {
				t.Errorf("age %v", h.Age)
			}
			a.Reset()
			h = holdingsOf(c.name)[0]
			if h.Used != 0 || h.Reserved > c.reserved {
				t.Errorf("after Reset: reserved %d, used %d; want at most %d, 0", h.Reserved, h.Used, c.reserved)
			}
			a.Free()
			if hs := holdingsOf(c.name); len(hs) != 0 {
				t.Errorf("freed arena listed: %+v", hs)
			}
		})
	}
}

func TestHoldingsLargeNotKept(t *testing.T) {
	a := NewArena(WithChunkSize(4096), WithLargeRetain(0), WithLabels(hooks.NewLabels("test", "loose")))
	defer a.Free()
	MakeSlice[byte](a, 10000, 10000)
	if h := holdingsOf("loose")[0]; h.Reserved != 10000 || h.Used != 10000 {
		t.Errorf("reserved, used = %d, %d, want 10000, 10000", h.Reserved, h.Used)
	}
	a.Reset()
	if h := holdingsOf("loose")[0]; h.Reserved != 0 || h.Used != 0 {
		t.Errorf("after Reset: reserved, used = %d, %d, want 0, 0", h.Reserved, h.Used)
	}
}

//go:noinline
func takeFrom(p *Pool, ctx context.Context) *Arena { return p.Get(ctx) }

func TestHoldingsPool(t *testing.T) {
	p := NewPool(WithChunkSize(4096))
	ctx := pprof.WithLabels(context.Background(), pprof.Labels("test", "pooled"))
	var as []*Arena
	for range 3 {
		a := takeFrom(p, ctx)
		MakeSlice[byte](a, 100, 100)
		as = append(as, a)
	}
	hs := holdingsOf("pooled")
	if len(hs) != 3 {
		t.Fatalf("%d holdings, want 3", len(hs))
	}
	for _, h := range hs {
		if fn := leafFunction(h.Stack); !strings.HasSuffix(fn, ".takeFrom") {
			t.Errorf("taking function %q, want takeFrom", fn)
		}
		if h.Reserved != 4096+8 || h.Used != 104 {
			t.Errorf("reserved, used = %d, %d, want %d, 104", h.Reserved, h.Used, 4096+8)
		}
	}
	if _, ok := idleOf(p); ok {
		t.Error("idle arenas reported before any Put")
	}
	// sync.Pool drops idle arenas at a garbage collection: keep them.
	runtime.GC()
	for _, a := range as[:2] {
		p.Put(a)
	}
	if hs := holdingsOf("pooled"); len(hs) != 1 {
		t.Errorf("%d live holdings after two Puts, want 1", len(hs))
	}
	idle, ok := idleOf(p)
	if !ok || idle.Arenas != 2 || idle.Reserved != 2*(4096+8) || idle.Used != 0 || idle.Age != 0 {
		t.Errorf("idle = %+v, %v; want 2 arenas of %d bytes", idle, ok, 4096+8)
	}
	p.Put(as[2])
}

// TestHoldingsEmpty: an arena that has taken no memory holds nothing and
// is not listed; it is from its first chunk on.
func TestHoldingsEmpty(t *testing.T) {
	a := makeHeld("empty")
	defer a.Free()
	if hs := holdingsOf("empty"); len(hs) != 0 {
		t.Fatalf("an arena with no memory is listed: %+v", hs)
	}
	New[obj8](a)
	if hs := holdingsOf("empty"); len(hs) != 1 || hs[0].Reserved == 0 {
		t.Fatalf("after its first New: %+v, want one arena holding a chunk", hs)
	}
}

func TestHoldingsAge(t *testing.T) {
	a := makeHeld("age")
	defer a.Free()
	New[obj8](a)
	a.hold.mark = (now()-int64(2*time.Hour))<<2 | holdLive
	h := holdingsOf("age")[0]
	if h.Age < 2*time.Hour || h.Age > 2*time.Hour+time.Minute {
		t.Errorf("age %v, want 2h", h.Age)
	}
}

// TestHoldingsDropped checks that an arena dropped without Free leaves the
// registry once the garbage collector has collected it.
func TestHoldingsDropped(t *testing.T) {
	func() {
		a := makeHeld("dropped")
		MakeSlice[byte](a, 100, 100)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(holdingsOf("dropped")) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("dropped arena still listed after 10 s of collections")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// TestHoldingsConcurrent reads the registry while goroutines make, take,
// allocate from, reset, put back and free arenas: run with -race.
func TestHoldingsConcurrent(t *testing.T) {
	p := NewPool(WithChunkSize(1024))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var a *Arena
				if g%2 == 0 {
					a = p.Get(nil)
				} else {
					a = NewArena(WithChunkSize(1024))
				}
				for range 10 {
					New[objStr](a)
					MakeSlice[byte](a, 700, 700)
				}
				a.labels = hooks.NewLabels("i", "x")
				a.publishLabels()
				a.Reset()
				if g%2 == 0 {
					p.Put(a)
				} else {
					a.Free()
				}
			}
		})
	}
	for range 200 {
		for _, h := range readHoldings() {
			if h.Used > h.Reserved || h.Used < 0 || h.Arenas < 1 {
				t.Errorf("inconsistent holding %+v", h)
			}
		}
	}
	close(stop)
	wg.Wait()
}

// TestHoldingsRetakenSite checks that an arena taken again from its pool
// while profiling is on is attributed to its new taker.
func TestHoldingsRetakenSite(t *testing.T) {
	record(t, samplingstate.DefaultMeanBytes, false)
	p := NewPool(WithLabels(hooks.NewLabels("test", "retaken")))
	// The race detector makes sync.Pool drop a quarter of its Puts at
	// random, so Get may hand out a fresh arena: take until the one put
	// back comes again (each try has a chance of 3/4 under -race, 1
	// otherwise; 40 tries all failing: 4^-40).
	var a *Arena
	for try := 0; ; try++ {
		first := p.Get(nil)
		New[obj8](first) // listed from its first chunk
		p.Put(first)
		if a = takeFrom(p, nil); a == first {
			break
		}
		if try == 40 {
			t.Fatal("the pool never handed its arena out again")
		}
	}
	defer p.Put(a)
	if rec := a.hold.arena.Value(); rec == nil || a.id != rec.id {
		t.Fatal("wrong record")
	}
	hs := holdingsOf("retaken")
	if len(hs) != 1 {
		t.Fatalf("%d holdings, want 1", len(hs))
	}
	if fn := leafFunction(hs[0].Stack); !strings.HasSuffix(fn, ".takeFrom") {
		t.Errorf("taking function %q, want takeFrom", fn)
	}
}

// TestHoldingsChecked checks the figures of a checked arena, whose Reset
// drops its memory instead of keeping it.
func TestHoldingsChecked(t *testing.T) {
	a := NewArena(WithChunkSize(4096), WithChecked(true), WithLabels(hooks.NewLabels("test", "checked")))
	defer a.Free()
	MakeSlice[byte](a, 1000, 1000)
	MakeSlice[byte](a, 10000, 10000)
	h := holdingsOf("checked")[0]
	if h.Reserved < 1000+10000 || h.Used != 11000 {
		t.Errorf("reserved, used = %d, %d; want at least 11000, 11000", h.Reserved, h.Used)
	}
	a.Reset()
	if h := holdingsOf("checked")[0]; h.Reserved != 0 || h.Used != 0 {
		t.Errorf("after Reset: reserved, used = %d, %d, want 0, 0", h.Reserved, h.Used)
	}
}

// gcLearnt runs GCs until the registry learns that one ended (a sweep
// armed while a GC was marking runs after the next GC only), and returns
// its count.
func gcLearnt(t *testing.T) uint64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		runtime.GC()
		var st runtime.MemStats
		runtime.ReadMemStats(&st)
		n := uint64(st.NumGC)
		for wait := time.Now().Add(time.Second); time.Now().Before(wait); time.Sleep(time.Millisecond) {
			if gcEpoch.Load() >= n {
				return n
			}
		}
	}
	t.Fatalf("gcEpoch %d: no GC learnt within 10 s", gcEpoch.Load())
	return 0
}

// TestHoldingsFresh checks that a holding's Fresh is its heap bytes made
// since the last GC the registry knows of: all of them before a GC, none
// after, the new chunk's after one more, and that bytes dropped at Reset
// come off it.
func TestHoldingsFresh(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	a := NewArena(WithChunkSize(4096), WithLargeRetain(12000), WithLabels(hooks.NewLabels("test", "fresh")))
	defer a.Free()
	MakeSlice[byte](a, 1000, 1000)
	e0 := gcEpoch.Load()
	h := holdingsOf("fresh")[0]
	// (Unless a sweep of an earlier GC has run since.)
	if h.Cycle == e0 && (h.Heap <= 0 || h.Fresh != h.Heap) {
		t.Errorf("before a GC: heap %d, fresh %d; want > 0, the heap", h.Heap, h.Fresh)
	}
	gcLearnt(t)
	h = holdingsOf("fresh")[0]
	if h.Cycle <= e0 || h.Fresh != 0 {
		t.Errorf("after a GC: cycle %d, fresh %d; want > %d, 0", h.Cycle, h.Fresh, e0)
	}
	old := h.Heap
	MakeSlice[byte](a, 3000, 3000) // a second chunk
	MakeSlice[byte](a, 10000, 10000)
	MakeSlice[byte](a, 10000, 10000) // past the retain bound: dropped at Reset
	h = holdingsOf("fresh")[0]
	if h.Fresh != h.Heap-old || h.Fresh <= 0 {
		t.Errorf("new chunks: heap %d, fresh %d; want fresh the heap less the %d before the GC", h.Heap, h.Fresh, old)
	}
	grown := h.Heap
	a.Reset()
	h = holdingsOf("fresh")[0]
	if h.Heap >= grown {
		t.Errorf("after Reset: heap %d, want below %d (a large buffer dropped)", h.Heap, grown)
	}
	if h.Fresh != h.Heap-old {
		t.Errorf("after Reset: heap %d, fresh %d; want fresh the heap less the %d before the GC", h.Heap, h.Fresh, old)
	}
}
