// Command agent is a small service under load with arenaprof's
// continuous-profiling agent running inside it.
//
// Worker goroutines serve simulated requests: each takes an arena from a
// pool (labelled with the request's handler), builds an order in it, does
// some computing and waits a little as if for I/O, and gives the arena
// back. The agent uploads, every interval, the arena allocation profile
// (delta over the interval, in-use absolute), a wall-clock profile, and the
// runtime's heap profile.
//
// Usage:
//
//	go run ./examples/agent -duration 1m -interval 10s             # profiles to a temporary directory
//	go run ./examples/agent -dir ./profiles -duration 1m
//	go run ./examples/agent -server http://localhost:4040 -app shop
//
// With -duration the program stops the agent cleanly when the time is up,
// prints the agent's counters and exits 0; without it, it runs until
// interrupted (Ctrl-C) and does the same.
package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export/agent"
	"github.com/arenaprof/arenaprof/profiler"
)

type item struct {
	sku   string
	qty   int64
	price int64
}

type order struct {
	id       int64
	customer string
	items    []item
	total    int64
	digest   [32]byte
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agent example:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) (err error) {
	flag := flag.NewFlagSet("agent", flag.ContinueOnError)
	dir := flag.String("dir", "", "write profiles to this directory (the default when no -server is given: a new temporary directory)")
	server := flag.String("server", "", "push profiles to this Pyroscope-compatible server URL (user:password@ in the URL for basic auth)")
	tenant := flag.String("tenant", "", "tenant sent as X-Scope-OrgID to -server")
	app := flag.String("app", "arenaprof-example", "application name")
	interval := flag.Duration("interval", 15*time.Second, "upload interval")
	duration := flag.Duration("duration", 0, "run this long, then stop the agent, print its counters and exit (0: until interrupted)")
	workers := flag.Int("workers", 4, "worker goroutines")
	if err := flag.Parse(args); err != nil {
		return err
	}
	if *duration < 0 {
		return errors.New("-duration must not be negative")
	}
	if *workers < 1 || *workers > 1024 {
		return errors.New("-workers must be in [1, 1024]")
	}

	prof, err := profiler.Start()
	if err != nil {
		return err
	}
	defer prof.Stop()

	var uploaders []agent.Uploader
	if *server != "" {
		py, err := agent.NewPyroscope(agent.PyroscopeConfig{URL: *server, TenantID: *tenant})
		if err != nil {
			return err
		}
		uploaders = append(uploaders, py)
	}
	if *dir == "" && *server == "" {
		if *dir, err = os.MkdirTemp("", "arenaprof-profiles-"); err != nil {
			return err
		}
		// A run that fails before it writes a profile leaves no empty
		// directory behind.
		created := *dir
		defer func() {
			if err != nil {
				os.RemoveAll(created)
			}
		}()
	}
	if *dir != "" {
		d, err := agent.NewDir(agent.DirConfig{Path: *dir, MaxFiles: 1000})
		if err != nil {
			return err
		}
		uploaders = append(uploaders, d)
		fmt.Fprintln(stdout, "writing profiles to", *dir)
	}

	host, _ := os.Hostname()
	if host == "" {
		host = "unknown"
	}
	a, err := agent.Start(agent.Config{
		AppName:   *app,
		Labels:    map[string]string{"host": host},
		Interval:  *interval,
		Sources:   []agent.Source{agent.ProfilerSource(prof), agent.WallSource(), agent.HeapSource()},
		Uploaders: uploaders,
		Logger:    slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}

	ctx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}

	var served sync.WaitGroup
	var requests atomic.Int64
	pool := arena.NewPool()
	for w := range *workers {
		served.Add(1)
		go func() {
			defer served.Done()
			handler := []string{"checkout", "search"}[w%2]
			pprof.Do(ctx, pprof.Labels("handler", handler), func(ctx context.Context) {
				for n := int64(0); ctx.Err() == nil; n++ {
					serve(ctx, pool, n, handler == "search")
					requests.Add(1)
				}
			})
		}()
	}
	<-ctx.Done()
	served.Wait()

	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stopErr := a.Stop(stopCtx)
	s := a.Stats()
	fmt.Fprintf(stdout, "served %d requests\n", requests.Load())
	fmt.Fprintf(stdout, "collected %d profiles (%d collection errors): uploaded %d, retried %d, dropped %d, failed %d\n",
		s.Collected, s.CollectErrors, s.Uploaded, s.Retried, s.Dropped, s.Failed)
	for _, d := range s.Destinations {
		fmt.Fprintf(stdout, "  %s: enqueued %d, uploaded %d, retried %d, dropped %d, failed %d\n",
			d.Name, d.Enqueued, d.Uploaded, d.Retried, d.Dropped, d.Failed)
	}
	if stopErr != nil {
		fmt.Fprintln(os.Stderr, "agent example: stop:", stopErr)
	}
	return nil
}

// serve handles one simulated request in an arena from the pool.
func serve(ctx context.Context, pool *arena.Pool, n int64, search bool) {
	a := pool.Get(ctx)
	defer pool.Put(a)
	o := arena.New[order](a)
	o.id = n
	o.customer = arena.String(a, fmt.Sprintf("customer-%d", n%997))
	k := 4 + int(n%13)
	if search {
		k *= 8 // searches build bigger result sets
	}
	o.items = arena.MakeSlice[item](a, k, k)
	for i := range o.items {
		o.items[i] = item{sku: arena.String(a, fmt.Sprintf("sku-%d-%d", n%101, i)), qty: int64(i%3 + 1), price: int64(100 + i)}
		o.total += o.items[i].qty * o.items[i].price
	}
	buf := arena.MakeSlice[byte](a, 0, 64*k)
	for _, it := range o.items {
		buf = append(buf, it.sku...)
	}
	o.digest = sha256.Sum256(buf)
	// Wait as if for a database: visible in the wall-clock profile.
	t := time.NewTimer(time.Duration(200+n%800) * time.Microsecond)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
	}
}
