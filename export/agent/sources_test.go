package agent

import (
	"context"
	"errors"
	"io"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/report"
	"github.com/google/pprof/profile"
)

func TestDelta(t *testing.T) {
	prev := arenaLikeProfile(3, 3000, 5000)
	cur := arenaLikeProfile(5, 5000, 2000)
	// A second site seen only before (evicted, or a reset) and a third
	// whose totals did not move and that holds nothing live.
	gone := *prev.Sample[0]
	gone.Label = map[string][]string{"type": {"main.gone"}}
	gone.Value = []int64{10, 1000, 0, 0, 10, 50}
	prev.Sample = append(prev.Sample, &gone)
	still := *prev.Sample[0]
	still.Label = map[string][]string{"type": {"main.still"}}
	still.Value = []int64{1, 100, 0, 0, 1, 5}
	prev.Sample = append(prev.Sample, &still)
	stillCur := still
	stillCur.Value = slices.Clone(still.Value)
	cur.Sample = append(cur.Sample, &stillCur)
	prev.TimeNanos, prev.DurationNanos = 1000, 500
	cur.TimeNanos, cur.DurationNanos = 1000, 2500

	d, err := profileDelta(prev, cur)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.CheckValid(); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"alloc_objects": 20, "alloc_space": 2000, "inuse_objects": 20, "inuse_space": 2000, "alloc_samples": 2, "alloc_tail": 74}
	for typ, v := range want {
		if got := sampleValue(t, d, typ); got != v {
			t.Errorf("%s = %d, want %d", typ, got, v)
		}
	}
	if len(d.Sample) != 1 || d.Sample[0].Label["type"][0] != "main.user" {
		t.Errorf("samples %v, want only main.user", d.Sample)
	}
	if d.TimeNanos != 1500 || d.DurationNanos != 2000 {
		t.Errorf("window %d+%d, want 1500+2000", d.TimeNanos, d.DurationNanos)
	}
	if !slices.Equal(d.Comments, []string{"arenaprof window=both"}) {
		t.Errorf("comments %q", d.Comments)
	}
	// The arenas handed out are a running total too: the window's count,
	// over the window; none when either side lacks one.
	prev.Comments = []string{pprofmt.PoolGetsComment(10, 1000, 500)}
	cur.Comments = []string{pprofmt.PoolGetsComment(40, 1000, 2500), "arenaprof window=end"}
	if d, err := profileDelta(prev, cur); err != nil || !slices.Equal(d.Comments, []string{"arenaprof window=both", pprofmt.PoolGetsComment(30, 1500, 2000)}) {
		t.Errorf("pool_gets: comments %q, %v", d.Comments, err)
	}
	prev.Comments = nil
	if d, err := profileDelta(prev, cur); err != nil || !slices.Equal(d.Comments, []string{"arenaprof window=both"}) {
		t.Errorf("pool_gets before only: comments %q, %v", d.Comments, err)
	}
	cur.Comments = nil
	// The inputs are untouched.
	if sampleValue(t, prev, "alloc_samples") != 3+10+1 || sampleValue(t, cur, "alloc_samples") != 5+1 {
		t.Error("Delta modified its inputs")
	}
	// Round trip through the wire format.
	if _, err := profile.ParseData(encode(t, d)); err != nil {
		t.Fatal(err)
	}

	// No previous snapshot: the profile itself.
	d, err = profileDelta(nil, cur)
	if err != nil || sampleValue(t, d, "alloc_samples") != 6 {
		t.Fatalf("profileDelta(nil, cur): %v", err)
	}
	// Incompatible profiles.
	other := arenaLikeProfile(1, 1, 1)
	other.SampleType[1].Type = "other"
	if _, err := profileDelta(prev, other); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Fatalf("mismatched sample types: %v", err)
	}
	other.SampleType = other.SampleType[:2]
	for _, s := range other.Sample {
		s.Value = s.Value[:2]
	}
	if _, err := profileDelta(prev, other); err == nil {
		t.Fatal("different numbers of sample types accepted")
	}
	if _, err := profileDelta(prev, nil); err == nil {
		t.Fatal("nil cur accepted")
	}
}

func encode(t *testing.T, p *profile.Profile) []byte {
	t.Helper()
	var b strings.Builder
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return []byte(b.String())
}

func TestSampleTypes(t *testing.T) {
	p := arenaLikeProfile(1, 1, 1)
	p.SampleType = append(p.SampleType, &profile.ValueType{Type: "goroutine", Unit: "count"}, &profile.ValueType{Type: "time", Unit: "nanoseconds"})
	got := sampleTypesOf(p)
	want := map[string]sampleTypeConfig{
		"alloc_objects": {Units: "objects", Aggregation: "sum"},
		"alloc_space":   {Units: "bytes", Aggregation: "sum"},
		"inuse_objects": {Units: "objects", Aggregation: "average"},
		"inuse_space":   {Units: "bytes", Aggregation: "average"},
		"alloc_samples": {Units: "samples", Aggregation: "sum"},
		"alloc_tail":    {Units: "bytes", Aggregation: "sum"},
		"alloc_var":     {Units: "bytes", Aggregation: "sum"},
		"alloc_wbound":  {Units: "bytes", Aggregation: "sum"},
		"goroutine":     {Units: "goroutines", Aggregation: "average"},
		"time":          {Units: "nanoseconds", Aggregation: "sum"},
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %+v, want %+v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d entries, want %d", len(got), len(want))
	}
}

// TestWallSource collects fgprof profiles: one over a sleeping goroutine,
// and one over an interval too short to hold a sample.
func TestWallSource(t *testing.T) {
	base := runtime.NumGoroutine()
	s := WallSource()
	st := s.(starter)
	if err := st.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	go func() { <-stop }() // a goroutine the wall profile sees waiting
	var samples int64
	deadline := time.Now().Add(5 * time.Second)
	for samples == 0 && time.Now().Before(deadline) {
		time.Sleep(30 * time.Millisecond)
		p, err := s.Collect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if p.PeriodType.Type != "wallclock" || p.PeriodType.Unit != "nanoseconds" {
			t.Fatalf("period type %v", p.PeriodType)
		}
		// Pyroscope files it as its wall type only under this name.
		if len(p.SampleType) != 2 || p.SampleType[1].Type != "wall" || p.SampleType[1].Unit != "nanoseconds" {
			t.Fatalf("sample types %v, want samples/count and wall/nanoseconds", p.SampleType)
		}
		if err := p.CheckValid(); err != nil {
			t.Fatal(err)
		}
		samples += sampleValue(t, p, "samples")
	}
	close(stop)
	if samples == 0 {
		t.Fatal("no wall-clock samples in 5 s")
	}
	// Back to back: possibly no sample at all; never a panic.
	for range 3 {
		p, err := s.Collect(context.Background())
		if err != nil || p == nil || p.PeriodType.Type != "wallclock" || p.SampleType[1].Type != "wall" {
			t.Fatalf("immediate collect: %v, %v", p, err)
		}
	}
	if err := s.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	checkNoLeak(t, base)
}

func TestStopFgprofRecovers(t *testing.T) {
	err := stopFgprof(func() error {
		var zero int
		_ = 1 / zero
		return nil
	})
	if !errors.Is(err, errNoWallSamples) {
		t.Fatalf("err %v", err)
	}
	p := emptyWallProfile(time.Unix(1, 0), time.Unix(2, 0))
	if err := p.CheckValid(); err != nil || p.DurationNanos != 1e9 {
		t.Fatalf("empty profile: %v, %+v", err, p)
	}
}

func TestCPUSource(t *testing.T) {
	base := runtime.NumGoroutine()
	s := CPUSource()
	if err := s.(starter).Start(context.Background()); err != nil {
		t.Skipf("CPU profiler unavailable: %v", err)
	}
	// Only one CPU profile per process: a second source, and an agent that
	// wants one, fail with a clear error and leave nothing running.
	if err := CPUSource().(starter).Start(context.Background()); !errors.Is(err, errCPUProfileInUse) {
		t.Fatalf("second CPU source: %v", err)
	}
	_, err := Start(fastConfig([]Source{WallSource(), CPUSource()}, &recorder{}))
	if !errors.Is(err, errCPUProfileInUse) || !strings.Contains(err.Error(), `source "cpu"`) {
		t.Fatalf("agent with a busy CPU profiler: %v", err)
	}
	burn(20 * time.Millisecond)
	p, err := s.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p.PeriodType == nil || p.PeriodType.Type != "cpu" {
		t.Fatalf("period type %v", p.PeriodType)
	}
	if err := s.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	// The profiler is free again.
	if err := pprof.StartCPUProfile(new(strings.Builder)); err != nil {
		t.Fatalf("CPU profiler still held: %v", err)
	}
	pprof.StopCPUProfile()
	checkNoLeak(t, base)
}

func burn(d time.Duration) {
	x := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := range 1000 {
			x += i * i
		}
	}
	_ = x
}

var sink [][]byte

func TestHeapSource(t *testing.T) {
	s := HeapSource()
	if err := s.(starter).Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// 16 MB: at the default MemProfileRate (512 KiB) no sample of them
	// with probability about exp(-32) (4 MB missed with exp(-7.8) = 4e-4).
	for range 4000 {
		sink = append(sink, make([]byte, 4096))
	}
	runtime.GC()
	p, err := s.Collect(context.Background())
	sink = nil
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type)
	}
	if !slices.Equal(types, []string{"alloc_objects", "alloc_space", "inuse_objects", "inuse_space", "alloc_samples", "alloc_tail"}) {
		t.Fatalf("sample types %v", types)
	}
	for _, smp := range p.Sample {
		for _, v := range smp.Value {
			if v < 0 {
				t.Fatalf("negative value in %v", smp.Value)
			}
		}
		if smp.Label["memory"][0] != "heap" || len(smp.NumLabel["memprofilerate"]) != 1 {
			t.Fatalf("labels %v %v", smp.Label, smp.NumLabel)
		}
	}
	// The upload reads back with intervals: the 16 MB allocated above lie
	// in the interval of this test's row (at 1-1e-6: false failure below
	// 1e-6).
	res, err := report.Table(p, report.TableOptions{By: "func", Confidence: 1 - 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		if strings.HasSuffix(r.Key, ".TestHeapSource") {
			if !(r.Lo <= 4000*4096 && 4000*4096 <= r.Hi) {
				t.Errorf("%s: 16384000 outside [%.0f, %.0f]", r.Key, r.Lo, r.Hi)
			}
			return
		}
	}
	t.Errorf("no row for TestHeapSource in %+v", res.Rows)
}

func TestDeltaSourceErrors(t *testing.T) {
	if err := DeltaSource("x", nil).(starter).Start(context.Background()); err == nil {
		t.Fatal("nil snapshot accepted")
	}
	boom := errors.New("boom")
	s := DeltaSource("arena", func(context.Context) (*profile.Profile, error) { return nil, boom })
	if s.Name() != "arena" {
		t.Fatal(s.Name())
	}
	if _, err := Start(fastConfig([]Source{s}, &recorder{})); !errors.Is(err, boom) {
		t.Fatalf("Start with a failing baseline: %v", err)
	}
}

// TestDeltaFoldedSpan gives profileDelta the profiles of a site before and
// after the profiler folded a span ID's sample into the site's sample
// without it (profiler.Profiler.Deltas): the window counts its own events
// once, the span's folded ones not again. The span's samples carry a trace
// ID too, which goes with the span ID.
func TestDeltaFoldedSpan(t *testing.T) {
	withSpan := func(p *profile.Profile, id string) *profile.Profile {
		p.Sample[0].Label["span_id"] = []string{id}
		p.Sample[0].Label["trace_id"] = []string{id + id} // folded with the span ID
		return p
	}
	for _, c := range []struct {
		name      string
		prev, cur *profile.Profile
		samples   int64 // alloc_samples of the window
		spanIDs   int64 // of them, under a span ID
	}{
		// 3 samples under the span, folded; 2 more under the site.
		{"folded", withSpan(arenaLikeProfile(3, 3000, 0), "aa"), arenaLikeProfile(5, 5000, 0), 2, 0},
		// The span's 3 samples, 2 of them folded, 1 more under the span.
		{"partly", withSpan(arenaLikeProfile(3, 3000, 0), "aa"), func() *profile.Profile {
			p := arenaLikeProfile(2, 2000, 0)
			s := *withSpan(arenaLikeProfile(2, 2000, 0), "aa").Sample[0]
			p.Sample = append(p.Sample, &s)
			return p
		}(), 1, 0},
		// A new span's sample beside the folded one.
		{"new span", withSpan(arenaLikeProfile(3, 3000, 0), "aa"), func() *profile.Profile {
			p := arenaLikeProfile(3, 3000, 0)
			s := *withSpan(arenaLikeProfile(4, 4000, 0), "bb").Sample[0]
			p.Sample = append(p.Sample, &s)
			return p
		}(), 4, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := profileDelta(c.prev, c.cur)
			if err != nil {
				t.Fatal(err)
			}
			if got := sampleValue(t, d, "alloc_samples"); got != c.samples {
				t.Errorf("alloc_samples %d, want %d", got, c.samples)
			}
			if got := sampleValue(t, d, "alloc_space"); got != 1000*c.samples {
				t.Errorf("alloc_space %d, want %d", got, 1000*c.samples)
			}
			var spans int64
			for _, s := range d.Sample {
				if len(s.Label["span_id"]) > 0 {
					spans += s.Value[4]
				}
			}
			if spans != c.spanIDs {
				t.Errorf("%d samples under a span ID, want %d", spans, c.spanIDs)
			}
		})
	}
}
