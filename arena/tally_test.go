package arena

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime/pprof"
	"strings"
	"testing"
)

// usage is one call of a usage function.
type usage struct{ bytes, allocs int64 }

// tallied returns a context whose arenas append their reports to *got.
func tallied(got *[]usage) context.Context {
	return ContextWithUsage(context.Background(), func(b, n int64) { *got = append(*got, usage{b, n}) })
}

type ptrObj struct {
	p *int
	x int64
}

type obj12 struct {
	a, b uint32
	c    uint32
}

// TestContextWithUsage checks the exact bytes and allocations an arena
// reports against counts worked out by hand, for every way of taking
// memory, with sampling off and with every object sampled (mean 1: every
// allocation goes through the slow path).
func TestContextWithUsage(t *testing.T) {
	cases := []struct {
		name string
		use  func(a *Arena)
		want usage
	}{
		{"nothing", func(a *Arena) {}, usage{0, 0}},
		{"New 32 B x3", func(a *Arena) { New[obj32](a); New[obj32](a); New[obj32](a) }, usage{96, 3}},
		{"New 12 B rounds to 16", func(a *Arena) { New[obj12](a) }, usage{16, 1}},
		{"New zero-size", func(a *Arena) { New[struct{}](a) }, usage{0, 1}},
		{"New with pointers", func(a *Arena) { New[ptrObj](a); New[ptrObj](a) }, usage{32, 2}},
		{"MakeSlice 5 B", func(a *Arena) { MakeSlice[byte](a, 5, 5) }, usage{8, 1}},
		{"MakeSlice cap 0", func(a *Arena) { MakeSlice[int64](a, 0, 0) }, usage{0, 1}},
		{"MakeSlice pointers", func(a *Arena) { MakeSlice[*int](a, 1, 3) }, usage{24, 1}},
		{"MakeSlice large", func(a *Arena) { MakeSlice[byte](a, 100000, 100001) }, usage{100008, 1}},
		{"MakeSlice large pointers", func(a *Arena) { MakeSlice[*int](a, 0, 10000) }, usage{80000, 1}},
		{"String", func(a *Arena) { String(a, "hello"); String(a, "") }, usage{8, 2}},
		{"Bytes", func(a *Arena) { Bytes(a, []byte("0123456789")); Bytes(a, nil); Bytes(a, []byte{}) }, usage{16, 3}},
		{"Append in place", func(a *Arena) {
			s := MakeSlice[int64](a, 0, 1) // 8 B
			s = Append(a, s, 1)            // spare capacity: no allocation
			_ = Append(a, s, 2, 3)         // grows in place to cap 3: 16 B more
		}, usage{24, 2}},
		{"Append copies", func(a *Arena) {
			s := MakeSlice[int64](a, 1, 1) // 8 B
			New[obj32](a)                  // 32 B: s no longer ends at the free byte
			_ = Append(a, s, 2)            // a new slice of cap 2: 16 B
		}, usage{56, 3}},
		{"Grow", func(a *Arena) { Grow(a, []int64(nil), 4) }, usage{32, 1}},
		{"ReadAll", func(a *Arena) {
			if _, err := ReadAll(a, strings.NewReader("abc"), 1000); err != nil {
				t.Fatal(err)
			}
		}, usage{firstRead, 1}},
	}
	for _, mean := range []int64{0, 1} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("mean=%d/%s", mean, c.name), func(t *testing.T) {
				if mean > 0 {
					record(t, mean, false)
				}
				var got []usage
				p := NewPool(WithChunkSize(4096))
				a := p.Get(tallied(&got))
				c.use(a)
				p.Put(a)
				if len(got) != 1 || got[0] != c.want {
					t.Errorf("reports %v, want [%v]", got, c.want)
				}
			})
		}
	}
}

// TestUsageAddsUp takes random allocations across chunk refills, slabs,
// large buffers and Resets, and checks that each Reset reports exactly what
// was taken since the one before, and that Put after Free reports nothing
// more. Seeded: deterministic.
func TestUsageAddsUp(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 1))
	var got []usage
	p := NewPool(WithChunkSize(1024))
	a := p.Get(tallied(&got))
	var want []usage
	var cur usage
	for range 20000 {
		switch k := rng.IntN(100); {
		case k < 40:
			New[obj32](a)
			cur.bytes += 32
		case k < 55:
			New[ptrObj](a)
			cur.bytes += 16
		case k < 75:
			n := rng.IntN(300)
			MakeSlice[byte](a, n, n)
			cur.bytes += int64((n + 7) &^ 7)
		case k < 85:
			n := 1 + rng.IntN(40)
			MakeSlice[*int](a, n, n)
			cur.bytes += int64(8 * n)
		case k < 87:
			n := 1000 + rng.IntN(5000) // larger than a chunk
			MakeSlice[byte](a, 0, n)
			cur.bytes += int64((n + 7) &^ 7)
		case k < 97:
			s := strings.Repeat("x", 1+rng.IntN(50))
			String(a, s)
			cur.bytes += int64((len(s) + 7) &^ 7)
		default:
			a.Reset()
			want = append(want, cur)
			cur = usage{}
			continue
		}
		cur.allocs++
	}
	p.Put(a)
	want = append(want, cur)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%d reports, want %d; first difference:\n%s", len(got), len(want), firstDiff(got, want))
	}
}

func firstDiff(got, want []usage) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("report %d: %v, want %v", i, got[i], want[i])
		}
	}
	return "lengths differ"
}

// TestUsageFree checks that Free reports, and that an arena taken without
// a usage function, or made with NewArena, reports nothing.
func TestUsageFree(t *testing.T) {
	var got []usage
	p := NewPool()
	a := p.Get(tallied(&got))
	New[obj32](a)
	a.Free()
	p.Put(a) // ignored: freed
	if len(got) != 1 || got[0] != (usage{32, 1}) {
		t.Errorf("reports %v, want [{32 1}]", got)
	}
	b := p.Get(context.Background())
	New[obj32](b)
	p.Put(b)
	c := NewArena()
	New[obj32](c)
	c.Reset()
	c.Free()
	if len(got) != 1 {
		t.Errorf("reports %v after arenas without a usage function", got)
	}
}

// TestGetNewLabelSetNoAlloc takes each arena under a label set never seen
// before (a span's ID): Get and Put allocate nothing, and the labels are on
// the arena's events all the same.
func TestGetNewLabelSetNoAlloc(t *testing.T) {
	const n = 200
	ctxs := make([]context.Context, n+1)
	for i := range ctxs {
		ctxs[i] = pprof.WithLabels(context.Background(), pprof.Labels("span_id", fmt.Sprintf("%016x", 1<<40+i), "span_name", "GET /x"))
	}
	p := NewPool()
	p.Put(p.Get(nil)) // warm
	i := 0
	if !raceEnabled {
		allocs := testing.AllocsPerRun(n, func() {
			a := p.Get(ctxs[i])
			New[obj32](a)
			p.Put(a)
			i++
		})
		if allocs != 0 {
			t.Errorf("%v allocations per Get and Put under a new label set, want 0", allocs)
		}
	}
	rec := record(t, 1, false)
	p = NewPool() // its arenas sample from their first allocation
	a := p.Get(ctxs[n])
	New[obj32](a)
	p.Put(a)
	ev := rec.take()
	if len(ev) != 1 {
		t.Fatalf("%d events, want 1", len(ev))
	}
	if v, _ := ev[0].Labels.Get("span_id"); v != fmt.Sprintf("%016x", 1<<40+n) {
		t.Errorf("event labels %v", ev[0].Labels)
	}
}

// TestUsageAfterUntallied: an arena's counts run on while no usage
// function listens (Reset and Put leave them); a Get under a usage
// context restarts them, so a request reports its own allocations only,
// after any number of uses without one, large buffers and typed slabs
// included.
func TestUsageAfterUntallied(t *testing.T) {
	var p Pool
	for range 3 {
		a := p.Get(context.Background())
		New[int64](a)
		New[ptrObj](a)
		MakeSlice[byte](a, 0, 1<<20) // a large buffer
		a.Reset()
		String(a, "abc")
		p.Put(a)
	}
	var got []usage
	a := p.Get(tallied(&got))
	New[int64](a)
	New[int64](a)
	New[ptrObj](a)
	p.Put(a)
	want := []usage{{8 + 8 + 16, 3}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("reports %v, want %v", got, want)
	}
}
