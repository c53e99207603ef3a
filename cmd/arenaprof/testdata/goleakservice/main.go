// Command goleakservice leaks goroutines, some holding arenas, and serves
// arenaprof.Start's Mux on 127.0.0.1: the truth for reading goroutine
// leaks (Go 1.27 on, or Go 1.26 built with
// GOEXPERIMENT=goroutineleakprofile).
//
//	goleakservice HOLDERS CHUNK [PACE RATE]
//
// It prints its base URL and the truth, one JSON line (with its Go
// version and whether its runtime has the goroutine leak profile), then
// serves until killed. With PACE (a duration) and RATE (MemProfileRate,
// set first), it also leaks goroutines in bursts from the start
// (heldLeaker, up to 100,000): burstSize at once, every 10 to 60 PACEs
// (uniformly, from a fixed seed), each holding one Go heap buffer of
// heldBytes allocated in heldBuffer (the truth: heldBytes per leaked
// goroutine at that site). Every PACE, a live goroutine replaces one of a
// ring of steadyBuffers buffers of 16 KiB, allocated in steadyBuffer (a
// control: steady in-use, not per goroutine), and keeps one more 16 KiB
// buffer allocated in ownBuffer for good (a leak of its own, growing at a
// steady pace beside the goroutines, not held by them).
// Goroutines, all waiting on a channel:
//
//   - HOLDERS take an arena from a pool, fill half of one chunk of CHUNK
//     bytes and wait on a channel nobody else can reach (leaked);
//   - deepHolders do the same a few calls deeper (leaked);
//   - returners take an arena and Put it back, then wait (leaked);
//   - waiters take no arena and wait (leaked);
//   - busyOnes take an arena and wait on a channel a global keeps: not
//     leaked (it may still be sent on), their arenas held by live
//     goroutines.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"

	"github.com/arenaprof/arenaprof"
	"github.com/arenaprof/arenaprof/arena"
)

const (
	deepHolders = 2
	returners   = 2
	waiters     = 3
	busyOnes    = 4
)

// heldBytes is what each heldLeaker goroutine holds; steadyBuffers the
// control's ring.
const (
	heldBytes     = 64 << 10
	steadyBuffers = 32
	burstSize     = 10
)

//go:noinline
func heldBuffer() []byte { return make([]byte, heldBytes) }

//go:noinline
func steadyBuffer() []byte { return make([]byte, 16<<10) }

//go:noinline
func ownBuffer() []byte { return make([]byte, 16<<10) }

// heldLeaker holds a heap buffer and waits on a channel nobody else can
// reach: leaked, with its buffer.
func heldLeaker() {
	b := heldBuffer()
	b[0] = 1
	never := make(chan int)
	<-never
	runtime.KeepAlive(b)
}

// ring is the control's buffers, kept by a global; own the leak of its
// own.
var (
	ring [steadyBuffers][]byte
	own  [][]byte
)

// leakAndChurn starts burstSize heldLeakers at once every 10 to 60
// paces, and every pace replaces one of the ring's buffers and keeps one
// more of its own.
func leakAndChurn(pace time.Duration) {
	r := rand.New(rand.NewPCG(46, 1))
	t := time.NewTicker(pace)
	next := 0
	for i, leaked := 0, 0; leaked < 100_000; i++ {
		if i == next {
			for range burstSize {
				go heldLeaker()
			}
			leaked += burstSize
			next += 10 + r.IntN(51)
		}
		ring[i%steadyBuffers] = steadyBuffer()
		own = append(own, ownBuffer())
		<-t.C
	}
}

// keep is reachable from a global: the goroutines blocked on it are not
// leaked.
var keep = make(chan int)

// busyArenas keeps the busy goroutines' arenas reachable too.
var busyArenas []*arena.Arena

func holder(p *arena.Pool, n int, ready *sync.WaitGroup) {
	a := p.Get(context.Background())
	b := arena.MakeSlice[byte](a, n, n)
	b[n-1] = 1
	never := make(chan int)
	ready.Done()
	<-never // leaked here, holding a
	p.Put(a)
}

func deepHolder(p *arena.Pool, n int, ready *sync.WaitGroup, depth int) {
	if depth > 0 {
		deepHolder(p, n, ready, depth-1)
		return
	}
	holder(p, n, ready)
}

func returner(p *arena.Pool, n int, ready *sync.WaitGroup) {
	a := p.Get(context.Background())
	arena.MakeSlice[byte](a, n, n)[0] = 1
	p.Put(a)
	never := make(chan int)
	ready.Done()
	<-never // leaked here, holding nothing
}

func waiter(ready *sync.WaitGroup) {
	never := make(chan struct{})
	ready.Done()
	<-never
}

func busy(p *arena.Pool, n int, ready *sync.WaitGroup, mu *sync.Mutex) {
	a := p.Get(context.Background())
	arena.MakeSlice[byte](a, n, n)[0] = 1
	mu.Lock()
	busyArenas = append(busyArenas, a)
	mu.Unlock()
	ready.Done()
	<-keep
	p.Put(a)
}

func main() {
	if len(os.Args) != 3 && len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: goleakservice HOLDERS CHUNK [PACE RATE]")
		os.Exit(2)
	}
	var pace time.Duration
	if len(os.Args) == 5 {
		var err1, err2 error
		pace, err1 = time.ParseDuration(os.Args[3])
		runtime.MemProfileRate, err2 = strconv.Atoi(os.Args[4])
		if err1 != nil || err2 != nil || pace <= 0 || runtime.MemProfileRate <= 0 {
			fmt.Fprintln(os.Stderr, "goleakservice: want PACE > 0 (a duration) and RATE > 0")
			os.Exit(2)
		}
	}
	holders, err1 := strconv.Atoi(os.Args[1])
	chunk, err2 := strconv.Atoi(os.Args[2])
	if err1 != nil || err2 != nil || holders < 0 || chunk < 1024 {
		fmt.Fprintln(os.Stderr, "goleakservice: want HOLDERS >= 0 and CHUNK >= 1024")
		os.Exit(2)
	}
	mux := http.NewServeMux()
	if _, err := arenaprof.Start(arenaprof.Config{Mux: mux}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	p := arena.NewPool(arena.WithChunkSize(chunk))
	n := chunk / 2 // one chunk per arena
	var ready sync.WaitGroup
	var mu sync.Mutex
	ready.Add(holders + deepHolders + returners + waiters + busyOnes)
	for range holders {
		go holder(p, n, &ready)
	}
	for range deepHolders {
		go deepHolder(p, n, &ready, 3)
	}
	for range returners {
		go returner(p, n, &ready)
	}
	for range waiters {
		go waiter(&ready)
	}
	for range busyOnes {
		go busy(p, n, &ready, &mu)
	}
	ready.Wait()
	if pace > 0 {
		go leakAndChurn(pace)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	truth, _ := json.Marshal(map[string]any{"holders": holders, "deep_holders": deepHolders, "returners": returners,
		"waiters": waiters, "busy": busyOnes, "chunk": chunk, "held_bytes": heldBytes,
		"go": runtime.Version(), "leak_profile": pprof.Lookup("goroutineleak") != nil})
	fmt.Printf("http://%s %s\n", ln.Addr(), truth)
	http.Serve(ln, mux)
}
