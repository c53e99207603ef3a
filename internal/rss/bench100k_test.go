package rss

import (
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/arenaprof/arenaprof/internal/cputime"
	"github.com/arenaprof/arenaprof/internal/pprofenc"
)

// BenchmarkUpload100k compares, in one run on one process of 100,000
// heap-profile buckets, one read of the resident-memory profile as its
// handler serves it (Read, Classify, Profile, gzipped with a reused
// pprofenc.Writer) with the agent's Go heap upload of the same process
// (pprofenc.HeapDelta's Read and WriteGzip, as export/agent's heap source
// does it): the goal "no slower than the agent's Go heap upload of the
// same". Both keep their state between reads, as a long-running service
// does. The buckets stay for the life of the process: run it alone
// (-bench Upload100k), or the 1,000-bucket benchmarks see them too.
func BenchmarkUpload100k(b *testing.B) {
	stop := bigProcess(b, 100000)
	defer stop()
	b.Run("rss", func(b *testing.B) {
		var wr pprofenc.Writer
		read := func() {
			r := Read()
			p, err := Profile(r, Classify(r))
			if err != nil {
				b.Fatal(err)
			}
			if err := wr.WriteGzip(io.Discard, p, nil); err != nil {
				b.Fatal(err)
			}
		}
		read() // the first read symbolizes: a service pays it once
		b.ReportAllocs()
		cpu := cputime.Process()
		for b.Loop() {
			read()
		}
		b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
	})
	b.Run("heap", func(b *testing.B) {
		h := pprofenc.NewHeapDelta()
		upload := func() {
			if err := h.Read(nil); err != nil {
				b.Fatal(err)
			}
			if err := h.WriteGzip(io.Discard, nil); err != nil {
				b.Fatal(err)
			}
		}
		upload() // the first upload symbolizes: the agent pays it once
		b.ReportAllocs()
		cpu := cputime.Process()
		for b.Loop() {
			upload()
		}
		b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
	})
}

// bigSink keeps the objects of bigProcess's buckets.
var bigSink [][]byte

// bigProcess allocates one live object from each of n distinct stacks
// (n <= 2^20), at MemProfileRate 1 so that each is a bucket of the heap
// profile with an object in use.
func bigProcess(b *testing.B, n int) (stop func()) {
	b.Helper()
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	bigSink = make([][]byte, 0, n)
	for i := range n {
		branch(i, 20)
	}
	runtime.MemProfileRate = old
	runtime.GC()
	runtime.GC()
	return func() { bigSink = nil }
}

// branch allocates at the end of a path of levels calls whose call sites
// spell the bits of i: each i has a stack of its own.
//
//go:noinline
func branch(i, levels int) {
	switch {
	case levels == 0:
		bigSink = append(bigSink, make([]byte, 16))
	case i&1 == 0:
		branch(i>>1, levels-1)
	default:
		branch(i>>1, levels-1)
	}
}

// TestBigProcess checks that bigProcess makes the buckets it says: n
// heap records in use allocated under branch.
func TestBigProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("makes heap buckets that stay for the process's life")
	}
	stop := bigProcess(&testing.B{}, 5000)
	defer stop()
	n := 0
	for _, h := range Read().Heap {
		for _, pc := range h.Stack {
			if f := runtime.FuncForPC(pc - 1); f != nil && strings.HasSuffix(f.Name(), "rss.branch") {
				n++
				break
			}
		}
	}
	if n != 5000 {
		t.Errorf("%d heap records in use allocated under branch, want 5000", n)
	}
}
