package rss

import "fmt"

// The classes, in the order the profile and the CLI give them. Their
// names are paths: the profile's root frames are their prefixes.
const (
	GoHeapLive   = "go/heap/live"
	GoHeapDead   = "go/heap/dead"
	GoHeapFree   = "go/heap/free"
	GoStacks     = "go/stacks"
	GoRuntime    = "go/runtime"
	ArenaUsed    = "arena/used"
	ArenaFree    = "arena/free"
	Binary       = "binary"
	Files        = "files"
	NonGo        = "nongo"
	Unattributed = "unattributed"
)

// Classes lists the classes in order.
var Classes = [...]string{GoHeapLive, GoHeapDead, GoHeapFree, GoStacks, GoRuntime, ArenaUsed, ArenaFree, Binary, Files, NonGo, Unattributed}

// Index of each class in Classes.
const (
	iLive = iota
	iDead
	iFree
	iStacks
	iRuntime
	iArenaUsed
	iArenaFree
	iBinary
	iFiles
	iNonGo
	iUnattributed
	numClasses
)

// Breakdown is a Reading split into classes.
type Breakdown struct {
	// RSS is the resident bytes smaps gives (the sum of its mappings'
	// Rss), 0 when smaps could not be read.
	RSS int64
	// Bytes holds each class's bytes, in the order of Classes; their sum
	// is RSS when smaps was read.
	Bytes [numClasses]int64
	// Notes say what the reader should know: a source that could not be
	// read, a class that is an upper bound, a shortfall.
	Notes []string
}

// Classify splits r into classes.
//
// The Go heap's mappings hold heap objects, stacks and free pages; smaps
// gives their resident total H, runtime/metrics the objects O (live as of
// the last GC: L), the stacks S and the arenas' heap bytes A (the
// registry, which splits it into A0, made before the last GC, and A1,
// made since). Arena memory is A (used: what arenas handed out; free: the
// rest), taken out of the objects: A0 out of the live ones, A1 out of the
// dead; go/heap/live is L-A0, go/heap/dead O-L-A1, go/heap/free H-O-S.
// The registry learns of a GC after it ends, so a chunk made in between
// counts in A0: go/heap/live errs low, and where A0 > L it shows 0, said. When H < O+S (pages of fresh
// objects or stacks never touched, hence not resident), the shortfall is
// taken from arena/free first (the tail of a fresh chunk is untouched until
// the arena hands it out), then from the dead objects (a fresh large
// allocation is untouched until written), the stacks (a goroutine touches
// the top of its stack only) and the live objects, and said.
//
// The runtime's off-heap memory (metadata, profiling buckets, other)
// lies in anonymous mappings beside C's; runtime/metrics gives its mapped
// bytes M, not its resident ones. So the anonymous memory outside the
// heap resident at init (A0, before main: the runtime's and the binary's
// zeroed data) is taken as the runtime's, and what it mapped since
// (M-M0) as resident: go/runtime is min(A0+M-M0, the anonymous resident
// bytes outside the heap) plus the main thread's stack, nongo the rest of
// the anonymous memory and the brk heap. Without a baseline, go/runtime
// is min(M, ...), an upper bound. The note says which.
func Classify(r *Reading) *Breakdown {
	b := &Breakdown{}
	m := func(i int) int64 { return int64(r.metric[i]) }
	for _, n := range r.Missing {
		b.Notes = append(b.Notes, "runtime/metrics lacks "+n+" in this Go release: the classes derived from it are short by its bytes")
	}
	if !r.Consistent {
		b.Notes = append(b.Notes, fmt.Sprintf("a GC cycle ended during each of %d reads: the sources are from different cycles", tries))
	}
	var arenaHeap, arenaFresh, arenaUsed, offHeapArena int64
	for _, h := range r.Holdings {
		if h.Heap <= 0 {
			offHeapArena += h.Reserved // checked mode: mapped off the heap
			continue
		}
		arenaHeap += h.Heap
		if h.Cycle >= r.Cycle {
			arenaFresh += min(max(0, h.Fresh), h.Heap)
		}
		arenaUsed += min(max(0, h.Used-h.Loose), h.Heap)
	}
	if offHeapArena > 0 {
		b.Notes = append(b.Notes, fmt.Sprintf("%d bytes of checked-mode arena chunks are mapped off the Go heap: they count in nongo", offHeapArena))
	}
	objects := m(mObjects)
	if arenaHeap > objects {
		b.Notes = append(b.Notes, fmt.Sprintf("the arenas' registry counts %d heap bytes, more than the %d of heap objects runtime/metrics counts (the two are read apart): arena/* is cut to the objects, go/heap/live and go/heap/dead show 0", arenaHeap, objects))
	}
	arenaHeap = min(arenaHeap, objects)
	arenaUsed = min(arenaUsed, arenaHeap)
	arenaFresh = min(arenaFresh, arenaHeap)
	arenaOld := arenaHeap - arenaFresh
	live := min(max(0, m(mLive)-arenaOld), objects-arenaHeap)
	if arenaOld > m(mLive) {
		b.Notes = append(b.Notes, fmt.Sprintf("the arenas take %d heap bytes made before the last GC by their count, more than the %d live at it, so some were made since (the arenas learn of a GC after it ends): go/heap/live shows 0 and may be short by up to %d bytes (counted in go/heap/dead) until the next GC", arenaOld, m(mLive), m(mLive)))
	}
	dead := objects - arenaHeap - live
	stacks := m(mHeapStacks)
	runtimeMapped := r.runtimeMapped()
	osStacks := m(mOSStacks)
	b.Bytes[iArenaUsed] = arenaUsed
	b.Bytes[iArenaFree] = arenaHeap - arenaUsed
	if r.SmapsErr != nil {
		b.Notes = append(b.Notes, "smaps could not be read ("+r.SmapsErr.Error()+"): the Go classes only, mapped bytes from runtime/metrics (not resident), no RSS, no binary, files or nongo")
		b.Bytes[iLive], b.Bytes[iDead] = live, dead
		b.Bytes[iFree] = m(mHeapFree) + m(mUnused)
		b.Bytes[iStacks] = stacks + osStacks
		b.Bytes[iRuntime] = runtimeMapped
		return b
	}
	g := r.maps
	b.RSS = g.total
	free := g.heap - objects - stacks
	if free < 0 {
		short := -free
		free = 0
		took := short
		for _, p := range []*int64{&b.Bytes[iArenaFree], &dead, &stacks, &live} {
			t := min(*p, short)
			*p -= t
			short -= t
		}
		b.Notes = append(b.Notes, fmt.Sprintf("%d bytes of heap objects and stacks are not resident (pages never touched): taken from arena/free, go/heap/dead, go/stacks and go/heap/live in that order", took-short))
	}
	b.Bytes[iLive], b.Bytes[iDead], b.Bytes[iFree] = live, dead, free
	anon := g.anon
	st := min(osStacks, anon)
	anon -= st
	// The runtime's off-heap resident bytes: its baseline at init and
	// what it mapped since, or its mapped bytes without a baseline.
	rt := runtimeMapped
	if baseline.ok {
		rt = baseline.anon + max(0, runtimeMapped-baseline.mapped)
	}
	rt = min(rt, anon)
	b.Bytes[iStacks] = stacks + st
	b.Bytes[iRuntime] = rt + g.stack
	b.Bytes[iNonGo] = anon - rt + g.brk
	b.Bytes[iBinary] = g.binary
	b.Bytes[iFiles] = g.files + g.special
	if baseline.ok {
		b.Notes = append(b.Notes, fmt.Sprintf("go/runtime is the anonymous memory resident at start (%d bytes) and what the runtime mapped since (%d bytes); nongo the rest of the anonymous memory: runtime memory released since start, or mapped and not yet touched, counts in nongo, C memory taken before main in go/runtime", baseline.anon, max(0, runtimeMapped-baseline.mapped)))
	} else {
		b.Notes = append(b.Notes, fmt.Sprintf("go/runtime counts the runtime's off-heap memory as mapped (%d bytes): an upper bound on its resident part, and nongo a lower bound by as much", runtimeMapped))
	}
	var sum int64
	for _, v := range b.Bytes[:iUnattributed] {
		sum += v
	}
	b.Bytes[iUnattributed] = b.RSS - sum
	if u := b.Bytes[iUnattributed]; u > max(b.RSS/100, 2<<20) {
		b.Notes = append(b.Notes, fmt.Sprintf("unattributed is %d bytes, more than 1%% of RSS and 2 MiB", u))
	}
	return b
}
