// Command service is a small HTTP service that allocates its request-scoped
// data in arenas and is profiled by arenaprof, set up in one call.
//
// Each endpoint takes its arenas from an arena.Pool of its own, made with
// the endpoint's label, so every arena, and every sampled allocation in
// it, carries the label endpoint=/orders or endpoint=/search at no cost
// per request (pprof.Do around the handler would label CPU samples too,
// for 72 to 394 more heap bytes per request: docs/getting-started.md). The service mounts
// net/http/pprof and the arenaprof handler on its mux and, with -pyroscope
// or -dir, pushes a profile every interval.
//
// Usage:
//
//	go run ./examples/service -addr 127.0.0.1:8080
//	go run ./examples/service -addr 127.0.0.1:8080 -pyroscope http://127.0.0.1:4040 -app shop
//
// Then, from another terminal:
//
//	for i in $(seq 2000); do curl -s 127.0.0.1:8080/orders?n=40 >/dev/null; curl -s '127.0.0.1:8080/search?q=arena' >/dev/null; done
//	go tool pprof -top -sample_index=alloc_space http://127.0.0.1:8080/debug/arenaprof
//	go run ./cmd/arenaprof top -by label=endpoint http://127.0.0.1:8080/debug/arenaprof
//	go run ./cmd/arenaprof top http://127.0.0.1:8080/debug/arenaprof?seconds=10
//
// -load N makes the service send itself N requests of each kind first, so
// that a profile has data right away.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/arenaprof/arenaprof"
	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/hooks"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "service:", err)
		os.Exit(1)
	}
}

// item is one line of an order.
type item struct {
	sku   string
	qty   int64
	price int64
}

// order is what /orders builds for each request.
type order struct {
	id    int64
	items []item
	total int64
}

// hit is one search result.
type hit struct {
	doc   int64
	score float64
	title string
}

// server holds the service's state: an arena pool per endpoint.
type server struct {
	orderPool, searchPool *arena.Pool
	lastOrder             atomic.Int64 // the last order's id
}

// routePool returns a pool whose arenas carry the label endpoint=path: the
// cheapest way to label a request's arena (nothing per request).
func routePool(path string) *arena.Pool {
	return arena.NewPool(arena.WithLabels(hooks.NewLabels("endpoint", path)))
}

// withArena runs fn with an arena from pool and gives the arena back
// afterwards.
func withArena(w http.ResponseWriter, r *http.Request, pool *arena.Pool, fn func(a *arena.Arena) string) {
	a := pool.Get(r.Context())
	defer pool.Put(a)
	io.WriteString(w, fn(a))
}

// orders builds an order of n items (default 20) in the request's arena.
func (s *server) orders(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.URL.Query().Get("n"))
	if err != nil || n <= 0 || n > 10000 {
		n = 20
	}
	withArena(w, r, s.orderPool, func(a *arena.Arena) string {
		o := arena.New[order](a)
		o.id = s.lastOrder.Add(1)
		o.items = arena.MakeSlice[item](a, 0, n)
		for i := range n {
			sku := arena.String(a, "sku-"+strconv.Itoa(i%97))
			o.items = append(o.items, item{sku: sku, qty: int64(i%5 + 1), price: int64(100 + i)})
			o.total += o.items[i].qty * o.items[i].price
		}
		return fmt.Sprintf("order %d of %d items, total %d\n", o.id, len(o.items), o.total)
	})
}

// search scores 200 documents against the query in the request's arena,
// with a 64 KiB scratch buffer.
func (s *server) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	withArena(w, r, s.searchPool, func(a *arena.Arena) string {
		scratch := arena.MakeSlice[byte](a, 64<<10, 64<<10)
		hits := arena.MakeSlice[*hit](a, 0, 200)
		for d := range 200 {
			h := arena.New[hit](a)
			h.doc = int64(d)
			h.title = arena.String(a, "document "+strconv.Itoa(d)+" about "+q)
			h.score = float64(len(h.title)%17) + float64(scratch[d])
			hits = append(hits, h)
		}
		best := hits[0]
		for _, h := range hits {
			if h.score > best.score {
				best = h
			}
		}
		return best.title + "\n"
	})
}

// run starts the service and serves until ctx is done (main: a signal).
// ready, if not nil, receives the listener's address once it is listening
// and the -load requests are done.
func run(ctx context.Context, args []string, stdout io.Writer, ready chan<- string) error {
	fs := flag.NewFlagSet("service", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	app := fs.String("app", "service", "application name in uploads")
	pyro := fs.String("pyroscope", "", "push profiles to this Pyroscope server URL")
	dir := fs.String("dir", "", "write profiles into this directory")
	interval := fs.Duration("interval", 15*time.Second, "upload interval")
	load := fs.Int("load", 0, "send the service N requests of each kind at start")
	mean := fs.Int64("mean", 102400, "sampling mean in bytes (process-wide, like runtime.MemProfileRate)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *mean < 1 {
		return fmt.Errorf("bad -mean %d: use a number of bytes, at least 1", *mean)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	s := &server{orderPool: routePool("/orders"), searchPool: routePool("/search")}
	mux.HandleFunc("/orders", s.orders)
	mux.HandleFunc("/search", s.search)

	// One call: profiler on, /debug/arenaprof on the mux, uploads. The
	// default Profiles leave out the CPU profile, so /debug/pprof/profile
	// above keeps working.
	prof, err := arenaprof.Start(arenaprof.Config{
		AppName:         *app,
		Mux:             mux,
		PyroscopeURL:    *pyro,
		Dir:             *dir,
		Interval:        *interval,
		SampleMeanBytes: *mean,
		Logger:          slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	if err != nil {
		return err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		prof.Stop(ctx)
	}()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "serving on %s (profile: go tool pprof %s/debug/arenaprof)\n", base, base)
	if *load > 0 {
		if err := selfLoad(base, *load); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "sent %d requests to each endpoint\n", *load)
	}
	if ready != nil {
		ready <- ln.Addr().String()
	}

	select {
	case <-ctx.Done():
	case err := <-errc:
		return err
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// selfLoad sends n requests to each endpoint, from as many goroutines as
// there are CPUs. Its client closes its connections when done: a
// connection the transport dialled but never used would otherwise hold
// srv.Shutdown for 5 s (the server counts a connection that has sent no
// request as busy for that long).
func selfLoad(base string, n int) error {
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	urls := []string{base + "/orders?n=40", base + "/search?q=arena"}
	errc := make(chan error, runtime.GOMAXPROCS(0))
	work := make(chan string)
	for range cap(errc) {
		go func() {
			var first error
			for u := range work {
				resp, err := client.Get(u)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if err != nil && first == nil {
					first = err
				}
			}
			errc <- first
		}()
	}
	for range n {
		for _, u := range urls {
			work <- u
		}
	}
	close(work)
	var errs []string
	for range cap(errc) {
		if err := <-errc; err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}
