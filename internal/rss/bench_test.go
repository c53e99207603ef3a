package rss

import (
	"runtime"
	"sync"
	"syscall"
	"testing"

	"github.com/arenaprof/arenaprof/internal/cputime"
)

// benchSink keeps the heap objects of BenchmarkRead's buckets.
var benchSink [][]byte

// BenchmarkRead measures one read and classification (Read, Classify) on
// a process of 10,000 parked goroutines, 500 more mappings and 1,000
// heap-profile buckets, the goal: at most 10 ms of CPU and
// 1 MiB allocated. BenchmarkProfile adds building the profile.
func BenchmarkRead(b *testing.B) {
	stop := benchProcess(b)
	defer stop()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cputime.Process()
	for b.Loop() {
		Classify(Read())
	}
	b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkProfile is BenchmarkRead and the profile built from it.
func BenchmarkProfile(b *testing.B) {
	stop := benchProcess(b)
	defer stop()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cputime.Process()
	for b.Loop() {
		r := Read()
		if _, err := Profile(r, Classify(r)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}

// benchProcess sets up the goroutines, mappings and heap buckets.
func benchProcess(b *testing.B) (stop func()) {
	b.Helper()
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1 // every allocation recorded: one bucket per site
	park := make(chan struct{})
	var wg sync.WaitGroup
	for range 10000 {
		wg.Add(1)
		go func() { defer wg.Done(); <-park }()
	}
	var maps [][]byte
	for i := range 520 {
		// Alternate protections so that the kernel keeps them apart.
		prot := syscall.PROT_READ
		if i%2 == 0 {
			prot |= syscall.PROT_WRITE
		}
		m, err := syscall.Mmap(-1, 0, 8192, prot, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			b.Fatal(err)
		}
		maps = append(maps, m)
	}
	buckets(1000)
	runtime.MemProfileRate = old
	runtime.GC()
	runtime.GC()
	return func() {
		close(park)
		wg.Wait()
		for _, m := range maps {
			syscall.Munmap(m)
		}
		benchSink = nil
	}
}

// buckets allocates from n distinct stacks: the recursion depth tells
// them apart.
func buckets(n int) {
	for i := range n {
		depthAlloc(i%40, i/40)
	}
}

//go:noinline
func depthAlloc(depth, kind int) {
	if depth > 0 {
		depthAlloc(depth-1, kind)
		return
	}
	switch kind % 25 {
	case 0:
		benchSink = append(benchSink, make([]byte, 16))
	case 1:
		benchSink = append(benchSink, make([]byte, 32))
	case 2:
		benchSink = append(benchSink, make([]byte, 48))
	case 3:
		benchSink = append(benchSink, make([]byte, 64))
	case 4:
		benchSink = append(benchSink, make([]byte, 80))
	case 5:
		benchSink = append(benchSink, make([]byte, 96))
	case 6:
		benchSink = append(benchSink, make([]byte, 112))
	case 7:
		benchSink = append(benchSink, make([]byte, 128))
	case 8:
		benchSink = append(benchSink, make([]byte, 144))
	case 9:
		benchSink = append(benchSink, make([]byte, 160))
	case 10:
		benchSink = append(benchSink, make([]byte, 176))
	case 11:
		benchSink = append(benchSink, make([]byte, 192))
	case 12:
		benchSink = append(benchSink, make([]byte, 208))
	case 13:
		benchSink = append(benchSink, make([]byte, 224))
	case 14:
		benchSink = append(benchSink, make([]byte, 240))
	case 15:
		benchSink = append(benchSink, make([]byte, 256))
	case 16:
		benchSink = append(benchSink, make([]byte, 288))
	case 17:
		benchSink = append(benchSink, make([]byte, 320))
	case 18:
		benchSink = append(benchSink, make([]byte, 352))
	case 19:
		benchSink = append(benchSink, make([]byte, 384))
	case 20:
		benchSink = append(benchSink, make([]byte, 416))
	case 21:
		benchSink = append(benchSink, make([]byte, 448))
	case 22:
		benchSink = append(benchSink, make([]byte, 480))
	case 23:
		benchSink = append(benchSink, make([]byte, 512))
	default:
		benchSink = append(benchSink, make([]byte, 576))
	}
}

// TestBenchProcess checks that the benchmark's process has what it says:
// 1,000 heap buckets at least and 500 more mappings.
func TestBenchProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 10,000 goroutines")
	}
	before := Read()
	stop := benchProcess(&testing.B{})
	defer stop()
	r := Read()
	if len(r.Heap) < 1000 {
		t.Errorf("%d heap records, want 1000 at least", len(r.Heap))
	}
	if d := r.maps.mappings - before.maps.mappings; d < 500 {
		t.Errorf("%d more mappings, want 500", d)
	}
}

// BenchmarkWatchTick is what the peak watch costs at each tick while the
// RSS makes no new high: one read of /proc/self/statm and the compare
// (4 a second: cpu-ms/op times 4 is its CPU per second).
func BenchmarkWatchTick(b *testing.B) {
	stop := Watch()
	defer stop()
	buf := make([]byte, 256)
	check(buf) // the first peak
	b.ReportAllocs()
	cpu := cputime.Process()
	for b.Loop() {
		check(buf)
	}
	b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}
