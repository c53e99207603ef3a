package profbuild_test

import (
	"bytes"
	"testing"

	"github.com/arenaprof/arenaprof/internal/testkit/livearenas"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export/internal/profbuild"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/pprofenc"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/testkit/meantest"
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

// A Builder reused interval after interval, with the windows of
// Profiler.Deltas (as the agent's arena source takes them), encodes byte
// for byte what a new Builder (package export's Build), Peak and Encode
// give for the same records, with and without the
// Pyroscope additions, as the number of samples and label sets grows and
// shrinks.
func TestBuilderMatchesBuild(t *testing.T) {
	meantest.Set(t, 64)
	p, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	take, stop := p.WatchPeak()
	defer stop()
	var (
		r      profbuild.Builder
		deltas = p.Deltas()
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
			d := deltas()
			pk := take()
			for _, opts := range []*pprofenc.Options{nil, pyroscope} {
				want := encode(t, func() (*profile.Profile, error) { return new(profbuild.Builder).Build(d) }, opts)
				got := encode(t, func() (*profile.Profile, error) { return r.Build(d) }, opts)
				if !bytes.Equal(got, want) {
					t.Errorf("Builder.Build encodes %d bytes, a new Builder %d, not the same (opts %+v)", len(got), len(want), opts)
				}
				want = encode(t, func() (*profile.Profile, error) { return profbuild.Peak(pk) }, opts)
				got = encode(t, func() (*profile.Profile, error) { return r.Peak(pk) }, opts)
				if !bytes.Equal(got, want) {
					t.Errorf("Builder.Peak encodes %d bytes, Peak %d, not the same (opts %+v)", len(got), len(want), opts)
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
// encodes what a new Builder (package export's BuildArenas) gives, times
// apart.
func TestBuilderMatchesArenas(t *testing.T) {
	var r profbuild.Builder
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
		{"fixture", func(t *testing.T) { livearenas.Hold(t, "one") }},
		{"more labels", func(t *testing.T) { extra = append(extra, livearenas.Small("two"), livearenas.Large("three")) }},
		{"fewer", func(t *testing.T) {
			for _, a := range extra {
				a.Free()
			}
			extra = nil
		}},
		{"again", func(t *testing.T) { extra = append(extra, livearenas.Small("two")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.add(t)
			for range 2 {
				want := encode(t, new(profbuild.Builder).Arenas)
				got := encode(t, r.Arenas)
				if !bytes.Equal(got, want) {
					t.Errorf("Builder.Arenas encodes %d bytes, a new Builder %d, not the same", len(got), len(want))
				}
			}
		})
	}
}
