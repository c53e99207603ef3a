package arena

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/hooks"
)

// TestDroppedArenaReleased: an arena (plain or from a Pool) dropped
// without Reset or Free is released by the garbage collector, once; an
// arena freed before it is dropped is not released a second time.
func TestDroppedArenaReleased(t *testing.T) {
	old := hooks.MeanBytes()
	defer hooks.SetMeanBytes(old)
	if err := hooks.SetMeanBytes(1); err != nil {
		t.Fatal(err)
	}
	c := &releases{}
	defer hooks.Register(c)()
	count := func(id uint64) int {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := 0
		for _, x := range c.ids {
			if x == id {
				n++
			}
		}
		return n
	}
	drop := func() uint64 {
		a := NewArena()
		New[obj8](a)
		return a.id
	}
	dropPooled := func() uint64 {
		a := NewPool().Get(nil)
		New[obj8](a)
		return a.id
	}
	freed := func() uint64 {
		a := NewArena()
		New[obj8](a)
		a.Free()
		return a.id
	}
	ids := []uint64{drop(), dropPooled()}
	fid := freed()
	deadline := time.Now().Add(10 * time.Second)
	for slices.ContainsFunc(ids, func(id uint64) bool { return count(id) == 0 }) && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	for _, id := range ids {
		if n := count(id); n != 1 {
			t.Errorf("dropped arena %d released %d times, want 1", id, n)
		}
	}
	if n := count(fid); n != 1 {
		t.Errorf("freed arena %d released %d times, want 1", fid, n)
	}
}
