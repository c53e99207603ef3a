package export

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/goheap"
	"github.com/arenaprof/arenaprof/internal/pprofenc"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/unwind"
	"github.com/arenaprof/arenaprof/profiler"
)

// mergeMemory is what combineMemory replaces: the heap profile converted,
// labels set on a copy of each arena sample's map, profile.Merge.
func mergeMemory(arena, heap *profile.Profile) (*profile.Profile, error) {
	for _, smp := range arena.Sample {
		smp.Label = withLabel(smp.Label, pprofmt.LabelMemory, pprofmt.MemoryArena)
	}
	h, err := goheap.Convert(heap)
	if err != nil {
		return nil, err
	}
	h.DefaultSampleType = arena.DefaultSampleType
	h.Period = arena.Period
	h.Comments = nil
	m, err := profile.Merge([]*profile.Profile{arena, h})
	if err != nil {
		return nil, err
	}
	m.Comments = append(m.Comments, fmt.Sprintf("arenaprof memory: arena samples (memory=arena) and the Go heap's allocs profile at MemProfileRate %d (memory=heap)", heap.Period),
		pprofmt.GoVersionComment(runtime.Version()))
	return m, nil
}

// canonical returns p's header and its samples as sorted lines: each
// sample's frames (function, file, line, start line) and labels, with the
// values of all samples that have them summed (Merge sums them; the runtime
// may write two records that read the same once its own frames are
// hidden). Two profiles with equal canonical forms read the same in every
// pprof report.
func canonical(p *profile.Profile) []string {
	sums := map[string][]int64{}
	for _, s := range p.Sample {
		var b strings.Builder
		for _, l := range s.Location {
			fmt.Fprintf(&b, "%x@%s;", l.Address-l.Mapping.Start, l.Mapping.File)
			for _, ln := range l.Line {
				fmt.Fprintf(&b, "%s:%s:%d:%d|", ln.Function.Name, ln.Function.Filename, ln.Line, ln.Function.StartLine)
			}
		}
		fmt.Fprintf(&b, " %v %v %v", s.Label, s.NumLabel, s.NumUnit)
		k := b.String()
		if sums[k] == nil {
			sums[k] = make([]int64, len(s.Value))
		}
		for i, v := range s.Value {
			sums[k][i] += v
		}
	}
	var lines []string
	for k, v := range sums {
		lines = append(lines, fmt.Sprint(k, v))
	}
	slices.Sort(lines)
	var types []string
	for _, st := range append(p.SampleType, p.PeriodType) {
		types = append(types, st.Type+"/"+st.Unit)
	}
	return append([]string{fmt.Sprint(types, p.DefaultSampleType, p.Period,
		p.TimeNanos, p.DurationNanos, p.Comments)}, lines...)
}

// TestCombineMemoryMatchesMerge: the memory profile reads the same as the
// profile.Merge of its two parts, but for its window (see spanOf).
func TestCombineMemoryMatchesMerge(t *testing.T) {
	var stack [unwind.MaxStackDepth]uintptr
	labels := []hooks.Labels{{}, hooks.NewLabels("handler", "/a"), hooks.NewLabels("handler", "/b")}
	var recs []profiler.Record
	for i := range 300 {
		n := testCallers(stack[:])
		recs = append(recs, profiler.Record{
			Stack: stack[:n:n], TypeName: "main.t", Labels: labels[i%3], Size: int64(8 * (i + 1)), MeanBytes: 512,
			AllocSamples: 2, AllocTail: 9, AllocBytes: 4096, AllocObjects: 4096 / float64(8*(i+1)),
		})
	}
	now := time.Now()
	snap := &profiler.Snapshot{Start: now.Add(-time.Minute), End: now, MeanBytes: 512, Window: estimate.WindowEnd, Records: recs}
	// The process's allocs profile, with at least one sample: first in its
	// package's order, this test read about 4 samples from the process's
	// start and no GC cycle (none on about 2% of runs, going by a Poisson
	// count of that mean). A 16 MiB object is sampled at the default
	// MemProfileRate (512 KiB) but with probability exp(-32) = 1.3e-14,
	// and the GC publishes it.
	combineHeapSink = make([]byte, 16<<20)
	combineHeapSink = nil
	runtime.GC()
	var buf bytes.Buffer
	if err := pprof.Lookup("allocs").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	heap, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(heap.Sample) == 0 {
		t.Fatal("an empty heap profile tests nothing")
	}
	arena1, err := Build(snap)
	if err != nil {
		t.Fatal(err)
	}
	arena2, err := Build(snap)
	if err != nil {
		t.Fatal(err)
	}
	want, err := mergeMemory(arena1, heap.Copy())
	if err != nil {
		t.Fatal(err)
	}
	// Merge adds the two durations up (profiles of successive windows);
	// the memory profile's parts cover one window side by side, so it
	// spans the two windows instead.
	want.TimeNanos, want.DurationNanos = spanOf(arena2.TimeNanos, arena2.DurationNanos, heap.TimeNanos, heap.DurationNanos)
	got, err := combineMemory(arena2, heap.Copy())
	if err != nil {
		t.Fatal(err)
	}
	if err := got.CheckValid(); err != nil {
		t.Fatal(err)
	}
	var enc bytes.Buffer
	if err := writeProfile(&enc, got); err != nil {
		t.Fatal(err)
	}
	back, err := profile.Parse(&enc)
	if err != nil {
		t.Fatal(err)
	}
	w, g, b := canonical(want), canonical(got), canonical(back)
	if !slices.Equal(w, g) || !slices.Equal(g, b) {
		for i := range max(len(w), len(g)) {
			var x, y string
			if i < len(w) {
				x = w[i]
			}
			if i < len(g) {
				y = g[i]
			}
			if x != y {
				t.Fatalf("first difference at line %d:\nMerge:   %s\ncombine: %s", i, x, y)
			}
		}
		t.Fatal("the encoded profile reads differently")
	}
	if len(got.Function) != len(want.Function) {
		t.Errorf("%d functions, Merge gives %d", len(got.Function), len(want.Function))
	}
	// The streaming encoder writes the combined profile byte for byte as
	// google/pprof does.
	var mine, theirs bytes.Buffer
	if err := pprofenc.Encode(&mine, got, nil); err != nil {
		t.Fatal(err)
	}
	if err := got.WriteUncompressed(&theirs); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mine.Bytes(), theirs.Bytes()) {
		t.Errorf("pprofenc.Encode: %d bytes, google/pprof: %d, not the same", mine.Len(), theirs.Len())
	}
}

//go:noinline
func testCallers(pcs []uintptr) int {
	return runtimeCallers(pcs)
}

// combineHeapSink keeps TestCombineMemoryMatchesMerge's allocation on the heap.
var combineHeapSink []byte

var runtimeCallers = func(pcs []uintptr) int { return runtime.Callers(1, pcs) }

func TestSpanOf(t *testing.T) {
	for _, c := range []struct{ t1, d1, t2, d2, start, length int64 }{
		{100, 50, 100, 50, 100, 50}, // one window, side by side: not 100 long
		{100, 50, 120, 50, 100, 70},
		{120, 50, 100, 10, 100, 70},
		{100, 50, 0, 30, 100, 50},
		{0, 30, 100, 50, 100, 50},
		{0, 30, 0, 40, 0, 40},
	} {
		if s, l := spanOf(c.t1, c.d1, c.t2, c.d2); s != c.start || l != c.length {
			t.Errorf("spanOf(%d, %d, %d, %d) = %d, %d, want %d, %d", c.t1, c.d1, c.t2, c.d2, s, l, c.start, c.length)
		}
	}
}
