package browsertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/profiler"
)

type (
	user    struct{ id, age int64 }
	order   struct{ lines [6]int64 }
	invoice struct{ total [20]int64 }
)

// A small service's request path, so that the flame graph has depth.
//
//go:noinline
func serve(a *arena.Arena, users, orders int) {
	handleUsers(a, users)
	handleOrders(a, orders)
}

//go:noinline
func handleUsers(a *arena.Arena, n int) {
	for range n {
		_ = arena.New[user](a)
	}
	decode(a, n/4)
}

//go:noinline
func handleOrders(a *arena.Arena, n int) {
	for range n {
		_ = arena.New[order](a)
	}
	bill(a, n/3)
	decode(a, n/2)
}

//go:noinline
func bill(a *arena.Arena, n int) {
	for range n {
		_ = arena.New[invoice](a)
	}
}

//go:noinline
func decode(a *arena.Arena, n int) {
	for range n {
		_ = arena.MakeSlice[byte](a, 200, 200)
	}
}

// serviceProfile profiles one run of serve through a real arena and
// writes it to dir/name.
func serviceProfile(t testing.TB, dir, name string, seed uint64, users, orders int) string {
	t.Helper()
	prev := hooks.MeanBytes()
	defer hooks.SetMeanBytes(prev)
	if err := hooks.SetMeanBytes(1024); err != nil {
		t.Fatal(err)
	}
	p, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	a := arena.NewArena(arena.WithSeed(seed, 7))
	serve(a, users, orders)
	a.Reset()
	p.Stop()
	var buf bytes.Buffer
	if err := export.Write(&buf, p.Snapshot()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// arenasProfile writes the live-arenas profile of this process
// (export.BuildArenas) to dir/name while it holds arenas made at two
// sites, userArena and orderArena, and frees them.
func arenasProfile(t testing.TB, dir, name string) {
	t.Helper()
	var held []*arena.Arena
	for i := range 3 {
		held = append(held, userArena(1000*(i+1)))
	}
	heldProfile(t, dir, name, append(held, orderArena(20000)))
}

// arenasDiffProfiles writes two live-arenas profiles of this process to
// dir/base and dir/next, each while it holds real arenas: in base one
// userArena and two orderArenas; in next three userArenas (grown), one
// orderArena (shrunk) and a billArena (new).
func arenasDiffProfiles(t testing.TB, dir, base, next string) {
	t.Helper()
	heldProfile(t, dir, base, []*arena.Arena{userArena(2000), orderArena(20000), orderArena(30000)})
	heldProfile(t, dir, next, []*arena.Arena{userArena(2000), userArena(4000), userArena(8000), orderArena(20000), billArena(5000)})
}

// heldProfile writes the live-arenas profile of this process to dir/name
// while it holds the arenas held, then frees them.
func heldProfile(t testing.TB, dir, name string, held []*arena.Arena) {
	t.Helper()
	p, err := export.BuildArenas()
	for _, a := range held {
		a.Free()
	}
	if err != nil {
		t.Fatal(err)
	}
	writeProfile(t, dir, name, p)
}

//go:noinline
func userArena(n int) *arena.Arena {
	a := arena.NewArena()
	handleUsers(a, n)
	return a
}

//go:noinline
func orderArena(n int) *arena.Arena {
	a := arena.NewArena()
	handleOrders(a, n)
	return a
}

//go:noinline
func billArena(n int) *arena.Arena {
	a := arena.NewArena()
	bill(a, n)
	return a
}

// synthProfile is an arenaprof profile with one sample per leaf function,
// as the exporter writes them, under stacks main.main < serve < handler
// < step < leaf: nh handlers, ns steps each, nl leaves per step. name
// returns each function's name from its level and index, so that a test
// can make them hostile.
func synthProfile(t testing.TB, nh, ns, nl int, name func(level, i int) string) *profile.Profile {
	p := &profile.Profile{
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            102400,
		SampleType:        pprofmt.SampleTypes(),
		DefaultSampleType: "alloc_space",
		Comments:          []string{pprofmt.WindowComment(estimate.WindowEnd)},
		TimeNanos:         1_700_000_000_000_000_000,
		DurationNanos:     60_000_000_000,
	}
	locs := map[string]*profile.Location{}
	loc := func(fn string) *profile.Location {
		if l := locs[fn]; l != nil {
			return l
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: fn, SystemName: fn, Filename: "shop.go"}
		p.Function = append(p.Function, f)
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f, Line: int64(len(p.Location) + 1)}}}
		p.Location = append(p.Location, l)
		locs[fn] = l
		return l
	}
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int64{32, 64, 128, 512, 4096}
	types := []string{"shop.user", "shop.order", "[]uint8", "shop.invoice", "map[string]shop.line"}
	for h := range nh {
		for s := range ns {
			for l := range nl {
				leaf := (h*ns+s)*nl + l
				size := sizes[leaf%len(sizes)]
				n := int64(1 + rng.IntN(200))
				w, err := estimate.WeightedBytes(size, p.Period)
				if err != nil {
					t.Fatal(err)
				}
				space := int64(math.Round(float64(n) * w))
				sm := &profile.Sample{
					Value:    []int64{space / size, space, 0, 0, n, n * (size + 1) / 2},
					Label:    map[string][]string{"type": {types[leaf%len(types)]}},
					NumLabel: map[string][]int64{"bytes": {size}, "sampling_mean": {p.Period}},
					NumUnit:  map[string][]string{"bytes": {"bytes"}, "sampling_mean": {"bytes"}},
				}
				for _, fn := range []string{name(4, leaf), name(3, h*ns+s), name(2, h), name(1, 0), name(0, 0)} {
					sm.Location = append(sm.Location, loc(fn))
				}
				p.Sample = append(p.Sample, sm)
			}
		}
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	return p
}

// shopName names the functions of synthProfile as a service would.
func shopName(level, i int) string {
	switch level {
	case 0:
		return "main.main"
	case 1:
		return "github.com/example/shop/internal/server.(*Server).serve"
	case 2:
		return fmt.Sprintf("github.com/example/shop/internal/handlers.(*API).handleEndpoint%02d", i)
	case 3:
		return fmt.Sprintf("github.com/example/shop/internal/pipeline.step%04d", i)
	}
	return fmt.Sprintf("github.com/example/shop/internal/codec.(*Decoder).decodeRecordKind%05d", i)
}

func writeProfile(t testing.TB, dir, name string, p *profile.Profile) string {
	t.Helper()
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// rssProfile writes the resident-memory profile of this process
// (export.RSSHandler) to dir/name while it holds heap objects allocated
// at two sites (sessionCache, requestBuffers) and arenas at two
// (userArena, orderArena), and frees them.
func rssProfile(t testing.TB, dir, name string) {
	t.Helper()
	cache, bufs := sessionCache(3000), requestBuffers(400)
	held := []*arena.Arena{userArena(4000), orderArena(20000)}
	runtime.GC()
	rec := httptest.NewRecorder()
	export.RSSHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/debug/arenaprof/rss", nil))
	runtime.KeepAlive(cache)
	runtime.KeepAlive(bufs)
	for _, a := range held {
		a.Free()
	}
	if rec.Code != 200 {
		t.Fatalf("/debug/arenaprof/rss: %d %s", rec.Code, rec.Body.String())
	}
	if err := os.WriteFile(filepath.Join(dir, name), rec.Body.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

//go:noinline
func sessionCache(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = make([]byte, 1024)
	}
	return out
}

//go:noinline
func requestBuffers(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = make([]byte, 16<<10)
	}
	return out
}

// rssJSONRows returns the classes and rows of arenaprof rss -json as the
// page's rows carry them: key (a class's own path), class, bytes, lo, hi.
func rssJSONRows(t testing.TB, out string) [][]string {
	t.Helper()
	var res struct {
		Classes []struct {
			Class         string
			Bytes, Lo, Hi int64
		}
		Rows []struct {
			Class, Key    string
			Bytes, Lo, Hi int64
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	f := func(x int64) string { return strconv.FormatInt(x, 10) }
	for _, c := range res.Classes {
		rows = append(rows, []string{c.Class, c.Class, f(c.Bytes), f(c.Lo), f(c.Hi)})
	}
	for _, r := range res.Rows {
		rows = append(rows, []string{r.Key, r.Class, f(r.Bytes), f(r.Lo), f(r.Hi)})
	}
	return rows
}
