package export_test

import (
	"log"
	"net/http"
	"time"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/profiler"
)

type user struct {
	id   int64
	name [32]byte
}

// Serve arena allocation profiles over HTTP, next to net/http/pprof:
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
func ExampleWriteFile() {
	p, err := profiler.Start(profiler.WithMeanBytes(4096))
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
	if err := export.WriteFile("arenas.pb.gz", p); err != nil {
		log.Fatal(err)
	}
}

// An agent uploads the profile of each interval since its previous upload.
func ExampleDeltas() {
	p, err := profiler.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer p.Stop()
	deltas := export.NewDeltas(p)
	for range time.Tick(15 * time.Second) {
		prof, err := deltas.Next()
		if err != nil {
			log.Print(err)
			continue
		}
		_ = prof // upload it, or prof.Write(w)
	}
}
