package profiler_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/profiler"
)

type user struct {
	ID   int64
	Name string
}

// ExampleStart profiles the allocations of an arena and writes the profile
// for go tool pprof.
func ExampleStart() {
	old := hooks.MeanBytes()
	defer hooks.SetMeanBytes(old)
	if err := hooks.SetMeanBytes(1); err != nil { // sample every object
		log.Fatal(err)
	}
	p, err := profiler.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer p.Stop()

	a := arena.NewArena()
	for i := range 100 {
		u := arena.New[user](a)
		u.ID = int64(i)
	}
	s := p.Snapshot()
	var bytesAlloc float64
	for _, r := range s.Records {
		bytesAlloc += r.AllocBytes
	}
	fmt.Printf("%.0f bytes of %d records\n", bytesAlloc, len(s.Records))

	var buf bytes.Buffer // a file in a real program
	if err := export.Write(&buf, s); err != nil {
		log.Fatal(err)
	}
	a.Free()
	// Output: 2400 bytes of 1 records
}

// ExampleDelta profiles a window: the allocations between two snapshots.
func ExampleDelta() {
	old := hooks.MeanBytes()
	defer hooks.SetMeanBytes(old)
	_ = hooks.SetMeanBytes(1)
	p, err := profiler.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer p.Stop()
	a := arena.NewArena()
	defer a.Free()

	arena.MakeSlice[byte](a, 1024, 1024) // before the window
	before := p.Snapshot()
	arena.MakeSlice[byte](a, 512, 512) // in the window
	window, err := profiler.Delta(before, p.Snapshot())
	if err != nil {
		log.Fatal(err)
	}
	var n float64
	for _, r := range window.Records {
		n += r.AllocBytes
	}
	fmt.Printf("%.0f bytes allocated in the window\n", n)
	// Output: 512 bytes allocated in the window
}
