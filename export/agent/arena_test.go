package agent

import (
	"context"
	"slices"
	"testing"

	"github.com/google/pprof/profile"

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

// The arena, peak and arenas sources build the profiles the agent encodes
// in memory they reuse the next interval: the encoding and the decoded
// profile an upload keeps are the interval's own, unchanged by the next
// one, and the same numbers as Collect's profile.
func TestReusedSourcesKeepUploads(t *testing.T) {
	setMeanBytes(t, 1)
	p, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		src  func() Source
	}{
		{"arena", func() Source { return ProfilerSource(p) }},
		{"peak", func() Source { return PeakSource(p) }},
		{"arenas", ArenasSource},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, plain := tc.src(), tc.src()
			for _, src := range []Source{s, plain} {
				if st, ok := src.(starter); ok {
					if err := st.Start(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
			var kept []*profile.Profile
			var keptText []string
			for i, n := range []int{10, 25, 3} {
				a := arena.NewArena()
				for range n {
					arena.New[rec64](a)
				}
				e, err := collectSource(ctx, s)
				if err != nil || e == nil {
					t.Fatalf("interval %d: %v, %v", i, e, err)
				}
				want, err := plain.Collect(ctx)
				if err != nil {
					t.Fatal(err)
				}
				got, err := e.profile()
				if err != nil {
					t.Fatal(err)
				}
				if g, w := sampleValue(t, got, got.SampleType[0].Type), sampleValue(t, want, want.SampleType[0].Type); g != w {
					t.Errorf("interval %d: %s %d, Collect's %d", i, got.SampleType[0].Type, g, w)
				}
				kept = append(kept, got)
				keptText = append(keptText, got.String())
				a.Free()
			}
			for i, k := range kept {
				if k.String() != keptText[i] {
					t.Errorf("interval %d: the kept profile changed after later intervals", i)
				}
			}
		})
	}
}
