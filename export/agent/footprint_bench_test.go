package agent

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/profiler"
)

// The agent's own footprint: the Go heap it allocates per upload, from
// collecting a profile to the request handed to the network. Measure
// with
//
//	go test -run '^$' -bench 'UploadFootprint' -benchmem -count 10 ./export/agent
//
// Each upload goes to a Pyroscope destination (multipart, labels and type
// frames) whose transport reads the body and answers 200, so that no
// server's allocations are counted. heap/buckets=N runs with the runtime's
// heap profile grown to at least N buckets (allocations from N distinct
// stacks, made once with MemProfileRate 1), beside runtime/pprof's own
// heap profile writer at the same size.

// discardTransport reads each request's body and answers 200.
type discardTransport struct{}

func (discardTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}

// footprintAgent returns an agent set up as Start would for src and one
// Pyroscope destination that discards what it is sent.
func footprintAgent(b *testing.B, src Source) (*Agent, Uploader) {
	b.Helper()
	py, err := newPyroscope(PyroscopeConfig{URL: "http://pyroscope.invalid:4040", Client: &http.Client{Transport: discardTransport{}}})
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := Config{AppName: "shop", Labels: map[string]string{"env": "prod"}, Sources: []Source{src}, Uploaders: []Uploader{py}}.validate()
	if err != nil {
		b.Fatal(err)
	}
	a := &Agent{cfg: cfg, dests: []*dest{{up: py, name: uploaderName(py)}}}
	if st, ok := src.(starter); ok {
		if err := st.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	return a, py
}

// uploadOnce collects src's profile of one interval as the agent does and
// uploads it to up.
func uploadOnce(b *testing.B, a *Agent, src Source, up Uploader) int {
	ctx := context.Background()
	p, err := collectSource(ctx, src)
	if err != nil || p == nil {
		b.Fatal(err, p == nil)
	}
	u, err := a.newUploadOf(src.Name(), p, time.Unix(0, 0), time.Unix(15, 0))
	if err != nil {
		b.Fatal(err)
	}
	if err := up.Upload(ctx, u); err != nil {
		b.Fatal(err)
	}
	return len(u.Data)
}

func BenchmarkUploadFootprint(b *testing.B) {
	for _, tc := range []struct {
		name string
		src  func(*profiler.Profiler) Source
	}{
		{"arena", ProfilerSource},
		{"peak", PeakSource},
	} {
		b.Run(tc.name+"/stacks=200", func(b *testing.B) {
			setMeanBytes(b, 4096)
			p, err := profiler.Start()
			if err != nil {
				b.Fatal(err)
			}
			defer p.Stop()
			ar := arena.NewArena(arena.WithSeed(9, 10))
			defer ar.Free()
			for typ := range 8 {
				for depth := range 25 {
					allocAt(ar, depth+5, typ, 64<<10)
				}
			}
			src := tc.src(p)
			a, up := footprintAgent(b, src)
			var n int
			b.ReportAllocs()
			for b.Loop() {
				n = uploadOnce(b, a, src, up)
			}
			b.ReportMetric(float64(n), "gz-bytes/upload")
		})
	}
	b.Run("arenas/stacks=200", func(b *testing.B) {
		var ars []*arena.Arena
		for i := range 200 {
			ars = arenaPathL(ars, i, 8)
		}
		defer func() {
			for _, ar := range ars {
				ar.Free()
			}
		}()
		src := ArenasSource()
		a, up := footprintAgent(b, src)
		var n int
		b.ReportAllocs()
		for b.Loop() {
			n = uploadOnce(b, a, src, up)
		}
		b.ReportMetric(float64(n), "gz-bytes/upload")
	})
	for _, buckets := range []int{200, 100000} {
		b.Run(fmt.Sprintf("heap/buckets=%d", buckets), func(b *testing.B) {
			n := growHeapProfile(buckets)
			src := HeapSource()
			a, up := footprintAgent(b, src)
			b.ReportAllocs()
			for b.Loop() {
				uploadOnce(b, a, src, up)
			}
			b.ReportMetric(float64(n), "buckets")
		})
		b.Run(fmt.Sprintf("runtime-pprof/buckets=%d", buckets), func(b *testing.B) {
			n := growHeapProfile(buckets)
			b.ReportAllocs()
			for b.Loop() {
				if err := pprof.Lookup("heap").WriteTo(io.Discard, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n), "buckets")
		})
	}
}

// heapStackSink keeps growHeapProfile's allocations reachable, so that
// each bucket has an object in use and every upload carries it.
var heapStackSink [][]byte

// growHeapProfile makes the runtime's heap profile hold at least n
// buckets, allocating from up to n distinct stacks (one per path through
// a binary tree of calls 17 deep) with MemProfileRate 1, each object kept
// (so that each bucket is in every upload); it returns the number of
// buckets.
func growHeapProfile(n int) int {
	have, _ := runtime.MemProfile(nil, true)
	if have < n {
		old := runtime.MemProfileRate
		runtime.MemProfileRate = 1
		for i := range n - have {
			heapPathL(i, 17)
		}
		runtime.MemProfileRate = old
		runtime.GC()
		runtime.GC()
	}
	have, _ = runtime.MemProfile(nil, true)
	return have
}

// heapPathL and heapPathR call each other down the bits of path, so that
// each path value allocates from its own stack.
//
//go:noinline
func heapPathL(path, depth int) {
	if depth == 0 {
		heapStackSink = append(heapStackSink, make([]byte, 16))
		return
	}
	if path&1 == 0 {
		heapPathL(path>>1, depth-1)
	} else {
		heapPathR(path>>1, depth-1)
	}
}

//go:noinline
func heapPathR(path, depth int) {
	if depth == 0 {
		heapStackSink = append(heapStackSink, make([]byte, 16))
		return
	}
	if path&1 == 0 {
		heapPathL(path>>1, depth-1)
	} else {
		heapPathR(path>>1, depth-1)
	}
}

// arenaPathL and arenaPathR call each other down the bits of path and
// make an arena at the bottom, so that each path value's arena has a
// creating stack of its own (as heapPathL and heapPathR do for the heap:
// one function calling itself from two sites may have them merged); they
// append it to ars.
//
//go:noinline
func arenaPathL(ars []*arena.Arena, path, depth int) []*arena.Arena {
	if depth == 0 {
		ar := arena.NewArena()
		arena.New[typ64](ar)
		return append(ars, ar)
	}
	if path&1 == 0 {
		return arenaPathL(ars, path>>1, depth-1)
	}
	return arenaPathR(ars, path>>1, depth-1)
}

//go:noinline
func arenaPathR(ars []*arena.Arena, path, depth int) []*arena.Arena {
	if depth == 0 {
		ar := arena.NewArena()
		arena.New[typ64](ar)
		return append(ars, ar)
	}
	if path&1 == 0 {
		return arenaPathL(ars, path>>1, depth-1)
	}
	return arenaPathR(ars, path>>1, depth-1)
}
