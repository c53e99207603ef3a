package servicebench

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/cputime"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
	"github.com/arenaprof/arenaprof/profiler"
)

// requests returns n requests of about 300 items each, drawn from a fixed
// seed.
func requests(n int) []string {
	rng := rand.New(rand.NewPCG(1, 2))
	colors := []string{"red", "green", "blue", "black", "white"}
	sizes := []string{"small", "medium", "large"}
	out := make([]string, n)
	for i := range out {
		var sb strings.Builder
		fmt.Fprintf(&sb, "POST /checkout?user=u%d&coupon=SAVE%d&currency=EUR&region=eu-west-%d\n",
			rng.IntN(1e6), rng.IntN(50), rng.IntN(3))
		items := 250 + rng.IntN(100)
		for j := range items {
			if j > 0 {
				sb.WriteByte('\n')
			}
			fmt.Fprintf(&sb, "sku-%06d %d %d", rng.IntN(1e6), 1+rng.IntN(9), 100+rng.IntN(100000))
			if rng.IntN(4) > 0 {
				fmt.Fprintf(&sb, " %s,%s", colors[rng.IntN(len(colors))], sizes[rng.IntN(len(sizes))])
			}
		}
		out[i] = sb.String()
	}
	return out
}

func TestArenaAndHeapAgree(t *testing.T) {
	reqs := requests(8)
	heap := &handler{}
	ar := &handler{pool: arena.NewPool()}
	for i, req := range reqs {
		hs, hn, herr := heap.serve(req)
		as, an, aerr := ar.serve(req)
		if herr != nil || aerr != nil || hs != as || hn != an {
			t.Fatalf("request %d: heap (%x, %d, %v), arena (%x, %d, %v)", i, hs, hn, herr, as, an, aerr)
		}
		if hn < 10000 || hn > ResponseBuffer {
			t.Fatalf("request %d: response of %d bytes, want a realistic size within the buffer", i, hn)
		}
	}
	for _, bad := range []string{"", "GET", "GET /x?a=b\nsku 1", "GET /x?a=b\nsku x 3"} {
		if _, _, err := ar.serve(bad); err == nil {
			t.Errorf("serve(%q): no error", bad)
		}
	}
}

var serviceSink atomic.Uint64

// BenchmarkService runs the request handler from GOMAXPROCS goroutines on
// the heap and on an arena.Pool, at three sampling settings:
//
//   - impl=heap: runtime.MemProfileRate 0 (sampling=off), Go's default of
//     512 KiB (sampling=default: what a service runs with) or 4096
//     (sampling=4096);
//   - impl=arena: the arena profiler off (sampling=off), on at the default
//     mean of 100 KiB (sampling=default) or at a mean of 4096 bytes
//     (sampling=4096), with runtime.MemProfileRate at Go's default
//     throughout.
//
// Metrics: ns/op is wall time per request over all goroutines;
// cpu-ns/op is the process's CPU time per request (getrusage: the
// handler, the garbage collector and the profiler together); B/op is heap
// bytes per request; gc/1000req is GC cycles per 1000 requests.
func BenchmarkService(b *testing.B) {
	reqs := requests(64)
	for _, impl := range []string{"heap", "arena"} {
		for _, sampling := range []string{"off", "default", "4096"} {
			b.Run("impl="+impl+"/sampling="+sampling, func(b *testing.B) {
				h := &handler{}
				if impl == "heap" {
					rate := map[string]int{"off": 0, "default": 512 << 10, "4096": 4096}[sampling] // 512 KiB: Go's default
					old := runtime.MemProfileRate
					runtime.MemProfileRate = rate
					b.Cleanup(func() { runtime.MemProfileRate = old })
				} else {
					h.pool = arena.NewPool()
					switch sampling {
					case "default":
						setMean(b, samplingstate.DefaultMeanBytes)
						startProfiler(b)
					case "4096":
						setMean(b, 4096)
						startProfiler(b)
					}
				}
				benchService(b, h, reqs)
			})
		}
	}
}

func benchService(b *testing.B, h *handler, reqs []string) {
	for _, r := range reqs { // warm the pool and the caches
		if _, _, err := h.serve(r); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cputime.Process()
	b.ReportAllocs()
	b.ResetTimer()
	var next atomic.Uint64
	b.RunParallel(func(pb *testing.PB) {
		var sum uint64
		for pb.Next() {
			s, _, err := h.serve(reqs[next.Add(1)%uint64(len(reqs))])
			if err != nil {
				panic(err)
			}
			sum += s
		}
		serviceSink.Add(sum)
	})
	b.StopTimer()
	cpu := cputime.Process() - cpu0
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(m1.NumGC-m0.NumGC)*1000/float64(b.N), "gc/1000req")
}

func setMean(tb testing.TB, n int64) {
	prev := hooks.MeanBytes()
	if err := hooks.SetMeanBytes(n); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { hooks.SetMeanBytes(prev) })
}

func startProfiler(tb testing.TB) {
	p, err := profiler.Start()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(p.Stop)
}
