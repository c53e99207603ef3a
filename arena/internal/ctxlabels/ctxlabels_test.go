package ctxlabels

import (
	"context"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"

	"github.com/arenaprof/arenaprof/hooks"
)

func TestLookup(t *testing.T) {
	cases := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"labels", pprof.WithLabels(context.Background(), pprof.Labels("route", "/x", "a", "1")), `{a="1", route="/x"}`},
		{"none", context.Background(), `{}`},
		{"nil", nil, `{}`},
	}
	for _, c := range cases {
		if got := fromContext(c.ctx).String(); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestLookupCached checks that a set met before is returned from the
// cache, equal to a fresh one, without allocating, and that sets which
// differ only in where text lies between keys and values stay apart.
func TestLookupCached(t *testing.T) {
	bg := context.Background()
	cases := []struct {
		name string
		kv   []string
		want string
	}{
		{"one", []string{"route", "/x"}, `{route="/x"}`},
		{"two", []string{"route", "/x", "tenant", "acme"}, `{route="/x", tenant="acme"}`},
		{"shifted", []string{"route", "/xtenant", "", "acme"}, `{="acme", route="/xtenant"}`},
		{"value", []string{"route", "/y"}, `{route="/y"}`},
		{"empty value", []string{"route", ""}, `{route=""}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := pprof.WithLabels(bg, pprof.Labels(c.kv...))
			for range 2 {
				if got := fromContext(ctx).String(); got != c.want {
					t.Fatalf("%s, want %s", got, c.want)
				}
			}
			if n := testing.AllocsPerRun(100, func() { fromContext(ctx) }); n != 0 {
				t.Errorf("%v allocations per cached call, want 0", n)
			}
		})
	}
}

// TestLookupBounded fills the cache past its size with distinct sets:
// every answer stays right, and the cache holds at most cacheSize sets.
func TestLookupBounded(t *testing.T) {
	bg := context.Background()
	for round := range 2 {
		for i := range 4 * cacheSize {
			v := strconv.Itoa(i)
			got := fromContext(pprof.WithLabels(bg, pprof.Labels("k", v)))
			if w, ok := got.Get("k"); !ok || w != v || got.String() != `{k="`+v+`"}` {
				t.Fatalf("round %d, set %d: %s", round, i, got)
			}
		}
	}
	n := 0
	for i := range cache {
		if cache[i].Load() != nil {
			n++
		}
	}
	if n > cacheSize {
		t.Fatalf("%d sets cached, bound %d", n, cacheSize)
	}
}

// TestLookupConcurrent reads a few sets from many goroutines (run with
// -race).
func TestLookupConcurrent(t *testing.T) {
	bg := context.Background()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				v := strconv.Itoa((g + i) % 5)
				if got, _ := fromContext(pprof.WithLabels(bg, pprof.Labels("k", v))).Get("k"); got != v {
					t.Errorf("got %q, want %q", got, v)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkLookup measures reading a context's labels once the set is
// cached.
func BenchmarkLookup(b *testing.B) {
	ctx := pprof.WithLabels(context.Background(), pprof.Labels("route", "/api/users", "tenant", "acme"))
	b.ReportAllocs()
	for b.Loop() {
		fromContext(ctx)
	}
}

// fromContext returns the labels of ctx as an arena ends up with them:
// from the cache, else resolved (twice, so that the set is cached).
func fromContext(ctx context.Context) hooks.Labels {
	if l, ok := Cached(ctx); ok {
		return l
	}
	Resolve(ctx)
	return Resolve(ctx)
}

// TestResolveCachesOnRecurrence checks that a set resolved once is not
// cached, and is cached when resolved again; and that Cached never
// allocates.
func TestResolveCachesOnRecurrence(t *testing.T) {
	ctx := pprof.WithLabels(context.Background(), pprof.Labels("route", "/once-then-again"))
	if _, ok := Cached(ctx); ok {
		t.Fatal("a new set was found in the cache")
	}
	if l := Resolve(ctx); l.String() != `{route="/once-then-again"}` {
		t.Fatalf("resolved %v", l)
	}
	if _, ok := Cached(ctx); ok {
		t.Fatal("a set resolved once was cached")
	}
	Resolve(ctx)
	if l, ok := Cached(ctx); !ok || l.String() != `{route="/once-then-again"}` {
		t.Fatalf("after a second Resolve: %v, %v", l, ok)
	}
	ctxs := make([]context.Context, 300)
	for i := range ctxs {
		ctxs[i] = pprof.WithLabels(context.Background(), pprof.Labels("span_id", strconv.Itoa(1e9+i)))
	}
	i := 0
	if n := testing.AllocsPerRun(len(ctxs)-1, func() {
		if _, ok := Cached(ctxs[i]); ok {
			t.Errorf("set %d found in the cache", i)
		}
		i++
	}); n != 0 {
		t.Errorf("%v allocations per Cached of a new set", n)
	}
}
