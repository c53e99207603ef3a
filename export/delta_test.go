package export_test

import (
	"github.com/arenaprof/arenaprof/internal/pprofmt"

	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/profiler"
	"github.com/arenaprof/arenaprof/report"
)

func sumValues(p *profile.Profile) []int64 {
	out := make([]int64, len(p.SampleType))
	for _, s := range p.Sample {
		for i, v := range s.Value {
			out[i] += v
		}
	}
	return out
}

// A delta that sees only the second half of a workload reports that half:
// the true bytes lie inside the interval computed from the delta's raw sums
// at its window, at confidence 1-1e-6 (false-failure probability below
// 1e-6); in-use stays absolute. Merging the first half with the delta adds
// them up.
func TestDeltaSecondHalf(t *testing.T) {
	const mean, n = 512, 20000 // 320000 bytes per half, about 625 events
	setMeanBytes(t, mean)
	p := startProfiler(t)
	a := newTestArena(t, 7, hooks.Labels{})
	var s1, s2 *profiler.Snapshot
	for half := range 2 {
		allocSmall(a, n)
		if half == 0 {
			s1 = p.Snapshot()
		}
	}
	s2 = p.Snapshot()

	delta := roundTrip(t, must(export.Build(must(profiler.Delta(s1, s2)))))
	full := roundTrip(t, must(export.Build(s2)))
	first := roundTrip(t, must(export.Build(must(profiler.Delta(nil, s1)))))
	if w := pprofmt.WindowOf(delta); w != estimate.WindowBoth {
		t.Errorf("delta window %v", w)
	}
	if delta.TimeNanos != s1.End.UnixNano() || delta.DurationNanos != int64(s2.End.Sub(s1.End)) {
		t.Errorf("delta time %d+%d", delta.TimeNanos, delta.DurationNanos)
	}
	dv, fv, v1 := sumValues(delta), sumValues(full), sumValues(first)
	iv, err := estimate.SingleMeanInterval(dv[pprofmt.IndexAllocSamples], dv[pprofmt.IndexAllocTail], mean, 1-1e-6, pprofmt.WindowOf(delta))
	if err != nil {
		t.Fatal(err)
	}
	if truth := float64(n * 16); truth < iv.Lo || truth > iv.Hi {
		t.Errorf("second half: %v bytes outside [%v, %v]", truth, iv.Lo, iv.Hi)
	}
	if dv[pprofmt.IndexInuseSpace] != fv[pprofmt.IndexInuseSpace] || dv[pprofmt.IndexInuseObjects] != fv[pprofmt.IndexInuseObjects] {
		t.Errorf("delta in-use %v, full in-use %v", dv, fv)
	}
	for _, i := range []int{pprofmt.IndexAllocSamples, pprofmt.IndexAllocTail} {
		if v1[i]+dv[i] != fv[i] {
			t.Errorf("value %d: %d + %d != %d", i, v1[i], dv[i], fv[i])
		}
	}

	merged, err := report.Merge(first, delta)
	if err != nil {
		t.Fatal(err)
	}
	merged = roundTrip(t, merged)
	mv := sumValues(merged)
	for _, i := range []int{pprofmt.IndexAllocSamples, pprofmt.IndexAllocTail} {
		if mv[i] != fv[i] {
			t.Errorf("merged value %d: %d, want %d", i, mv[i], fv[i])
		}
	}
	// Weighted values were rounded once per sample in each part.
	if d := mv[pprofmt.IndexAllocSpace] - fv[pprofmt.IndexAllocSpace]; d < -1 || d > 1 {
		t.Errorf("merged alloc_space %d, full %d", mv[pprofmt.IndexAllocSpace], fv[pprofmt.IndexAllocSpace])
	}
	if w := pprofmt.WindowOf(merged); w != estimate.WindowBoth {
		t.Errorf("merged window %v", w)
	}
	if _, err := report.Merge(); err == nil {
		t.Error("Merge(): no error")
	}
	if _, err := profiler.Delta(s2, s1); err == nil {
		t.Error("reversed delta: no error")
	}
}

func TestDeltas(t *testing.T) {
	setMeanBytes(t, 1)
	p := startProfiler(t)
	a := newTestArena(t, 8, hooks.Labels{})
	var prev *profiler.Snapshot // nil: the first window starts when p started
	var got [][]int64
	var windows []estimate.Window
	for _, n := range []int{5, 3, 0} {
		allocSmall(a, n)
		cur := p.Snapshot()
		d, err := profiler.Delta(prev, cur)
		if err != nil {
			t.Fatal(err)
		}
		prev = cur
		prof := roundTrip(t, must(export.Build(d)))
		got = append(got, sumValues(prof))
		windows = append(windows, pprofmt.WindowOf(prof))
	}
	want := [][]int64{
		{5, 80, 5, 80, 5, 80},
		{3, 48, 8, 128, 3, 48},
		{0, 0, 8, 128, 0, 0}, // nothing allocated; in-use still reported
	}
	for i := range want {
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Errorf("window %d: %v, want %v", i, got[i], want[i])
				break
			}
		}
	}
	if windows[0] != estimate.WindowEnd || windows[1] != estimate.WindowBoth || windows[2] != estimate.WindowBoth {
		t.Errorf("windows %v", windows)
	}
}
