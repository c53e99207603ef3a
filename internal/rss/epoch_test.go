package rss

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/internal/holdings"
)

// TestFreshArenasAfterGC makes arenas after a GC, with the collector
// off, more than was live at that GC: go/heap/live must stay what
// runtime/metrics says was live at it (/gc/heap/live:bytes) less the
// arena bytes made before it, not fall to 0, and the fresh arenas count
// out of go/heap/dead.
func TestFreshArenasAfterGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	// An arena made before the GC: it arms the registry's sweep, which
	// tells package arena the GC ended.
	before := arena.NewArena()
	defer before.Free()
	arena.New[[1024]byte](before)
	// A sweep armed while a GC was marking runs after the next GC only:
	// a second GC (a third, ...) brings it.
	var cycle uint64
	deadline := time.Now().Add(10 * time.Second)
	for learnt := false; !learnt; {
		if time.Now().After(deadline) {
			t.Fatalf("package arena did not learn of GC %d within 10 s: %+v", cycle, holdings.Read())
		}
		runtime.GC()
		cycle = readMetric(t, "/gc/cycles/total:gc-cycles")
		for wait := time.Now().Add(time.Second); !learnt && time.Now().Before(wait); {
			time.Sleep(time.Millisecond)
			learnt = seen(cycle)
		}
	}
	var oldHeap int64
	for _, h := range holdings.Read() {
		oldHeap += h.Heap
	}
	liveAtGC := int64(readMetric(t, "/gc/heap/live:bytes"))

	// Fresh arenas: more than was live at the GC, in 64 KiB chunks,
	// written to (pages never touched are not resident).
	const each = 1 << 20
	n := int(liveAtGC/each) + 8
	fresh := make([]*arena.Arena, n)
	for i := range fresh {
		fresh[i] = arena.NewArena()
		for range each / 1024 {
			arena.New[[1024]byte](fresh[i])[0] = 1
		}
	}
	defer func() {
		for _, a := range fresh {
			a.Free()
		}
		// Give the pages back: tests that watch RSS rise follow.
		runtime.GC()
		debug.FreeOSMemory()
	}()

	r := Read()
	if !r.Consistent || r.Cycle != cycle {
		t.Fatalf("read in GC cycle %d (consistent %v), want %d: a GC ran with the collector off", r.Cycle, r.Consistent, cycle)
	}
	b := Classify(r)
	for i, c := range Classes {
		t.Logf("%-14s %12d", c, b.Bytes[i])
	}
	for _, note := range b.Notes {
		t.Log(note)
	}
	live := b.Bytes[iLive]
	arenaBytes := b.Bytes[iArenaUsed] + b.Bytes[iArenaFree]
	t.Logf("live at the GC %d, arena heap bytes made before it %d, fresh arenas %d x %d bytes", liveAtGC, oldHeap, n, each)
	if arenaBytes < int64(n)*each {
		t.Errorf("arena/* %d bytes, fewer than the %d the fresh arenas hand out", arenaBytes, int64(n)*each)
	}
	// go/heap/live is /gc/heap/live less the old arena bytes, less any
	// pages never touched that arena/free, go/heap/dead and go/stacks
	// could not absorb (taken from go/heap/live last): at most that, and
	// far from the 0 it showed when every arena byte came off it.
	if want := liveAtGC - oldHeap; live > want || live < want/2 {
		t.Errorf("go/heap/live %d, want %d (/gc/heap/live %d less %d arena bytes made before the GC), or at least half of it", live, want, liveAtGC, oldHeap)
	}
	if strings.Contains(strings.Join(b.Notes, "\n"), "go/heap/live shows 0") {
		t.Errorf("noted that go/heap/live shows 0: %q", b.Notes)
	}
	runtime.KeepAlive(fresh)
}

// seen says whether package arena counts its arenas' fresh bytes from GC
// cycle: every holding's Cycle is at least it.
func seen(cycle uint64) bool {
	hs := holdings.Read()
	for _, h := range hs {
		if h.Cycle < cycle {
			return false
		}
	}
	return len(hs) > 0
}

func readMetric(t *testing.T, name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Fatalf("runtime/metrics lacks %s", name)
	}
	return s[0].Value.Uint64()
}
