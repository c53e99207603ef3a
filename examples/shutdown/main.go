// Command shutdown is a service that stops cleanly. On SIGINT or SIGTERM it
// stops accepting requests and lets those in flight finish
// (http.Server.Shutdown), then stops arenaprof, which uploads the last,
// partial interval (Session.Stop). Each step has its own deadline, so a
// client that never finishes or a profile server that never answers cannot
// keep the process from exiting.
//
//	go run ./examples/shutdown -dir /tmp/profiles    # then Ctrl-C
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/arenaprof/arenaprof"
	"github.com/arenaprof/arenaprof/arena"
)

type user struct {
	name string
}

var pool arena.Pool

func handle(w http.ResponseWriter, r *http.Request) {
	a := pool.Get(r.Context())
	defer pool.Put(a)
	u := arena.New[user](a)
	u.name = arena.String(a, r.FormValue("name"))
	w.Write([]byte("hello " + u.name + "\n"))
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	pyroscope := flag.String("pyroscope", "", "push profiles to this Pyroscope server URL")
	dir := flag.String("dir", "", "write profiles into this directory")
	interval := flag.Duration("interval", 15*time.Second, "upload interval")
	flag.Parse()

	// The first SIGINT or SIGTERM starts the shutdown; stop() below makes
	// a second one kill the process at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	mux := http.NewServeMux()
	mux.HandleFunc("/user", handle)
	s, err := arenaprof.Start(arenaprof.Config{
		AppName:      "shop",
		Mux:          mux, // go tool pprof http://host/debug/arenaprof; upload stats at /debug/arenaprof/stats
		PyroscopeURL: *pyroscope,
		Dir:          *dir,
		Interval:     *interval,
	})
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		s.Stop(context.Background())
		log.Fatal(err)
	}
	log.Printf("listening on %s", ln.Addr())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case <-ctx.Done():
		log.Print("shutting down")
	case err := <-served:
		log.Printf("server: %v", err) // the listener failed: still stop cleanly
	}
	stop()

	// Let requests in flight finish, for at most 10 s.
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	err = srv.Shutdown(sctx)
	cancel()
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Printf("http shutdown: %v", err)
	}

	// Upload the last interval, for at most 15 s.
	sctx, cancel = context.WithTimeout(context.Background(), 15*time.Second)
	err = s.Stop(sctx)
	cancel()
	st := s.Stats()
	log.Printf("profiles: %d uploaded, %d failed, %d unconfirmed, %d dropped",
		st.Uploaded, st.Failed, st.Unconfirmed, st.Dropped)
	if err != nil {
		log.Fatalf("arenaprof: %v", err)
	}
}
