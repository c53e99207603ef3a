package profbuild

import (
	"sync"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/internal/testkit/meantest"
	"github.com/arenaprof/arenaprof/profiler"
)

//go:noinline
func symbolsAllocA(a *arena.Arena) { arena.New[[4]uint64](a) }

//go:noinline
func symbolsAllocB(a *arena.Arena) { arena.New[[8]uint64](a) }

// usedSymbols checks that p lists exactly the locations and functions its
// samples use, once each, and returns its locations by id.
func usedSymbols(t *testing.T, p *profile.Profile) map[uint64]*profile.Location {
	t.Helper()
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	locs := map[uint64]*profile.Location{}
	for _, l := range p.Location {
		locs[l.ID] = l
	}
	usedLocs, usedFuncs := map[uint64]bool{}, map[uint64]bool{}
	for _, s := range p.Sample {
		for _, l := range s.Location {
			usedLocs[l.ID] = true
			for _, ln := range l.Line {
				usedFuncs[ln.Function.ID] = true
			}
		}
	}
	if len(usedLocs) != len(p.Location) || len(usedFuncs) != len(p.Function) {
		t.Fatalf("%d locations and %d functions listed, %d and %d used", len(p.Location), len(p.Function), len(usedLocs), len(usedFuncs))
	}
	return locs
}

// TestBuildSharesSymbols: profiles built one after another share their
// locations; each lists those its samples use, and stays valid after the
// cache is emptied; Builds may run at once (run with -race).
func TestBuildSharesSymbols(t *testing.T) {
	meantest.Set(t, 1)
	p, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	a := arena.NewArena(arena.WithSeed(1, 2))
	defer a.Free()
	symbolsAllocA(a)
	first, err := new(Builder).Build(p.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	symbolsAllocB(a)
	second, err := new(Builder).Build(p.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	l1, l2 := usedSymbols(t, first), usedSymbols(t, second)
	if len(l2) <= len(l1) {
		t.Fatalf("%d locations, then %d after a new site", len(l1), len(l2))
	}
	for id, l := range l1 {
		if l2[id] != l {
			t.Errorf("location %d not shared", id)
		}
	}
	symbols.Lock()
	symbols.mapping = nil // empties the cache at the next Build
	symbols.Unlock()
	third, err := new(Builder).Build(p.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	usedSymbols(t, third)
	usedSymbols(t, second)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				if q, err := new(Builder).Build(p.Snapshot()); err != nil || q.CheckValid() != nil {
					t.Error(err)
					return
				}
				if _, err := new(Builder).Arenas(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
