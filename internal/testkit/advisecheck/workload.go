// Package advisecheck holds the tests of report.Advise against the real
// runtime: a small service of known allocation sites (request-scoped,
// cached, leaked) runs as a child process at a chosen MemProfileRate and
// writes two heap profiles and the truth of its window; the tests check
// the intervals' coverage over many runs, and that moving the advised
// sites onto arena.Pool saves the GC cycles Advise predicts.
package advisecheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/arenaprof/arenaprof/arena"
)

// The service's shape. Each request allocates reqBufs buffers of 4096
// bytes and reqNodes nodes of 64 bytes (both exact size classes,
// pointer-free: no malloc header) and holds them until inflight requests
// later; it replaces one entry of a cache of cacheEntries buffers of 4096
// bytes every cacheEvery requests, and leaks 1024 bytes every leakEvery
// requests.
const (
	reqBufs      = 4
	reqNodes     = 8
	inflight     = 4
	cacheEntries = 2048
	cacheEvery   = 1
	leakEvery    = 16
)

// The sites, as Advise's keys (by func).
const (
	pkg       = "github.com/arenaprof/arenaprof/internal/testkit/advisecheck."
	SiteBuf   = pkg + "reqBuf"
	SiteNode  = pkg + "reqNode"
	SiteCache = pkg + "cacheEntry"
	SiteLeak  = pkg + "leak"
)

// Sites are the service's sites and their object sizes.
var Sites = map[string]int64{SiteBuf: 4096, SiteNode: 64, SiteCache: 4096, SiteLeak: 1024}

type node struct{ v [8]uint64 }

//go:noinline
func reqBuf(a *arena.Arena) *[4096]byte {
	if a != nil {
		return arena.New[[4096]byte](a)
	}
	return new([4096]byte)
}

//go:noinline
func reqNode(a *arena.Arena) *node {
	if a != nil {
		return arena.New[node](a)
	}
	return new(node)
}

//go:noinline
func cacheEntry() *[4096]byte { return new([4096]byte) }

//go:noinline
func leak() *[1024]byte { return new([1024]byte) }

// request is what one request holds until inflight requests later.
type request struct {
	a     *arena.Arena
	bufs  [reqBufs]*[4096]byte
	nodes [reqNodes]*node
}

// service is the test program.
type service struct {
	ring      [inflight]request
	cache     []*[4096]byte
	leaked    []*[1024]byte
	pool      arena.Pool
	bufArena  bool // the buffers, the nodes, allocated in arenas
	nodeArena bool
	n         int              // requests served
	allocs    map[string]int64 // objects allocated on the Go heap, by site
	checksum  uint64
}

func newService(inArena map[string]bool, maxRequests int) *service {
	return &service{
		cache:     make([]*[4096]byte, cacheEntries),
		leaked:    make([]*[1024]byte, 0, maxRequests/leakEvery+1),
		bufArena:  inArena[SiteBuf],
		nodeArena: inArena[SiteNode],
		allocs:    map[string]int64{},
	}
}

// serve serves one request.
func (s *service) serve() {
	slot := &s.ring[s.n%inflight]
	if slot.a != nil {
		s.pool.Put(slot.a)
	}
	*slot = request{}
	if s.bufArena || s.nodeArena {
		//lint:ignore SA1012 Pool.Get documents a nil ctx: no labels to look up, which this workload has none of
		slot.a = s.pool.Get(nil)
	}
	var ab, an *arena.Arena
	if s.bufArena {
		ab = slot.a
	} else {
		s.allocs[SiteBuf] += reqBufs
	}
	if s.nodeArena {
		an = slot.a
	} else {
		s.allocs[SiteNode] += reqNodes
	}
	for j := range slot.bufs {
		b := reqBuf(ab)
		b[j] = byte(s.n)
		slot.bufs[j] = b
	}
	for j := range slot.nodes {
		nd := reqNode(an)
		nd.v[j] = uint64(s.n)
		slot.nodes[j] = nd
		s.checksum += uint64(slot.bufs[j%reqBufs][j])
	}
	if s.n%cacheEvery == 0 {
		s.cache[(s.n/cacheEvery)%cacheEntries] = cacheEntry()
		s.allocs[SiteCache]++
	}
	if s.n%leakEvery == 0 {
		s.leaked = append(s.leaked, leak())
		s.allocs[SiteLeak]++
	}
	s.n++
}

// live returns the bytes each site holds on the Go heap.
func (s *service) live() map[string]int64 {
	held := int64(min(s.n, inflight))
	out := map[string]int64{SiteBuf: 0, SiteNode: 0}
	if !s.bufArena {
		out[SiteBuf] = held * reqBufs * 4096
	}
	if !s.nodeArena {
		out[SiteNode] = held * reqNodes * 64
	}
	cached := 0
	for _, c := range s.cache {
		if c != nil {
			cached++
		}
	}
	out[SiteCache] = int64(cached) * 4096
	out[SiteLeak] = int64(len(s.leaked)) * 1024
	return out
}

// Truth is what a child's window held: per site, the bytes allocated on
// the Go heap in the window and in use at its end; the bytes the whole
// process allocated (runtime.MemStats.TotalAlloc) and the GC cycles it
// ran, forced ones aside.
type Truth struct {
	Alloc, Live map[string]int64
	TotalAlloc  uint64
	NumGC       uint32
	Requests    int
	Seconds     float64
}

// The child's environment.
const (
	childEnv     = "ARENAPROF_ADVISECHECK_CHILD" // the directory to write to
	requestsEnv  = "ARENAPROF_ADVISECHECK_REQUESTS"
	paceEnv      = "ARENAPROF_ADVISECHECK_PACE"  // a duration per request, "0" for none
	arenaSiteEnv = "ARENAPROF_ADVISECHECK_ARENA" // sites moved to arenas, comma-separated
)

// RunChild runs the service if this process is a child and reports
// whether it was: it serves a warm-up that fills the cache, takes the
// EARLIER heap profile after a GC, serves the window's requests, takes
// LATER after a GC, and writes earlier.pb.gz, later.pb.gz and truth.json.
func RunChild() (bool, error) {
	dir := os.Getenv(childEnv)
	if dir == "" {
		return false, nil
	}
	n, err := strconv.Atoi(os.Getenv(requestsEnv))
	if err != nil || n <= 0 {
		return true, fmt.Errorf("advisecheck child: bad %s", requestsEnv)
	}
	pace, err := time.ParseDuration(os.Getenv(paceEnv))
	if err != nil {
		return true, fmt.Errorf("advisecheck child: bad %s: %v", paceEnv, err)
	}
	inArena := map[string]bool{}
	for _, s := range strings.Split(os.Getenv(arenaSiteEnv), ",") {
		if s != "" {
			inArena[s] = true
		}
	}
	s := newService(inArena, cacheEntries+n)
	for range cacheEntries * cacheEvery { // warm-up: the cache full
		s.serve()
	}
	before := map[string]int64{}
	for k, v := range s.allocs {
		before[k] = v
	}
	var m1, m2 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m1)
	earlier, err := heapProfile()
	if err != nil {
		return true, err
	}
	start := time.Now()
	for i := range n {
		s.serve()
		if pace > 0 && i%16 == 15 {
			if d := time.Until(start.Add(time.Duration(i+1) * pace)); d > 0 {
				time.Sleep(d)
			}
		}
	}
	runtime.ReadMemStats(&m2)
	gcs := m2.NumGC - m1.NumGC
	runtime.GC()
	runtime.ReadMemStats(&m2)
	later, err := heapProfile()
	if err != nil {
		return true, err
	}
	t := Truth{Alloc: map[string]int64{}, Live: s.live(), TotalAlloc: m2.TotalAlloc - m1.TotalAlloc, NumGC: gcs,
		Requests: n, Seconds: time.Since(start).Seconds()}
	for site, size := range Sites {
		t.Alloc[site] = (s.allocs[site] - before[site]) * size
	}
	tj, err := json.Marshal(t)
	if err != nil {
		return true, err
	}
	runtime.KeepAlive(s)
	for name, data := range map[string][]byte{"earlier.pb.gz": earlier, "later.pb.gz": later, "truth.json": tj} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return true, err
		}
	}
	return true, nil
}

// heapProfile returns the runtime's heap profile, encoded.
func heapProfile() ([]byte, error) {
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		return nil, fmt.Errorf("heap profile: %w", err)
	}
	return buf.Bytes(), nil
}

// Run is one run of the service in a child process.
type Run struct {
	Earlier, Later []byte
	Truth          Truth
}

// Child runs exe (a program that calls RunChild first) as a child with
// the environment env added (GODEBUG=memprofilerate=R, GOGC=...), serving
// requests in the window at pace per request (0: as fast as it can), the
// sites inArena allocated in arenas, and returns its run; dir is a
// scratch directory of its own.
func Child(exe string, env []string, requests int, pace time.Duration, inArena []string, dir string) (*Run, error) {
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), env...),
		childEnv+"="+dir,
		requestsEnv+"="+strconv.Itoa(requests),
		paceEnv+"="+pace.String(),
		arenaSiteEnv+"="+strings.Join(inArena, ","),
	)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("advisecheck child: %v: %s", err, out)
	}
	var r Run
	var err error
	if r.Earlier, err = os.ReadFile(filepath.Join(dir, "earlier.pb.gz")); err != nil {
		return nil, err
	}
	if r.Later, err = os.ReadFile(filepath.Join(dir, "later.pb.gz")); err != nil {
		return nil, err
	}
	tj, err := os.ReadFile(filepath.Join(dir, "truth.json"))
	if err != nil {
		return nil, err
	}
	return &r, json.Unmarshal(tj, &r.Truth)
}
