// Command truth is a program of known resident memory, run as a child
// process by internal/rss's TestTruth: heap objects of known bytes at
// three sites, parked goroutines, arenas holding known bytes, an
// anonymous mapping partly touched, a mapped file partly read and, built
// with cgo, C memory from malloc. It serves its resident-memory profile
// (export.RSSHandler), prints one JSON line of what it holds and the
// address, and exits when its standard input closes.
package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
)

// truth is what the program holds, in bytes.
type truth struct {
	Addr       string           `json:"addr"`
	Sites      map[string]int64 `json:"sites"` // heap bytes by allocating function
	Goroutines int              `json:"goroutines"`
	ArenaUsed  int64            `json:"arena_used"`
	ArenaHeap  int64            `json:"arena_heap"`
	Mmap       int64            `json:"mmap"` // anonymous bytes touched
	File       int64            `json:"file"` // file bytes read through a mapping
	CMalloc    int64            `json:"cmalloc"`
	// Keep is the heap bytes of the slice keeping the sites' objects.
	Keep int64 `json:"keep"`
}

var (
	keep   [][]byte
	arenas []*arena.Arena
	sink   byte
)

func fill(b []byte) {
	for i := range b {
		b[i] = byte(i)
	}
}

//go:noinline
func allocSmall(n int) int64 {
	for range n {
		b := make([]byte, 64)
		fill(b)
		keep = append(keep, b)
	}
	return int64(n) * 64
}

//go:noinline
func allocMid(n int) int64 {
	for range n {
		b := make([]byte, 1024)
		fill(b)
		keep = append(keep, b)
	}
	return int64(n) * 1024
}

//go:noinline
func allocLarge(n int) int64 {
	for range n {
		b := make([]byte, 256<<10)
		fill(b)
		keep = append(keep, b)
	}
	return int64(n) * (256 << 10)
}

func main() {
	var t truth
	keep = make([][]byte, 0, 220064)
	t.Keep = (int64(cap(keep))*24 + 8191) &^ 8191 // a large object: whole 8 KiB pages
	t.Sites = map[string]int64{
		"main.allocSmall": allocSmall(200000),
		"main.allocMid":   allocMid(20000),
		"main.allocLarge": allocLarge(64),
	}
	// Parked goroutines.
	park := make(chan struct{})
	t.Goroutines = 2000
	for range t.Goroutines {
		go func() { <-park }()
	}
	// Arenas holding known bytes, touched: 4 arenas of 128 slices of
	// 32 KiB, two to each 64 KiB chunk, whose heap allocation (64 KiB and
	// 8 bytes of slack) takes 72 KiB.
	for range 4 {
		a := arena.NewArena()
		for range 128 {
			fill(arena.MakeSlice[byte](a, 32<<10, 32<<10))
		}
		t.ArenaUsed += 128 * 32 << 10
		t.ArenaHeap += 64 * 72 << 10
		arenas = append(arenas, a)
	}
	// An anonymous mapping of 64 MiB, 24 MiB of it touched.
	m, err := syscall.Mmap(-1, 0, 64<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		panic(err)
	}
	t.Mmap = 24 << 20
	fill(m[:t.Mmap])
	// A file of 32 MiB mapped, 8 MiB of it read.
	dir, err := os.MkdirTemp("", "truth")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "data")
	if err := os.WriteFile(path, make([]byte, 32<<20), 0o600); err != nil {
		panic(err)
	}
	f, err := os.Open(path)
	if err != nil {
		panic(err)
	}
	fm, err := syscall.Mmap(int(f.Fd()), 0, 32<<20, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		panic(err)
	}
	t.File = 8 << 20
	for i := 0; i < int(t.File); i += 4096 {
		sink += fm[i]
	}
	t.CMalloc = cmalloc(16 << 20)
	runtime.GC()
	runtime.GC() // the heap profile is that of the last completed cycle

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	t.Addr = ln.Addr().String()
	go http.Serve(ln, export.RSSHandler())
	json.NewEncoder(os.Stdout).Encode(t)
	var buf [1]byte
	os.Stdin.Read(buf[:])
	runtime.KeepAlive(m)
	runtime.KeepAlive(fm)
	close(park)
}
