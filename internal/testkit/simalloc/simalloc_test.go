package simalloc_test

import (
	"slices"
	"testing"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/sampling"
	"github.com/arenaprof/arenaprof/internal/testkit/hookstest"
	"github.com/arenaprof/arenaprof/internal/testkit/simalloc"
)

type sampled struct{ obj, offset int64 }

// run allocates 2100 objects of 48 bytes from an allocator seeded with
// (1, 2), with a consumer registered from object listenFrom on, and returns
// the sampled objects and offsets it saw.
func run(t *testing.T, listenFrom int) []sampled {
	g, err := sampling.NewGapSamplerSeeded(4096, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	a := simalloc.New(g, hooks.Labels{})
	var got []sampled
	obj := int64(0)
	unregister := func() {}
	for i := range 2100 {
		if i == listenFrom {
			unregister = hooks.Register(hookstest.Func(func(e *hooks.Event) {
				if e.Arena == a.ID() {
					got = append(got, sampled{obj, e.Offset})
				}
			}))
		}
		obj = int64(i)
		a.Alloc(48, "x")
	}
	unregister()
	return got
}

// TestStreamRunsWithoutListener checks that the trial stream runs while
// nobody listens, as package arena's does: the events after a consumer
// registers are those of the same stream listened to from the start.
func TestStreamRunsWithoutListener(t *testing.T) {
	prev := hooks.MeanBytes()
	defer hooks.SetMeanBytes(prev)
	if err := hooks.SetMeanBytes(4096); err != nil {
		t.Fatal(err)
	}
	all := run(t, 0)
	late := run(t, 1000)
	var want []sampled
	for _, s := range all {
		if s.obj >= 1000 {
			want = append(want, s)
		}
	}
	if len(want) < 5 || !slices.Equal(late, want) {
		t.Errorf("events after registering late %v, want those of the stream listened to from the start %v", late, want)
	}
}
