// Command truth is a program of known resident memory, run as a child
// process by internal/rss's TestTruth: heap objects of known bytes at
// three sites, parked goroutines, arenas holding known bytes, an
// anonymous mapping partly touched, a mapped file partly read and, built
// with cgo, C memory from malloc. It serves its resident-memory profile
// (export.RSSHandler), prints one JSON line of what it holds, what of it
// is resident (measured page by page) and the address, then one JSON line
// of what is resident for each line read from its standard input, and
// exits when its standard input closes.
package main

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"unsafe"

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
	// Resident is what is resident when the line is printed.
	Resident resident `json:"resident"`
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
	// Arenas holding known bytes, every page of their chunks written: 4
	// arenas of 64 chunks of 72 KiB - 8 bytes, each filled by two slices
	// (of 36 KiB and 36 KiB - 8 bytes: the arena rounds sizes up to 8
	// bytes), whose heap allocation (the chunk and 8 bytes of slack) is
	// 72 KiB, whole pages. (With the default 64 KiB chunks the allocation's last
	// 8 KiB hold only the slack: written by the runtime when it reuses
	// memory, never touched when the memory is fresh from the OS.)
	const chunk = 72<<10 - 8
	var chunks [][]byte
	for range 4 {
		a := arena.NewArena(arena.WithChunkSize(chunk))
		for range 64 {
			s1 := arena.MakeSlice[byte](a, 36<<10, 36<<10)
			s2 := arena.MakeSlice[byte](a, chunk-36<<10, chunk-36<<10)
			fill(s1)
			fill(s2)
			base := unsafe.SliceData(s1)
			if uintptr(unsafe.Pointer(base))%8192 != 0 || unsafe.Pointer(unsafe.SliceData(s2)) != unsafe.Add(unsafe.Pointer(base), 36<<10) {
				panic("the two slices do not fill one chunk from its start")
			}
			chunks = append(chunks, unsafe.Slice(base, chunk+8))
		}
		t.ArenaUsed += 64 * chunk
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
	c := cmalloc(16 << 20)
	t.CMalloc = int64(len(c))
	runtime.GC()
	runtime.GC() // the heap profile is that of the last completed cycle

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	t.Addr = ln.Addr().String()
	go http.Serve(ln, export.RSSHandler())
	t.Resident = measure(chunks, m, c, fm)
	enc := json.NewEncoder(os.Stdout)
	enc.Encode(t)
	for in := bufio.NewScanner(os.Stdin); in.Scan(); {
		enc.Encode(measure(chunks, m, c, fm))
	}
	runtime.KeepAlive(m)
	runtime.KeepAlive(fm)
	close(park)
}
