package arena_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime/pprof"
	"slices"
	"strings"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
)

type user struct {
	ID   int64
	Name string
	Tags []string
}

func Example() {
	a := arena.NewArena()
	defer a.Free()

	u := arena.New[user](a)
	u.ID = 42
	u.Name = arena.String(a, "gopher")
	u.Tags = arena.MakeSlice[string](a, 0, 4)
	u.Tags = append(u.Tags, "admin")
	fmt.Println(u.ID, u.Name, u.Tags)

	a.Reset() // u must not be used any more; the memory is reused, zeroed
	v := arena.New[user](a)
	fmt.Println(v.ID, v.Name == "", len(v.Tags))
	// Output:
	// 42 gopher [admin]
	// 0 true 0
}

// printer is a hooks.Consumer that prints each sampled object.
type printer struct{}

func (printer) Sampled(e *hooks.Event) {
	route, _ := e.Labels.Get("route")
	fmt.Printf("sampled %s of %d bytes for %s\n", e.TypeName, e.Size, route)
}

func (printer) Released(uint64) {}

func ExamplePool() {
	// Sample every object (mean 1) while this consumer is registered.
	_ = hooks.SetMeanBytes(1)
	defer hooks.SetMeanBytes(samplingstate.DefaultMeanBytes)
	defer hooks.Register(printer{})()

	var pool arena.Pool
	pprof.Do(context.Background(), pprof.Labels("route", "/users"), func(ctx context.Context) {
		a := pool.Get(ctx)
		defer pool.Put(a)
		u := arena.New[user](a)
		u.Name = "gopher"
	})
	// Output:
	// sampled arena_test.user of 48 bytes for /users
}

func ExampleAppend() {
	a := arena.NewArena()
	defer a.Free()

	var ids []int64 // nil, like a slice built with append
	for i := range 5 {
		ids = arena.Append(a, ids, int64(i)) // grows in place or copies, in a
	}
	ids = arena.Append(a, ids, 10, 11)
	fmt.Println(ids, len(ids))

	// Keep a copy past Reset: the arena's memory is reused afterwards.
	kept := slices.Clone(ids)
	a.Reset()
	fmt.Println(kept)
	// Output:
	// [0 1 2 3 4 10 11] 7
	// [0 1 2 3 4 10 11]
}

func ExampleAppendString() {
	a := arena.NewArena()
	defer a.Free()

	var line []byte
	for _, w := range []string{"GET", " ", "/users", "?id=", "42"} {
		line = arena.AppendString(a, line, w) // like append(line, w...)
	}
	fmt.Println(string(line))
	// Output: GET /users?id=42
}

func ExampleGrow() {
	a := arena.NewArena()
	defer a.Free()

	ids := arena.MakeSlice[int64](a, 0, 2)
	ids = arena.Grow(a, ids, 100) // one growth, in a, for what follows
	before := cap(ids)
	for i := range 100 {
		ids = append(ids, int64(i)) // the built-in append: room already there
	}
	fmt.Println(len(ids), cap(ids) == before)
	// Output: 100 true
}

func ExampleReadAll() {
	a := arena.NewArena()
	defer a.Free()

	// A request body, say: read into the arena, at most 1 MiB.
	body := strings.NewReader(`{"name":"gopher","ids":[1,2,3]}`)
	b, err := arena.ReadAll(a, body, 1<<20)
	fmt.Println(len(b), err)

	// A longer input than the limit: the first limit bytes and an error.
	b, err = arena.ReadAll(a, strings.NewReader("0123456789"), 4)
	fmt.Println(string(b), errors.Is(err, arena.ErrTooLarge))
	// Output:
	// 31 <nil>
	// 0123 true
}

// NewValue and MakeSliceValue are New and MakeSlice for types known only
// at run time, as reflect.New and reflect.MakeSlice are for new and make:
// a decoder driven by reflect allocates with them.
func ExampleNewValue() {
	a := arena.NewArena()
	defer a.Free()

	t := reflect.TypeFor[user]() // say, found by walking a request type
	p := arena.NewValue(a, t)    // a *user in a
	p.Elem().FieldByName("Name").SetString(arena.String(a, "gopher"))

	tags := arena.MakeSliceValue(a, t.Field(2).Type, 1, 4) // a []string in a
	tags.Index(0).SetString("admin")
	p.Elem().FieldByName("Tags").Set(tags)

	u := p.Interface().(*user)
	fmt.Println(u.Name, u.Tags, cap(u.Tags))
	// Output: gopher [admin] 4
}
