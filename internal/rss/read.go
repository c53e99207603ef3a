// Package rss reads where a process's resident memory (RSS) goes, and
// writes and reads the resident-memory profile: every resident byte in
// one class (go/heap/live, go/heap/dead, go/heap/free, go/stacks,
// go/runtime, arena/used, arena/free, binary, files, nongo,
// unattributed), the Go heap's live bytes by allocation site with the
// runtime's sampler rule, arena memory by the arena's site, exact.
//
// Sources, read within one GC cycle: /proc/self/smaps (each mapping's
// Rss: resident, not mapped), runtime/metrics, the runtime's heap profile
// (runtime.MemProfile) and package arena's registry of live arenas. See
// docs/rss.md for how each class is derived from them.
package rss

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/arenaprof/arenaprof/internal/holdings"
)

// The runtime/metrics the classes are derived from.
var metricNames = [...]string{
	mCycles:      "/gc/cycles/total:gc-cycles",
	mLive:        "/gc/heap/live:bytes",
	mObjects:     "/memory/classes/heap/objects:bytes",
	mHeapFree:    "/memory/classes/heap/free:bytes",
	mReleased:    "/memory/classes/heap/released:bytes",
	mHeapStacks:  "/memory/classes/heap/stacks:bytes",
	mUnused:      "/memory/classes/heap/unused:bytes",
	mOSStacks:    "/memory/classes/os-stacks:bytes",
	mMcacheFree:  "/memory/classes/metadata/mcache/free:bytes",
	mMcacheInuse: "/memory/classes/metadata/mcache/inuse:bytes",
	mMspanFree:   "/memory/classes/metadata/mspan/free:bytes",
	mMspanInuse:  "/memory/classes/metadata/mspan/inuse:bytes",
	mMetaOther:   "/memory/classes/metadata/other:bytes",
	mBuckets:     "/memory/classes/profiling/buckets:bytes",
	mOther:       "/memory/classes/other:bytes",
}

const (
	mCycles = iota
	mLive
	mObjects
	mHeapFree
	mReleased
	mHeapStacks
	mUnused
	mOSStacks
	mMcacheFree
	mMcacheInuse
	mMspanFree
	mMspanInuse
	mMetaOther
	mBuckets
	mOther
	numMetrics
)

// HeapRecord is one in-use record of the runtime's heap profile: its
// stack (shared with the symbol cache: not to be modified), object size
// and raw count of sampled objects in use.
type HeapRecord struct {
	Stack []uintptr
	Size  int64
	Count int64
	st    *stackInfo
}

// Reading is what one read of the process found.
type Reading struct {
	Time time.Time
	// SmapsErr says why /proc/self/smaps could not be read (nil if it
	// was): then only the Go classes are given, from runtime/metrics
	// (mapped bytes, not resident).
	SmapsErr error
	maps     regions
	metric   [numMetrics]uint64
	// Missing names the metrics this Go release lacks.
	Missing []string
	// Cycle is the GC cycle all sources were read in; Consistent says
	// they were (a GC ran during every try otherwise).
	Cycle      uint64
	Consistent bool
	// Heap is the in-use records of the runtime's heap profile, those of
	// arena chunks left out; Rate the MemProfileRate.
	Heap []HeapRecord
	Rate int64
	// Holdings is what the live arenas hold.
	Holdings []holdings.Holding
	// CgroupCurrent and CgroupMax are the cgroup's memory.current and
	// memory.max (-1 where there is none or no limit).
	CgroupCurrent, CgroupMax int64
}

// tries bounds the reads made to find all sources within one GC cycle.
const tries = 4

// state is what reads reuse: the smaps buffers, the metric samples, the
// heap profile's records.
var state struct {
	mu      sync.Mutex
	buf     []byte
	file    bytes.Buffer
	vmas    []vma
	samples []metrics.Sample
	recs    []runtime.MemProfileRecord
	exe     string
	exeErr  error
	exeOnce bool
}

// smapsPath is the file read; tests point it elsewhere.
var smapsPath = "/proc/self/smaps"

// baseline is the anonymous resident memory outside the Go heap, and the
// runtime's off-heap mapped bytes, when the package was initialized:
// before main, when that memory is the runtime's (and the binary's
// zeroed data) all but what C libraries' initializers took. Classify
// takes the runtime's off-heap resident bytes as the baseline's plus what
// the runtime mapped since (metadata of new spans and arenas, profiling
// buckets: memory it writes as it maps it).
var baseline struct {
	anon, mapped int64
	ok           bool
}

func init() {
	r := &Reading{}
	state.buf = make([]byte, 64<<10)
	state.exe, state.exeErr = os.Readlink("/proc/self/exe")
	state.exeOnce = true
	state.samples = make([]metrics.Sample, numMetrics)
	for i, n := range metricNames {
		state.samples[i].Name = n
	}
	r.readSmaps()
	if r.SmapsErr != nil {
		return
	}
	metrics.Read(state.samples)
	for i, s := range state.samples {
		if s.Value.Kind() == metrics.KindUint64 {
			r.metric[i] = s.Value.Uint64()
		}
	}
	baseline.anon, baseline.mapped, baseline.ok = r.maps.anon, r.runtimeMapped(), true
}

// runtimeMapped is the runtime's off-heap memory as runtime/metrics maps
// it: metadata, profiling buckets and other.
func (r *Reading) runtimeMapped() int64 {
	m := func(i int) int64 { return int64(r.metric[i]) }
	return m(mMcacheFree) + m(mMcacheInuse) + m(mMspanFree) + m(mMspanInuse) + m(mMetaOther) + m(mBuckets) + m(mOther)
}

// Read reads the process's memory from every source within one GC cycle
// (retried when a cycle ends during the read).
func Read() *Reading {
	state.mu.Lock()
	defer state.mu.Unlock()
	r := &Reading{CgroupCurrent: -1, CgroupMax: -1}
	for try := 0; try < tries; try++ {
		metrics.Read(state.samples[:1])
		before := state.samples[0].Value.Uint64()
		r.read()
		metrics.Read(state.samples[:1])
		if after := state.samples[0].Value.Uint64(); after == before {
			r.Cycle, r.Consistent = before, true
			break
		}
	}
	r.Time = time.Now()
	r.CgroupCurrent, r.CgroupMax = cgroupMemory()
	return r
}

// read reads every source once.
func (r *Reading) read() {
	r.readSmaps()
	metrics.Read(state.samples)
	r.Missing = r.Missing[:0]
	for i, s := range state.samples {
		if s.Value.Kind() != metrics.KindUint64 {
			r.Missing = append(r.Missing, metricNames[i])
			r.metric[i] = 0
			continue
		}
		r.metric[i] = s.Value.Uint64()
	}
	r.Cycle = r.metric[mCycles]
	r.readHeap()
	r.Holdings = holdings.Read()
}

// readSmaps reads /proc/self/smaps into r.maps.
func (r *Reading) readSmaps() {
	r.SmapsErr = nil
	f, err := os.Open(smapsPath)
	if err != nil {
		r.SmapsErr = err
		return
	}
	defer f.Close()
	state.file.Reset()
	if _, err := state.file.ReadFrom(f); err != nil {
		r.SmapsErr = err
		return
	}
	vmas, err := parseSmaps(bytes.NewReader(state.file.Bytes()), state.buf, state.exe, state.vmas)
	state.vmas = vmas
	if err != nil {
		r.SmapsErr = err
		return
	}
	// A heap object's address: the buffer the file was read into.
	probe := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(state.file.Bytes()))))
	r.maps = sumRegions(vmas, probe)
	if r.maps.heapEnd == 0 {
		r.SmapsErr = errors.New("no mapping holds the Go heap")
	}
}

// readHeap reads the runtime's heap profile: in-use records, arena chunks
// left out (they count as arena memory). The records are read into a
// buffer kept between reads; each stack is copied once into the symbol
// cache.
func (r *Reading) readHeap() {
	r.Rate = int64(runtime.MemProfileRate)
	var n int
	for {
		var ok bool
		n, ok = runtime.MemProfile(state.recs[:cap(state.recs)], true)
		if ok {
			break
		}
		state.recs = make([]runtime.MemProfileRecord, n+n/4+64)
	}
	symbols.Lock()
	defer symbols.Unlock()
	resetSymbols()
	stacks := internAll(state.recs[:n])
	r.Heap = make([]HeapRecord, 0, n)
	for i := range state.recs[:n] {
		rec := &state.recs[i]
		c := rec.InUseObjects()
		st := stacks[i]
		if c <= 0 || rec.AllocObjects <= 0 || st.arena {
			continue
		}
		r.Heap = append(r.Heap, HeapRecord{Stack: st.pcs, Size: rec.AllocBytes / rec.AllocObjects, Count: c, st: st})
	}
}

// arenaPackage prefixes the functions of package arena, whose heap
// allocations are arena chunks and buffers.
const arenaPackage = "github.com/arenaprof/arenaprof/arena."

// cgroupMemory returns the cgroup's memory.current and memory.max of the
// process (cgroup v2), or memory.usage_in_bytes and memory.limit_in_bytes
// (v1): -1 for none, and for no limit ("max", or v1's page-rounded
// 2^63-1).
func cgroupMemory() (current, limit int64) {
	current, limit = -1, -1
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var dirs []string
		var cur, max string
		switch {
		case parts[0] == "0" && parts[1] == "":
			dirs, cur, max = []string{"/sys/fs/cgroup" + parts[2]}, "memory.current", "memory.max"
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			// Inside a container the hierarchy's root is often the
			// container's own cgroup.
			dirs, cur, max = []string{"/sys/fs/cgroup/memory" + parts[2], "/sys/fs/cgroup/memory"}, "memory.usage_in_bytes", "memory.limit_in_bytes"
		default:
			continue
		}
		for _, dir := range dirs {
			v, err := readInt(dir + "/" + cur)
			if err != nil {
				continue
			}
			current = v
			if v, err := readInt(dir + "/" + max); err == nil && v < 1<<62 {
				limit = v
			}
			return
		}
	}
	return
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return -1, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q", path, s)
	}
	return v, nil
}
