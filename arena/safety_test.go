package arena

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/testkit/hookstest"
)

// node holds every kind of pointer the garbage collector must see.
type node struct {
	id    int
	p     *int
	s     string
	b     []byte
	m     map[int]int
	i     any
	f     func() int
	next  *node
	plain [3]int64
}

func (n *node) check(id int) error {
	switch {
	case n.id != id:
		return fmt.Errorf("id %d, want %d", n.id, id)
	case *n.p != id:
		return fmt.Errorf("node %d: *p = %d", id, *n.p)
	case n.s != strconv.Itoa(id)+"-string":
		return fmt.Errorf("node %d: s = %q", id, n.s)
	case len(n.b) != 64 || n.b[63] != byte(id):
		return fmt.Errorf("node %d: b corrupt", id)
	case n.m[id] != -id:
		return fmt.Errorf("node %d: m corrupt", id)
	case n.i.(*[4]int)[3] != id:
		return fmt.Errorf("node %d: i corrupt", id)
	case n.f() != id:
		return fmt.Errorf("node %d: f corrupt", id)
	case n.plain[2] != int64(id):
		return fmt.Errorf("node %d: plain corrupt", id)
	}
	return nil
}

// gcStressEnv marks the child process of TestGCStress.
const gcStressEnv = "ARENAPROF_GC_STRESS_CHILD"

// TestGCStress stores pointers to heap objects (pointers, strings, slices,
// maps, interfaces, closures, arena-to-arena links) in arena values,
// forces many collections, and checks every value. The test re-executes
// itself with GODEBUG=gccheckmark=1, which makes the runtime verify after
// every collection that the concurrent mark found every reachable object.
func TestGCStress(t *testing.T) {
	if os.Getenv(gcStressEnv) == "" {
		if testing.Short() && raceEnabled {
			t.Skip("re-executed stress test skipped under -race -short")
		}
		args := []string{"-test.run=^TestGCStress$", "-test.count=1"}
		if testing.Short() {
			args = append(args, "-test.short")
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), gcStressEnv+"=1", "GODEBUG=gccheckmark=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "PASS") {
			t.Fatalf("child with GODEBUG=gccheckmark=1: %v\n%s", err, out)
		}
		return
	}
	rounds, perRound := 30, 3000
	if testing.Short() {
		rounds, perRound = 10, 1000
	}
	_ = record(t, 4096, false) // sampling on: exercise the slow path too
	a := NewArena(WithChunkSize(4096))
	defer a.Free()
	for round := range rounds {
		nodes := make([]*node, 0, perRound)
		var prev *node
		for i := range perRound {
			id := round*perRound + i
			n := New[node](a)
			n.id = id
			v := id
			n.p = &v
			n.s = strconv.Itoa(id) + "-string"
			n.b = make([]byte, 64)
			n.b[63] = byte(id)
			n.m = map[int]int{id: -id}
			n.i = &[4]int{3: id}
			n.f = func() int { return v }
			n.next = prev
			n.plain[2] = int64(id)
			prev = n
			if i%2 == 0 {
				nodes = append(nodes, n)
			}
			if i%500 == 0 {
				runtime.GC()
			}
			// Arena slices of pointers, and pointer-free neighbours.
			ps := MakeSlice[*node](a, 1, 2)
			ps[0] = n
			_ = MakeSlice[byte](a, i%100, 100)
		}
		runtime.GC()
		for i, n := range nodes {
			if err := n.check(round*perRound + 2*i); err != nil {
				t.Fatal(err)
			}
		}
		for n, i := prev, perRound-1; n != nil; n, i = n.next, i-1 {
			if err := n.check(round*perRound + i); err != nil {
				t.Fatalf("chain: %v", err)
			}
		}
		runtime.KeepAlive(nodes)
		a.Reset()
		runtime.GC()
	}
}

func TestAlignment(t *testing.T) {
	type atomics struct {
		b byte
		x atomic.Int64
		y atomic.Uint64
	}
	type mixed struct {
		b byte
		c complex128
		p *int
	}
	a := NewArena(WithChunkSize(minChunkSize))
	defer a.Free()
	check := func(name string, p unsafe.Pointer, align uintptr, size uintptr) {
		t.Helper()
		if size > 0 && uintptr(p)%align != 0 {
			t.Errorf("%s at %#x not aligned to %d", name, p, align)
		}
		if size > 0 && uintptr(p)%8 != 0 {
			t.Errorf("%s at %#x not 8-aligned", name, p)
		}
	}
	for i := range 200 {
		// Interleave sizes so offsets are never accidentally aligned.
		_ = MakeSlice[byte](a, i%13+1, i%13+1)
		cases := []struct {
			name        string
			p           unsafe.Pointer
			align, size uintptr
		}{
			{"struct{}", unsafe.Pointer(New[struct{}](a)), 1, 0},
			{"[0]int", unsafe.Pointer(New[[0]int](a)), 8, 0},
			{"uint8", unsafe.Pointer(New[uint8](a)), 1, 1},
			{"uint16", unsafe.Pointer(New[uint16](a)), 2, 2},
			{"complex128", unsafe.Pointer(New[complex128](a)), unsafe.Alignof(complex128(0)), 16},
			{"atomics", unsafe.Pointer(New[atomics](a)), 8, unsafe.Sizeof(atomics{})},
			{"mixed", unsafe.Pointer(New[mixed](a)), unsafe.Alignof(mixed{}), unsafe.Sizeof(mixed{})},
			{"[3]uint16", unsafe.Pointer(New[[3]uint16](a)), 2, 6},
			{"[5]string", unsafe.Pointer(New[[5]string](a)), unsafe.Alignof(""), unsafe.Sizeof([5]string{})},
			{"[16]byte", unsafe.Pointer(New[[16]byte](a)), 1, 16},
			{"[]complex128", unsafe.Pointer(unsafe.SliceData(MakeSlice[complex128](a, 3, 3))), 8, 48},
			{"[]atomics", unsafe.Pointer(unsafe.SliceData(MakeSlice[atomics](a, 2, 5))), 8, 5 * unsafe.Sizeof(atomics{})},
			{"[][0]int", unsafe.Pointer(unsafe.SliceData(MakeSlice[[0]int](a, 7, 7))), 8, 0},
		}
		for _, c := range cases {
			check(c.name, c.p, c.align, c.size)
		}
		// Atomic operations on arena memory work (they fault on misaligned
		// 64-bit words on some platforms).
		x := New[atomics](a)
		x.x.Add(1)
		x.y.Add(2)
	}
	if p, q := New[struct{}](a), New[struct{}](a); p == nil || q == nil {
		t.Error("New of a zero-size type returned nil")
	}
	if s := MakeSlice[int](a, 0, 0); s == nil || len(s) != 0 || cap(s) != 0 {
		t.Errorf("MakeSlice(0, 0) = %v (nil %v)", s, s == nil)
	}
}

func TestResetZeroes(t *testing.T) {
	for _, poison := range []bool{false, true} {
		t.Run("poison="+strconv.FormatBool(poison), func(t *testing.T) {
			a := NewArena(WithChunkSize(1024), WithPoison(poison))
			defer a.Free()
			for round := range 5 {
				for i := range 500 {
					p := New[obj32](a)
					n := New[node](a)
					s := MakeSlice[int64](a, 7, 9)
					b := MakeSlice[byte](a, i%50, i%50+3)
					if *p != (obj32{}) || !reflect.ValueOf(*n).IsZero() {
						t.Fatalf("round %d: object %d not zeroed", round, i)
					}
					for _, v := range s[:cap(s)] {
						if v != 0 {
							t.Fatalf("round %d: slice %d not zeroed", round, i)
						}
					}
					for _, v := range b[:cap(b)] {
						if v != 0 {
							t.Fatalf("round %d: byte slice %d not zeroed", round, i)
						}
					}
					*p = obj32{1, 2, 3, 4}
					x := i
					*n = node{id: i, p: &x, s: "x"}
					for j := range s[:cap(s)] {
						s[:cap(s)][j] = -1
					}
					for j := range b[:cap(b)] {
						b[:cap(b)][j] = 0xff
					}
				}
				a.Reset()
			}
		})
	}
}

// mustPanic checks that fn panics with a message starting with
// "arenaprof:" and containing want.
func mustPanic(t *testing.T, name, want string, fn func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		msg, _ := r.(string)
		if r == nil || !strings.HasPrefix(msg, "arenaprof:") || !strings.Contains(msg, want) {
			t.Errorf("%s: panic %v, want arenaprof: ... %s", name, r, want)
		}
	}()
	fn()
}

func TestBadInputPanics(t *testing.T) {
	a := NewArena()
	n := -1
	big := int(maxAlloc/8 + 1)
	cases := []struct {
		name, want string
		fn         func()
	}{
		{"negative len", "len out of range", func() { MakeSlice[int](a, n, 3) }},
		{"negative cap", "cap out of range", func() { MakeSlice[int](a, 0, n) }},
		{"negative both", "len out of range", func() { MakeSlice[int](a, n, n) }},
		{"len > cap", "len larger than cap", func() { MakeSlice[int](a, 4, 3) }},
		{"size overflow", "cap out of range", func() { MakeSlice[int64](a, 1, big) }},
		{"max int cap", "cap out of range", func() { MakeSlice[byte](a, 0, int(^uint(0)>>1)) }},
		{"chunk size", "chunk size", func() { WithChunkSize(10) }},
	}
	for _, c := range cases {
		mustPanic(t, c.name, c.want, c.fn)
	}
	New[obj32](a)
	a.Free()
	a.Free() // harmless
	for _, c := range []struct {
		name string
		fn   func()
	}{
		{"New", func() { New[obj32](a) }},
		{"New pointers", func() { New[node](a) }},
		{"New zero-size", func() { New[struct{}](a) }},
		{"tryNew", func() {
			if tryNew[obj32](a) != nil {
				panic("arenaprof: tryNew succeeded after Free")
			}
			New[obj32](a)
		}},
		{"MakeSlice", func() { MakeSlice[byte](a, 1, 1) }},
		{"MakeSlice empty", func() { MakeSlice[byte](a, 0, 0) }},
		{"String", func() { String(a, "x") }},
		{"Bytes", func() { Bytes(a, []byte("x")) }},
		{"String empty", func() { String(a, "") }},
		{"Bytes nil", func() { Bytes(a, nil) }},
		{"Bytes empty", func() { Bytes(a, []byte{}) }},
		{"Reset", func() { a.Reset() }},
	} {
		mustPanic(t, "after Free: "+c.name, "after Free", c.fn)
	}
}

func TestStringsAndBytes(t *testing.T) {
	a := NewArena()
	defer a.Free()
	if s := String(a, "hello, arena"); s != "hello, arena" {
		t.Errorf("String = %q", s)
	}
	if s := String(a, ""); s != "" {
		t.Errorf("String(\"\") = %q", s)
	}
	src := []byte("bytes")
	b := Bytes(a, src)
	src[0] = 'X'
	if string(b) != "bytes" || cap(b) != 5 {
		t.Errorf("Bytes = %q cap %d", b, cap(b))
	}
	if Bytes(a, nil) != nil {
		t.Error("Bytes(nil) != nil")
	}
	if e := Bytes(a, []byte{}); e == nil || len(e) != 0 {
		t.Error("Bytes(empty) is nil or not empty")
	}
}

// TestSamplingFollowsHooks checks that an arena picks up a consumer
// registering and unregistering, and a change of the mean, at its next
// slow path.
func TestSamplingFollowsHooks(t *testing.T) {
	old := hooks.MeanBytes()
	defer hooks.SetMeanBytes(old)
	a := NewArena(WithChunkSize(1024))
	defer a.Free()
	alloc := func(n int) {
		for range n {
			New[obj32](a)
		}
	}
	var events atomic.Int64
	alloc(1000) // sampling off
	if err := hooks.SetMeanBytes(1); err != nil {
		t.Fatal(err)
	}
	unregister := hooks.Register(hookstest.Func(func(e *hooks.Event) { events.Add(1) }))
	// Within one chunk (32 objects of 32 bytes) the arena picks it up;
	// from then on every object is sampled.
	alloc(32)
	events.Store(0)
	alloc(1000)
	if got := events.Load(); got != 1000 {
		t.Errorf("mean 1: %d events for 1000 objects", got)
	}
	// Mean change: 1 -> 64 bytes. After one slow path, about one object
	// in two (1 - (63/64)^32 = 0.40) is sampled.
	if err := hooks.SetMeanBytes(64); err != nil {
		t.Fatal(err)
	}
	alloc(1)
	events.Store(0)
	alloc(10000)
	// Binomial(10000, 0.3978): 6 sigma = 294.
	if got := events.Load(); got < 3978-294 || got > 3978+294 {
		t.Errorf("mean 64: %d events for 10000 objects, want 3978 ± 294", got)
	}
	unregister()
	alloc(32)
	events.Store(0)
	alloc(1000)
	if got := events.Load(); got != 0 {
		t.Errorf("after unregister: %d events", got)
	}
}

// TestReleaseOnlyAfterEvents checks that Reset and Free tell consumers
// about the arena only when it emitted an event since the last release.
func TestReleaseOnlyAfterEvents(t *testing.T) {
	old := hooks.MeanBytes()
	defer hooks.SetMeanBytes(old)
	if err := hooks.SetMeanBytes(1); err != nil {
		t.Fatal(err)
	}
	c := &releases{}
	defer hooks.Register(c)()
	a := NewArena()
	a.Reset()
	New[obj8](a)
	a.Reset()
	a.Reset()
	New[obj8](a)
	a.Free()
	want := []uint64{a.id, a.id}
	if !reflect.DeepEqual(c.ids, want) {
		t.Errorf("released %v, want %v", c.ids, want)
	}
}

type releases struct {
	mu  sync.Mutex
	ids []uint64
}

func (r *releases) Sampled(*hooks.Event) {}
func (r *releases) Released(id uint64) {
	r.mu.Lock()
	r.ids = append(r.ids, id)
	r.mu.Unlock()
}

// TestConcurrentArenas runs many goroutines, each with its own arena from
// a shared pool, emitting events at once (run it with -race).
func TestConcurrentArenas(t *testing.T) {
	rec := record(t, 512, false)
	pool := NewPool(WithChunkSize(2048))
	const workers = 8
	iters := 20000
	if testing.Short() {
		iters = 3000
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range iters {
				a := pool.Get(nil)
				n := New[node](a)
				n.s = String(a, "w"+strconv.Itoa(w))
				_ = MakeSlice[byte](a, i%64, 64)
				pool.Put(a)
			}
		}()
	}
	wg.Wait()
	ev := rec.take()
	if len(ev) == 0 {
		t.Fatal("no events")
	}
	for _, e := range ev {
		if e.Size <= 0 || e.Offset < 0 || e.Offset >= e.Size || e.MeanBytes != 512 {
			t.Fatalf("bad event %+v", e.Event)
		}
	}
}

func TestPoolLabels(t *testing.T) {
	p := NewPool(WithLabels(hooks.NewLabels("service", "api")))
	a := p.Get(nil)
	if v, _ := a.labels.Get("service"); v != "api" || a.labels.String() != `{service="api"}` {
		t.Errorf("labels %v", a.labels)
	}
	p.Put(a)
	p.Put(nil)
	f := NewArena()
	f.Free()
	p.Put(f) // ignored
}

// TestPoolContextLabels takes arenas under alternating context labels,
// with and without pool labels: each Get has the labels of its context on
// top of the pool's, and once a set has been seen, Get and Put allocate
// nothing.
func TestPoolContextLabels(t *testing.T) {
	bg := context.Background()
	users := pprof.WithLabels(bg, pprof.Labels("route", "/users", "service", "front"))
	orders := pprof.WithLabels(bg, pprof.Labels("route", "/orders"))
	cases := []struct {
		name string
		pool *Pool
		ctx  context.Context
		want string
	}{
		{"no pool labels, users", NewPool(), users, `{route="/users", service="front"}`},
		{"no pool labels, orders", NewPool(), orders, `{route="/orders"}`},
		{"pool labels, users", NewPool(WithLabels(hooks.NewLabels("service", "api"))), users, `{route="/users", service="front"}`},
		{"pool labels, orders", NewPool(WithLabels(hooks.NewLabels("service", "api"))), orders, `{route="/orders", service="api"}`},
		{"pool labels, none", NewPool(WithLabels(hooks.NewLabels("service", "api"))), bg, `{service="api"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, ctx := range []context.Context{c.ctx, users, c.ctx, orders, c.ctx} {
				a := c.pool.Get(ctx)
				got := labelsOf(a).String()
				c.pool.Put(a)
				if ctx == c.ctx && got != c.want {
					t.Fatalf("labels %s, want %s", got, c.want)
				}
			}
			if raceEnabled {
				return // the race detector's sync.Pool drops arenas at random
			}
			n := testing.AllocsPerRun(100, func() { c.pool.Put(c.pool.Get(c.ctx)) })
			if n != 0 {
				t.Errorf("%v allocations per labelled Get and Put, want 0", n)
			}
		})
	}
}

// TestPoolDoublePut: putting an arena back twice without a Get in between
// panics instead of letting two Gets share it; Get, Put, Get, Put is fine.
func TestPoolDoublePut(t *testing.T) {
	p := NewPool()
	a := p.Get(nil)
	p.Put(a)
	mustPanic(t, "double Put", "already in a pool", func() { p.Put(a) })
	q := NewPool()
	mustPanic(t, "Put into another pool", "already in a pool", func() { q.Put(a) })
	b := p.Get(nil)
	p.Put(b)
	b = p.Get(nil)
	p.Put(b)
}
