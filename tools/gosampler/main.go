// Command gosampler shows, with nothing but the standard library, that the
// Go runtime's heap profile undercounts the allocation that follows each
// sample, since Go 1.24.
//
// runtime/malloc.go (Go 1.24 to 1.27) takes each allocation's size off the
// per-P counter c.nextSample and samples when it goes below zero:
//
//	c.nextSample -= int64(size)
//	if c.nextSample < 0 || MemProfileRate != c.memProfRate {
//		profilealloc(mp, x, size)
//	}
//
// while nextSample() returns int32(E)+1 for E exponential of mean R =
// MemProfileRate. So the first allocation after a sample, of S bytes, is
// sampled with probability 1-exp(-(S-1)/R), not 1-exp(-S/R), and
// runtime/pprof scales every sample by 1/(1-exp(-S/R)): profiles fall one
// byte short per sample (1/R of the bytes of small objects, 0.2% at
// R = 512), and an allocation that always follows a sampled one is
// undercounted by about 1/S. The fix is one character in each of those
// tests, "< 0" to "<= 0" (then an object is sampled when E < S, as in Go
// 1.23, whose test was "size < c.nextSample").
//
// This program allocates pairs of a 4096-byte object (at R = 512 sampled
// with probability 1-exp(-8) = 0.9997) and an 8-byte one, which therefore
// nearly always follows a sample, and a run of 16-byte objects, then reads
// runtime.MemProfile and scales each record as runtime/pprof does.
//
// Usage: go run ./tools/gosampler [-pairs N] [-run N]
package main

import (
	"flag"
	"fmt"
	"math"
	"runtime"
	"strings"
)

const rate = 512

// sink makes each allocation escape to the heap.
//
//lint:ignore U1000 written only: the writes are what matters
var sink any

//lint:ignore U1000 p gives the type its size and a pointer; it is never read
type p8 struct{ p *int } // 8 bytes, pointerful: not from the tiny allocator

//go:noinline
func pairs(n int) {
	for range n {
		sink = new([4096]byte)
		small()
	}
}

//go:noinline
func small() { sink = new(p8) }

//go:noinline
func run16(n int) {
	for range n {
		sink = new([16]byte)
	}
}

func main() {
	runtime.MemProfileRate = rate
	n := flag.Int("pairs", 2_000_000, "pairs of a 4096-byte and an 8-byte object")
	m := flag.Int("run", 16_000_000, "16-byte objects allocated in a run")
	flag.Parse()
	pairs(*n)
	run16(*m)
	sink = nil
	runtime.GC()
	runtime.GC()

	var recs []runtime.MemProfileRecord
	for {
		k, ok := runtime.MemProfile(recs, true)
		if ok {
			recs = recs[:k]
			break
		}
		recs = make([]runtime.MemProfileRecord, k+100)
	}
	got := map[string]float64{}
	for _, r := range recs {
		if r.AllocObjects == 0 {
			continue
		}
		size := r.AllocBytes / r.AllocObjects
		// The first frame outside the runtime is the site.
		frames := runtime.CallersFrames(r.Stack())
		var fn string
		for {
			fr, more := frames.Next()
			if !strings.HasPrefix(fr.Function, "runtime.") {
				fn = fr.Function
				break
			}
			if !more {
				break
			}
		}
		name := fn[strings.LastIndexByte(fn, '.')+1:]
		key := fmt.Sprintf("%s/%d", name, size)
		// runtime/pprof's scaling (scaleHeapSample)
		got[key] += float64(r.AllocBytes) / (1 - math.Exp(-float64(size)/rate))
	}
	fmt.Printf("%s, MemProfileRate %d\n", runtime.Version(), rate)
	fmt.Printf("%-26s %14s %14s %9s %22s\n", "site/object size", "true bytes", "profile says", "error", "expected (go1.24 rule)")
	row := func(key string, truth, size float64, after bool) {
		r := float64(rate)
		q := math.Exp(-size / r)
		// Expected error of runtime/pprof's scaling under the Go 1.24 rule:
		// for objects that always follow a sample, (1-exp(-(S-1)/R))/(1-q)-1;
		// for a run of one size, 1/(1+(e^(1/R)-1)q) - 1.
		exp := 1/(1+(math.Exp(1/r)-1)*q) - 1
		if after {
			exp = -math.Expm1(-(size-1)/r)/(1-q) - 1
		}
		fmt.Printf("%-26s %14.0f %14.0f %+8.2f%% %+21.2f%%\n", key, truth, got[key], 100*(got[key]/truth-1), 100*exp)
	}
	row("pairs/4096", float64(*n)*4096, 4096, false)
	row("small/8", float64(*n)*8, 8, true)
	row("run16/16", float64(*m)*16, 16, false)
	fmt.Println("sampling error (one standard deviation): about 0.8% for small/8, 0.14% for run16/16")
}
