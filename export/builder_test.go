package export_test

import (
	"bytes"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/pprofenc"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/profiler"
)

type builderSmall struct{ x [4]int64 }

type builderBig struct{ x [64]int64 }

//go:noinline
func builderSiteA(a *arena.Arena, n int) {
	for range n {
		arena.New[builderSmall](a)
	}
}

//go:noinline
func builderSiteB(a *arena.Arena, n int) {
	for range n {
		arena.New[builderBig](a)
	}
}

// A Builder reused interval after interval, with the snapshots and deltas
// of SnapshotReuse and DeltaReuse (as the agent's arena and peak sources
// use them), encodes byte for byte what Build, BuildPeak and Encode give
// for the same records, with and without the Pyroscope additions, as the
// number of samples and label sets grows and shrinks.
func TestBuilderMatchesBuild(t *testing.T) {
	setMeanBytes(t, 64)
	p, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	take, stop := p.WatchPeak()
	defer stop()
	var (
		r            export.Builder
		prev         = p.Snapshot()
		spare, delta *profiler.Snapshot
	)
	// encode returns the encoding of build's profile, nil for none.
	encode := func(t *testing.T, build func() (*profile.Profile, error), opts *pprofenc.Options) []byte {
		t.Helper()
		got, err := build()
		if err != nil {
			t.Fatal(err)
		}
		if got == nil {
			return nil
		}
		var buf bytes.Buffer
		if err := pprofenc.Encode(&buf, got, opts); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	pyroscope := &pprofenc.Options{NumAsString: []string{pprofmt.LabelBytes}, TypeFrames: true}
	for _, tc := range []struct {
		name   string
		a, b   int
		labels []string
		free   bool
	}{
		{"one site", 200, 0, nil, false},
		{"two sites, labelled", 100, 50, []string{"route", "/a"}, false},
		{"freed", 0, 0, nil, true},
		{"other labels", 10, 300, []string{"route", "/b", "tenant", "x"}, false},
		{"nothing new", 0, 0, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ar := arena.NewArena(arena.WithLabels(hooks.NewLabels(tc.labels...)))
			defer ar.Free()
			builderSiteA(ar, tc.a)
			builderSiteB(ar, tc.b)
			if tc.free {
				ar.Free()
			}
			cur := p.SnapshotReuse(spare)
			d, err := profiler.DeltaReuse(delta, prev, cur)
			if err != nil {
				t.Fatal(err)
			}
			spare, prev, delta = prev, cur, d
			pk := take()
			for _, opts := range []*pprofenc.Options{nil, pyroscope} {
				want := encode(t, func() (*profile.Profile, error) { return export.Build(d) }, opts)
				got := encode(t, func() (*profile.Profile, error) { return r.Build(d) }, opts)
				if !bytes.Equal(got, want) {
					t.Errorf("Builder.Build encodes %d bytes, Build %d, not the same (opts %+v)", len(got), len(want), opts)
				}
				want = encode(t, func() (*profile.Profile, error) { return export.BuildPeak(pk) }, opts)
				got = encode(t, func() (*profile.Profile, error) { return r.BuildPeak(pk) }, opts)
				if !bytes.Equal(got, want) {
					t.Errorf("Builder.BuildPeak encodes %d bytes, BuildPeak %d, not the same (opts %+v)", len(got), len(want), opts)
				}
			}
			prof, err := r.Build(d)
			if err != nil || prof.CheckValid() != nil {
				t.Fatalf("Builder.Build: %v", err)
			}
			if tc.a+tc.b > 0 && len(prof.Sample) == 0 {
				t.Errorf("Builder.Build: no sample of %d allocations", tc.a+tc.b)
			}
		})
	}
}

// A Builder reused for live-arenas profiles, as arenas come and go,
// encodes what BuildArenas gives, times apart.
func TestBuilderMatchesBuildArenas(t *testing.T) {
	var r export.Builder
	encode := func(t *testing.T, build func() (*profile.Profile, error)) []byte {
		t.Helper()
		p, err := build()
		if err != nil {
			t.Fatal(err)
		}
		p.TimeNanos = 0
		var buf bytes.Buffer
		if err := pprofenc.Encode(&buf, p, &pprofenc.Options{TypeFrames: true}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	var extra []*arena.Arena
	defer func() {
		for _, a := range extra {
			a.Free()
		}
	}()
	for _, tc := range []struct {
		name string
		add  func(t *testing.T)
	}{
		{"fixture", func(t *testing.T) { holdingsFixture(t, "one") }},
		{"more labels", func(t *testing.T) { extra = append(extra, holdSmall("two"), holdLarge("three")) }},
		{"fewer", func(t *testing.T) {
			for _, a := range extra {
				a.Free()
			}
			extra = nil
		}},
		{"again", func(t *testing.T) { extra = append(extra, holdSmall("two")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.add(t)
			for range 2 {
				want := encode(t, export.BuildArenas)
				got := encode(t, r.BuildArenas)
				if !bytes.Equal(got, want) {
					t.Errorf("Builder.BuildArenas encodes %d bytes, BuildArenas %d, not the same", len(got), len(want))
				}
			}
		})
	}
}
