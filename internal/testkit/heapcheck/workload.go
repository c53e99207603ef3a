package heapcheck

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/pprof"
)

// Site is a call site of the bias workload: one function that allocates
// objects of one size, which the runtime counts exactly (an exact size
// class, not from the tiny allocator, pointerful objects at most 512 bytes
// so that they carry no malloc header; 40960 bytes is five whole pages).
type Site struct {
	Func  string // the function's full name, as a table's key
	Size  int64  // bytes per object
	alloc func(n int)
}

// sink makes each allocation escape to the heap, where it is sampled.
//
//lint:ignore U1000 written only: the writes are what matters
var sink any

// Each site allocates n objects of its size (pointerful: p; pointer-free:
// b). The fields give the types their size and pointers; they are never
// read.
type (
	//lint:ignore U1000 never read, see above
	p8 struct{ p *int }
	//lint:ignore U1000 never read, see above
	p32 struct{ p [4]*int }
	//lint:ignore U1000 never read, see above
	p64 struct{ p [8]*int }
	//lint:ignore U1000 never read, see above
	p256 struct{ p [32]*int }
)

//go:noinline
func site8p(n int) {
	for range n {
		sink = new(p8)
	}
}

//go:noinline
func site16b(n int) {
	for range n {
		sink = new([16]byte)
	}
}

//go:noinline
func site32p(n int) {
	for range n {
		sink = new(p32)
	}
}

//go:noinline
func site48b(n int) {
	for range n {
		sink = new([48]byte)
	}
}

//go:noinline
func site64p(n int) {
	for range n {
		sink = new(p64)
	}
}

//go:noinline
func site128b(n int) {
	for range n {
		sink = new([128]byte)
	}
}

//go:noinline
func site256p(n int) {
	for range n {
		sink = new(p256)
	}
}

//go:noinline
func site512b(n int) {
	for range n {
		sink = new([512]byte)
	}
}

//go:noinline
func site1024b(n int) {
	for range n {
		sink = new([1024]byte)
	}
}

//go:noinline
func site4096b(n int) {
	for range n {
		sink = new([4096]byte)
	}
}

//go:noinline
func site8192b(n int) {
	for range n {
		sink = new([8192]byte)
	}
}

//go:noinline
func site40960b(n int) {
	for range n {
		sink = new([40960]byte)
	}
}

// after4096 allocates n pairs: a 4096-byte object, which at MemProfileRate
// 512 is sampled almost surely, then an 8-byte one, which therefore almost
// always comes right after a sample: the worst order for the Go 1.24
// sampler.
//
//go:noinline
func after4096(n int) {
	for range n {
		sink = new([4096]byte)
		site8after()
	}
}

//go:noinline
func site8after() { sink = new(p8) }

const pkg = "github.com/arenaprof/arenaprof/internal/testkit/heapcheck."

// Sites are the sites of the bias workload, sizes ascending.
var Sites = []Site{
	{pkg + "site8p", 8, site8p},
	{pkg + "site16b", 16, site16b},
	{pkg + "site32p", 32, site32p},
	{pkg + "site48b", 48, site48b},
	{pkg + "site64p", 64, site64p},
	{pkg + "site128b", 128, site128b},
	{pkg + "site256p", 256, site256p},
	{pkg + "site512b", 512, site512b},
	{pkg + "site1024b", 1024, site1024b},
	{pkg + "site4096b", 4096, site4096b},
	{pkg + "site8192b", 8192, site8192b},
	{pkg + "site40960b", 40960, site40960b},
}

// AfterSample is the site of the 8-byte objects of the worst order
// (RunAfter), AfterBig the site of the 4096-byte objects before them.
const (
	AfterSample = pkg + "site8after"
	AfterBig    = pkg + "after4096"
)

// Truth returns the true bytes of each site for a run of RunSites(perSite):
// every site allocates about perSite bytes, in whole objects.
func Truth(perSite int64) map[string]int64 {
	t := make(map[string]int64, len(Sites))
	for _, s := range Sites {
		t[s.Func] = perSite / s.Size * s.Size
	}
	return t
}

// RunSites allocates about perSite bytes at every site, one site after
// the other (runs of one size).
func RunSites(perSite int64) {
	for _, s := range Sites {
		s.alloc(int(perSite / s.Size))
	}
	sink = nil
}

// RunAfter allocates n pairs of a 4096-byte object and an 8-byte one
// (AfterBig, AfterSample): true bytes n*4096 and n*8.
func RunAfter(n int) {
	after4096(n)
	sink = nil
}

// AllocsProfile returns the runtime's allocs profile, encoded, after a
// garbage collection (which publishes the last cycle's records).
func AllocsProfile() ([]byte, error) {
	runtime.GC()
	var buf bytes.Buffer
	if err := pprof.Lookup("allocs").WriteTo(&buf, 0); err != nil {
		return nil, fmt.Errorf("allocs profile: %w", err)
	}
	return buf.Bytes(), nil
}
