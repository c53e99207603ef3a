package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	rpprof "runtime/pprof"
	"strconv"
	"testing"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/hooks"
)

// discard is a ResponseWriter that keeps nothing, so that a benchmark
// counts the handler's allocations only.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

// orderBody is /orders' work at n=40, on the arena a.
func orderBody(w io.Writer, a *arena.Arena) {
	o := arena.New[order](a)
	o.items = arena.MakeSlice[item](a, 0, 40)
	for i := range 40 {
		sku := arena.String(a, "sku-"+strconv.Itoa(i%97))
		o.items = append(o.items, item{sku: sku, qty: int64(i%5 + 1), price: int64(100 + i)})
		o.total += o.items[i].qty * o.items[i].price
	}
	io.WriteString(w, "ok\n")
}

// BenchmarkLabelRequest compares the ways a handler can label the arena of
// a request with its endpoint, per request of /orders' work (the handler
// alone: no connection, no server), in Go heap bytes and allocations:
//
//   - none: no label (pool.Get(r.Context()));
//
//   - pool-per-route: one arena.Pool per route made with
//     arena.WithLabels, the route's label fixed when the pool is made;
//
//   - pprof.Do: the handler runs its work inside pprof.Do with the label
//     and passes Do's context to pool.Get (also labels CPU samples);
//
//   - pprof.Do+WithContext: a middleware runs the next handler inside
//     pprof.Do and hands it r.WithContext(ctx) (the usual net/http
//     middleware shape).
//
//     go test -run '^$' -bench LabelRequest -benchmem -count 10 ./examples/service
func BenchmarkLabelRequest(b *testing.B) {
	shared := &arena.Pool{}
	route := arena.NewPool(arena.WithLabels(hooks.NewLabels("endpoint", "/orders")))
	labels := rpprof.Labels("endpoint", "/orders")
	plain := func(p *arena.Pool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			a := p.Get(r.Context())
			orderBody(w, a)
			p.Put(a)
		}
	}
	middleware := func(next http.Handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			rpprof.Do(r.Context(), labels, func(ctx context.Context) {
				next.ServeHTTP(w, r.WithContext(ctx))
			})
		}
	}
	cases := []struct {
		name string
		h    http.Handler
	}{
		{"none", plain(shared)},
		{"pool-per-route", plain(route)},
		{"pprof.Do", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rpprof.Do(r.Context(), labels, func(ctx context.Context) {
				a := shared.Get(ctx)
				orderBody(w, a)
				shared.Put(a)
			})
		})},
		{"pprof.Do+WithContext", middleware(plain(shared))},
	}
	for _, c := range cases {
		b.Run("label="+c.name, func(b *testing.B) {
			r := httptest.NewRequest("GET", "/orders?n=40", nil)
			w := &discard{h: http.Header{}}
			c.h.ServeHTTP(w, r) // warm the pool and the label caches
			b.ReportAllocs()
			for b.Loop() {
				c.h.ServeHTTP(w, r)
			}
		})
	}
}
