package export_test

import (
	"github.com/arenaprof/arenaprof/internal/pprofmt"

	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/estimate"
)

type accPtr struct {
	p *int
	x [6]int64
}

var (
	accSink16   *[16]byte
	accSink128  *[128]byte
	accSink1000 *[1000]byte
	accSink4096 *[4096]byte
	accSinkPtr  *accPtr
	accSinkS    []int32
)

// accuracyWorkload allocates n objects from each of six lines; the marker
// comments let the test find the lines in this file.
//
//go:noinline
func accuracyWorkload(a *arena.Arena, n int) {
	for range 8 * n {
		accSink16 = arena.New[[16]byte](a) // acc:[16]uint8
	}
	for range 2 * n {
		accSink128 = arena.New[[128]byte](a) // acc:[128]uint8
	}
	for range n / 2 {
		accSink1000 = arena.New[[1000]byte](a) // acc:[1000]uint8
	}
	for range n / 4 {
		accSink4096 = arena.New[[4096]byte](a) // acc:[4096]uint8
	}
	for range 2 * n {
		accSinkPtr = arena.New[accPtr](a) // acc:export_test.accPtr
	}
	for range n {
		accSinkS = arena.MakeSlice[int32](a, 50, 50) // acc:[]int32
	}
}

// accuracyLines maps each marker's type to its line number in this file.
func accuracyLines(t *testing.T) map[string]int {
	src, err := os.ReadFile("accuracy_test.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]int{}
	for i, l := range strings.Split(string(src), "\n") {
		if _, typ, ok := strings.Cut(l, "// acc:"); ok && !strings.Contains(l, "strings.Cut") {
			lines[typ] = i + 1
		}
	}
	return lines
}

// Accuracy in the spirit of Go's test/heapsampling.go, through real arenas
// at a small mean: for each of six source lines (objects of 16 bytes to
// 4 KiB, the mean is 1 KiB; byte chunks, typed slabs and slices), the true
// bytes and objects lie inside the line's exact interval, and the leaf
// frame of the line's samples is that line.
//
// False failures: the six intervals are taken at 1 - 1e-6/7 each and the
// six estimate checks at 7 sigma (normal approximation, over 400 events per
// line; two-sided tail 2.6e-12 each), so by the union bound all checks hold
// together with probability at least 1 - 1e-6 for a random seed. The seeds
// are fixed, so the test is deterministic.
func TestAccuracyArena(t *testing.T) {
	const mean = 1024
	n := 20000
	if testing.Short() {
		n = 5000
	}
	setMeanBytes(t, mean)
	p := startProfiler(t)
	lines := accuracyLines(t)
	a := arena.NewArena(arena.WithSeed(12345, 678))
	accuracyWorkload(a, n)

	prof := roundTrip(t, must(export.Build(p.Snapshot())))
	w := pprofmt.WindowOf(prof)
	counts := map[string]int{"[16]uint8": 8 * n, "[128]uint8": 2 * n, "[1000]uint8": n / 2, "[4096]uint8": n / 4,
		reflect.TypeFor[accPtr]().String(): 2 * n, "[]int32": n}
	if len(counts) != 6 || len(lines) != 6 {
		t.Fatalf("markers %v", lines)
	}
	type agg struct {
		s, u, size int64
		bytes      float64
		objects    float64
		samples    []*profile.Sample
	}
	byType := map[string]*agg{}
	for _, s := range prof.Sample {
		typ := s.Label["type"][0]
		g := byType[typ]
		if g == nil {
			g = &agg{size: s.NumLabel["bytes"][0]}
			byType[typ] = g
		}
		if s.NumLabel["bytes"][0] != g.size || s.NumLabel["sampling_mean"][0] != mean {
			t.Errorf("%s: mixed sizes or means %v", typ, s.NumLabel)
		}
		g.s += s.Value[pprofmt.IndexAllocSamples]
		g.u += s.Value[pprofmt.IndexAllocTail]
		g.bytes += float64(s.Value[pprofmt.IndexAllocSpace])
		g.objects += float64(s.Value[pprofmt.IndexAllocObjects])
		g.samples = append(g.samples, s)
	}
	conf := 1 - 1e-6/7
	for typ, cnt := range counts {
		g := byType[typ]
		if g == nil {
			t.Errorf("%s: no samples", typ)
			continue
		}
		truthObj := float64(cnt)
		truth := truthObj * float64(g.size)
		iv, err := estimate.SingleMeanInterval(g.s, g.u, mean, conf, w)
		if err != nil {
			t.Fatal(err)
		}
		if truth < iv.Lo || truth > iv.Hi {
			t.Errorf("%s: true bytes %v outside [%v, %v] (s=%d)", typ, truth, iv.Lo, iv.Hi, g.s)
		}
		if lo, hi := iv.Lo/float64(g.size), iv.Hi/float64(g.size); truthObj < lo || truthObj > hi {
			t.Errorf("%s: true objects %v outside [%v, %v]", typ, truthObj, lo, hi)
		}
		// The weighted estimate: each object is sampled with probability
		// pi = 1-q^size and then weighs size/pi, so the variance of the sum
		// is cnt*size^2*(1-pi)/pi.
		pi := -math.Expm1(float64(g.size) * math.Log1p(-1.0/mean))
		sd := math.Sqrt(truthObj * float64(g.size*g.size) * (1 - pi) / pi)
		if math.Abs(g.bytes-truth) > 7*sd+float64(len(g.samples)) {
			t.Errorf("%s: estimate %v, truth %v, sd %v", typ, g.bytes, truth, sd)
		}
		if math.Abs(g.objects*float64(g.size)-g.bytes) > float64(g.size)*float64(len(g.samples)) {
			t.Errorf("%s: objects %v inconsistent with bytes %v", typ, g.objects, g.bytes)
		}
		t.Logf("%-24s size %5d: %5d events, estimate %.4g (truth %.4g), interval [%.4g, %.4g]", typ, g.size, g.s, g.bytes, truth, iv.Lo, iv.Hi)

		marker := strings.TrimPrefix(typ, "github.com/arenaprof/arenaprof/")
		line, ok := lines[marker]
		if !ok {
			t.Errorf("%s: no marker line", typ)
		}
		for _, s := range g.samples {
			leaf := s.Location[0].Line[0]
			if leaf.Function.Name != pkgPath+"accuracyWorkload" || leaf.Line != int64(line) ||
				filepath.Base(leaf.Function.Filename) != "accuracy_test.go" {
				t.Errorf("%s: leaf %s %s:%d, want accuracyWorkload line %d (stack %v)",
					typ, leaf.Function.Name, leaf.Function.Filename, leaf.Line, line, frames(s))
			}
			for _, f := range frames(s) {
				if strings.HasPrefix(f, "github.com/arenaprof/arenaprof/arena.") {
					t.Errorf("%s: allocator frame %s in %v", typ, f, frames(s))
				}
			}
		}
	}

	// Resetting the arena empties the in-use view.
	a.Reset()
	if v := sumValues(roundTrip(t, must(export.Build(p.Snapshot())))); v[pprofmt.IndexInuseSpace] != 0 || v[pprofmt.IndexInuseObjects] != 0 {
		t.Errorf("in-use after Reset: %v", v)
	}
}

//go:noinline
func concurrentWorkload(a *arena.Arena, n int) (sum int64) {
	for range n {
		x := arena.New[accPtr](a)
		s := arena.MakeSlice[int32](a, 10, 10)
		x.x[0] = int64(len(s))
		sum += x.x[0]
	}
	return sum
}

// Many goroutines allocate from their own arenas and reset them while
// profiles are built and written; run with -race. Every goroutine's last
// batch stays live, so in-use equals what was allocated after the last
// resets.
func TestConcurrentArenas(t *testing.T) {
	setMeanBytes(t, 1)
	p := startProfiler(t)
	workers, rounds := 12, 30
	if testing.Short() {
		rounds = 8
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	built := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				built <- n
				return
			default:
				if err := export.Write(io.Discard, p.Snapshot()); err != nil {
					t.Error(err)
				}
				n++
			}
		}
	}()
	// The arenas stay reachable until the profile is built: a dropped arena
	// is released by the garbage collector, and its objects leave in-use.
	arenas := make([]*arena.Arena, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := arena.NewArena(arena.WithSeed(uint64(w), 9), arena.WithLabels(hooks.NewLabels("worker", strconv.Itoa(w%3))))
			arenas[w] = a
			for range rounds {
				concurrentWorkload(a, 20)
				a.Reset()
			}
			concurrentWorkload(a, 5)
		}()
	}
	wg.Wait()
	close(stop)
	t.Logf("%d profiles written during the run", <-built)
	v := sumValues(roundTrip(t, must(export.Build(p.Snapshot()))))
	runtime.KeepAlive(arenas)
	wantN := int64(workers * (rounds*20 + 5) * 2)
	if v[pprofmt.IndexAllocSamples] != wantN || v[pprofmt.IndexInuseObjects] != int64(workers*5*2) {
		t.Errorf("values %v, want %d samples and %d live objects", v, wantN, workers*10)
	}
}
