package arena

import (
	"context"
	"runtime/pprof"
	"strings"
	"testing"
	"unsafe"
)

func TestMeanOneSamplesEveryObject(t *testing.T) {
	rec := record(t, 1, false)
	a := NewArena(WithSeed(1, 2))
	defer a.Free()
	for i := range 3000 {
		switch i % 4 {
		case 0:
			New[obj8](a)
		case 1:
			New[objStr](a)
		case 2:
			MakeSlice[byte](a, 13, 13)
		case 3:
			String(a, "hello")
		}
	}
	ev := rec.take()
	if len(ev) != 3000 {
		t.Fatalf("got %d events, want 3000", len(ev))
	}
	want := []struct {
		name string
		size int64
	}{{"arena.obj8", 8}, {"arena.objStr", int64(unsafe.Sizeof(objStr{}))}, {"[]uint8", 16}, {"string", 8}}
	for i, e := range ev {
		w := want[i%4]
		if e.Offset != 0 || e.MeanBytes != 1 || e.TypeName != w.name || e.Size != w.size || e.Arena != a.id {
			t.Fatalf("event %d: %s size %d offset %d mean %d arena %d, want %s size %d offset 0 mean 1 arena %d",
				i, e.TypeName, e.Size, e.Offset, e.MeanBytes, e.Arena, w.name, w.size, a.id)
		}
	}
}

func TestMeanZeroSamplesNothing(t *testing.T) {
	rec := record(t, 0, false)
	a := NewArena()
	defer a.Free()
	for range 100000 {
		New[obj32](a)
		MakeSlice[int](a, 10, 20)
	}
	if ev := rec.take(); len(ev) != 0 {
		t.Fatalf("got %d events with sampling off", len(ev))
	}
}

//go:noinline
func allocNoInline(a *Arena) *obj32 { return New[obj32](a) }

func TestEventFieldsAndLeafFrame(t *testing.T) {
	rec := record(t, 1, true)
	ctx := pprof.WithLabels(context.Background(), pprof.Labels("route", "/users", "tenant", "7"))
	var p Pool
	a := p.Get(ctx)
	defer p.Put(a)

	const self = "github.com/arenaprof/arenaprof/arena.TestEventFieldsAndLeafFrame"
	cases := []struct {
		name     string
		alloc    func()
		typeName string
		size     int64
		leaf     string
	}{
		{"New inlined", func() { sink32 = New[obj32](a) }, "arena.obj32", 32, self + ".func1"},
		{"New from noinline caller", func() { sink32 = allocNoInline(a) }, "arena.obj32", 32,
			"github.com/arenaprof/arenaprof/arena.allocNoInline"},
		{"tryNew then New", func() {
			p := tryNew[obj8](a)
			if p == nil {
				p = New[obj8](a)
			}
			sink8 = p
		}, "arena.obj8", 8, self + ".func3"},
		{"pointer type", func() { sinkStr = New[objStr](a) }, "arena.objStr", int64(unsafe.Sizeof(objStr{})), self + ".func4"},
		{"MakeSlice", func() { sinkB = MakeSlice[byte](a, 3, 100) }, "[]uint8", 104, self + ".func5"},
		{"MakeSlice pointers", func() { _ = MakeSlice[*int](a, 3, 3) }, "[]*int", 24, self + ".func6"},
		{"String", func() { _ = String(a, "abc") }, "string", 8, self + ".func7"},
		{"Bytes", func() { _ = Bytes(a, []byte("abcdefghi")) }, "[]uint8", 16, self + ".func8"},
		{"large", func() { sinkB = MakeSlice[byte](a, 1<<20, 1<<20) }, "[]uint8", 1 << 20, self + ".func9"},
	}
	for _, c := range cases {
		c.alloc()
		ev := rec.take()
		if len(ev) != 1 {
			t.Fatalf("%s: %d events, want 1", c.name, len(ev))
		}
		e := ev[0]
		if e.TypeName != c.typeName || e.Size != c.size || e.Offset != 0 {
			t.Errorf("%s: type %q size %d offset %d, want %q %d 0", c.name, e.TypeName, e.Size, e.Offset, c.typeName, c.size)
		}
		if e.Type == nil || e.Type.String() != c.typeName {
			t.Errorf("%s: reflect type %v, want %s", c.name, e.Type, c.typeName)
		}
		if len(e.frames) == 0 || e.frames[0] != c.leaf {
			t.Errorf("%s: leaf frames %q, want %s first", c.name, e.frames[:min(3, len(e.frames))], c.leaf)
		}
		for _, f := range e.frames {
			if strings.HasPrefix(f, "github.com/arenaprof/arenaprof/arena.") && !strings.HasPrefix(f, self) &&
				!strings.HasPrefix(f, "github.com/arenaprof/arenaprof/arena.allocNoInline") &&
				!strings.HasPrefix(f, "github.com/arenaprof/arenaprof/arena.Test") {
				t.Errorf("%s: allocator frame %s in the stack %q", c.name, f, e.frames)
			}
		}
		if v, _ := e.Labels.Get("route"); v != "/users" {
			t.Errorf("%s: labels %v, want route=/users", c.name, e.Labels)
		}
		if v, _ := e.Labels.Get("tenant"); v != "7" {
			t.Errorf("%s: labels %v, want tenant=7", c.name, e.Labels)
		}
		if e.Arena != a.id || e.MeanBytes != 1 {
			t.Errorf("%s: arena %d mean %d", c.name, e.Arena, e.MeanBytes)
		}
	}
}
