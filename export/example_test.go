package export_test

import (
	"log"
	"net/http"
	"os"
	"time"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/profiler"
)

type user struct {
	id   int64
	name [32]byte
}

// Serve arena allocation profiles over HTTP on a mux of your own (add
// net/http/pprof's handlers to it yourself if you want them there too):
//
//	go tool pprof http://localhost:6060/debug/arenaprof
//	go tool pprof http://localhost:6060/debug/arenaprof?seconds=30
//	curl 'http://localhost:6060/debug/arenaprof?debug=1'
func ExampleHandler() {
	p, err := profiler.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer p.Stop()
	mux := http.NewServeMux()
	mux.Handle("/debug/arenaprof", export.Handler(p))
	log.Fatal(http.ListenAndServe("localhost:6060", mux))
}

// Write the profile of a run to a file, for go tool pprof arenas.pb.gz.
func ExampleWrite() {
	// The sampling mean is process-wide, like runtime.MemProfileRate: one
	// sampled byte every 4096 on average, for every arena and consumer.
	defer hooks.SetMeanBytes(hooks.MeanBytes())
	if err := hooks.SetMeanBytes(4096); err != nil {
		log.Fatal(err)
	}
	p, err := profiler.Start()
	if err != nil {
		log.Fatal(err)
	}
	a := arena.NewArena()
	for i := range 1000 {
		u := arena.New[user](a)
		u.id = int64(i)
	}
	a.Reset()
	p.Stop()
	f, err := os.Create("arenas.pb.gz")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	if err := export.Write(f, p.Snapshot()); err != nil {
		log.Fatal(err)
	}
}

// The profile of each interval since the previous one, as an agent
// uploads it (package agent does this for you).
func ExampleBuild_delta() {
	p, err := profiler.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer p.Stop()
	prev := p.Snapshot()
	for range time.Tick(15 * time.Second) {
		cur := p.Snapshot()
		d, err := profiler.Delta(prev, cur)
		if err != nil {
			log.Fatal(err)
		}
		prev = cur
		prof, err := export.Build(d)
		if err != nil {
			log.Fatal(err)
		}
		_ = prof // upload it, or prof.Write(w)
	}
}
