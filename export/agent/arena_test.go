package agent

import (
	"context"
	"slices"
	"testing"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/profiler"
)

type rec64 struct{ a, b, c, d, e, f, g, h int64 }

// TestProfilerSource: at mean 1 every object is sampled, so each interval's
// alloc_samples is exactly the number of objects allocated in it, while
// in-use stays absolute until the arena is reset.
func TestProfilerSource(t *testing.T) {
	setMeanBytes(t, 1)
	p, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	a := arena.NewArena()
	defer a.Free()
	s := ProfilerSource(p)
	if err := s.(starter).Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	live := int64(0)
	for i, n := range []int64{10, 0, 25} {
		for range n {
			arena.New[rec64](a)
		}
		live += n
		prof, err := s.Collect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if err := prof.CheckValid(); err != nil {
			t.Fatal(err)
		}
		if got := sampleValue(t, prof, "alloc_samples"); got != n {
			t.Errorf("interval %d: alloc_samples %d, want %d", i, got, n)
		}
		if got := sampleValue(t, prof, "inuse_space"); got != 64*live {
			t.Errorf("interval %d: inuse_space %d, want %d", i, got, 64*live)
		}
		if !slices.Contains(prof.Comments, "arenaprof window=both") {
			t.Errorf("interval %d: comments %q", i, prof.Comments)
		}
	}
	a.Reset()
	prof, err := s.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := sampleValue(t, prof, "inuse_space"); got != 0 {
		t.Errorf("after Reset: inuse_space %d", got)
	}
	if err := ProfilerSource(nil).(starter).Start(context.Background()); err == nil {
		t.Fatal("nil profiler accepted")
	}
}
