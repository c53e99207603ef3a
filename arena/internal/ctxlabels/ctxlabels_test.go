package ctxlabels

import (
	"context"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"
)

func TestFromContext(t *testing.T) {
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
		if got := FromContext(c.ctx).String(); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestFromContextCached checks that a set met before is returned from the
// cache, equal to a fresh one, without allocating, and that sets which
// differ only in where text lies between keys and values stay apart.
func TestFromContextCached(t *testing.T) {
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
				if got := FromContext(ctx).String(); got != c.want {
					t.Fatalf("%s, want %s", got, c.want)
				}
			}
			if n := testing.AllocsPerRun(100, func() { FromContext(ctx) }); n != 0 {
				t.Errorf("%v allocations per cached call, want 0", n)
			}
		})
	}
}

// TestFromContextBounded fills the cache past its size with distinct sets:
// every answer stays right, and the cache holds at most cacheSize sets.
func TestFromContextBounded(t *testing.T) {
	bg := context.Background()
	for round := range 2 {
		for i := range 4 * cacheSize {
			v := strconv.Itoa(i)
			got := FromContext(pprof.WithLabels(bg, pprof.Labels("k", v)))
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

// TestFromContextConcurrent reads a few sets from many goroutines (run with
// -race).
func TestFromContextConcurrent(t *testing.T) {
	bg := context.Background()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				v := strconv.Itoa((g + i) % 5)
				if got, _ := FromContext(pprof.WithLabels(bg, pprof.Labels("k", v))).Get("k"); got != v {
					t.Errorf("got %q, want %q", got, v)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkFromContext measures reading a context's labels once the set is
// cached.
func BenchmarkFromContext(b *testing.B) {
	ctx := pprof.WithLabels(context.Background(), pprof.Labels("route", "/api/users", "tenant", "acme"))
	b.ReportAllocs()
	for b.Loop() {
		FromContext(ctx)
	}
}
