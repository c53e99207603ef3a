package pprofenc

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/goheap"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// readHeapDelta writes h's last interval and decodes it.
func readHeapDelta(t *testing.T, h *HeapDelta, opts *Options) *profile.Profile {
	t.Helper()
	var buf bytes.Buffer
	if err := h.WriteGzip(&buf, opts); err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	return p
}

// sampleKey names a sample by its stack's functions and its object size.
func sampleKey(s *profile.Sample) string {
	var b strings.Builder
	for _, l := range s.Location {
		for _, ln := range l.Line {
			b.WriteString(ln.Function.Name)
			b.WriteByte(';')
		}
	}
	return fmt.Sprint(b.String(), s.NumLabel[pprofmt.LabelBytes])
}

// TestHeapDeltaMatchesRuntimePprof: a HeapDelta's first Read gives what
// goheap.Convert makes of runtime/pprof's heap profile read at the same
// moment: the same samples (stacks, sizes), values and labels, the same
// period and Go version comment; buckets whose values are all zero are
// left out.
func TestHeapDeltaMatchesRuntimePprof(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no cycle: the runtime's profile stays as it is
	runtime.GC()
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	raw, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want, err := goheap.Convert(raw)
	if err != nil {
		t.Fatal(err)
	}
	h := NewHeapDelta()
	if err := h.Read(nil); err != nil {
		t.Fatal(err)
	}
	got := readHeapDelta(t, h, nil)
	if got.Period != want.Period || !slices.Equal(pprofmt.GoVersionsOf(got), pprofmt.GoVersionsOf(want)) || got.DefaultSampleType != want.DefaultSampleType {
		t.Errorf("period %d, versions %v, default %s; runtime/pprof: %d, %v, %s", got.Period, pprofmt.GoVersionsOf(got), got.DefaultSampleType,
			want.Period, pprofmt.GoVersionsOf(want), want.DefaultSampleType)
	}
	sums := func(p *profile.Profile) map[string][]int64 {
		m := map[string][]int64{}
		for _, s := range p.Sample {
			if !slices.ContainsFunc(s.Value, func(v int64) bool { return v != 0 }) {
				continue // a bucket with nothing yet: HeapDelta leaves it out, as deltas did
			}
			if s.Label[pprofmt.LabelMemory][0] != pprofmt.MemoryHeap || s.NumLabel[pprofmt.LabelHeapRate][0] != p.Period {
				t.Fatalf("labels %v %v", s.Label, s.NumLabel)
			}
			k := sampleKey(s)
			if m[k] == nil {
				m[k] = make([]int64, len(s.Value))
			}
			for i, v := range s.Value {
				m[k][i] += v
			}
		}
		return m
	}
	g, w := sums(got), sums(want)
	for k, wv := range w {
		if gv := g[k]; !slices.Equal(gv, wv) {
			t.Errorf("sample %s: values %v, runtime/pprof %v", k, gv, wv)
		}
	}
	for k := range g {
		if w[k] == nil {
			t.Errorf("sample %s not in runtime/pprof's profile", k)
		}
	}
}

//go:noinline
func heapTestAlloc(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = make([]byte, 4096)
	}
	return out
}

var heapTestSink [][]byte

// TestHeapDeltaInterval: a later Read gives the interval's allocations,
// whose raw count (alloc_samples) goheap.RawCount recovers from the scaled
// values, and the objects in use in full.
//
// At the default MemProfileRate (512 KiB) the 2,000 objects of 4 KiB
// (8 MB) go unsampled with probability about exp(-8 MB/512 KiB) =
// exp(-15.6) = 1.7e-7, the test's false failure per run; 500 of them
// (2 MB) missed with exp(-3.9) = 2%, and did once in CI.
func TestHeapDeltaInterval(t *testing.T) {
	h := NewHeapDelta()
	runtime.GC()
	if err := h.Read(nil); err != nil {
		t.Fatal(err)
	}
	heapTestSink = heapTestAlloc(2000)
	defer func() { heapTestSink = nil }()
	runtime.GC()
	runtime.GC()
	if err := h.Read(nil); err != nil {
		t.Fatal(err)
	}
	p := readHeapDelta(t, h, &Options{NumAsString: []string{pprofmt.LabelHeapRate}, HeapNumAsString: []string{pprofmt.LabelBytes}, TypeFrames: true})
	found := false
	for _, s := range p.Sample {
		v := s.Value
		size := s.NumLabel[pprofmt.LabelBytes][0]
		lo, hi, err := goheap.RawCount(v[pprofmt.IndexAllocObjects], v[pprofmt.IndexAllocSpace], size, p.Period)
		if err != nil || v[pprofmt.IndexAllocSamples] < lo || v[pprofmt.IndexAllocSamples] > hi {
			t.Errorf("sample %s: values %v: raw count in [%d, %d] (%v)", sampleKey(s), v, lo, hi, err)
		}
		if got := s.Label[pprofmt.LabelBytes]; len(got) != 1 || got[0] != fmt.Sprint(size) {
			t.Errorf("string label bytes %v, size %d", got, size)
		}
		if got := s.Label[pprofmt.LabelHeapRate]; len(got) != 1 || got[0] != fmt.Sprint(p.Period) {
			t.Errorf("string label memprofilerate %v", got)
		}
		if strings.Contains(sampleKey(s), "heapTestAlloc") && size == 4096 {
			found = true
			if v[pprofmt.IndexAllocSamples] == 0 || v[pprofmt.IndexInuseSpace] == 0 {
				t.Errorf("heapTestAlloc's sample: %v", v)
			}
		}
	}
	if !found {
		t.Error("no sample of heapTestAlloc's 8 MB")
	}
	if p.DurationNanos <= 0 {
		t.Errorf("duration %d", p.DurationNanos)
	}
	// Nothing allocated since: no allocations, the objects in use again.
	if err := h.Read(nil); err != nil {
		t.Fatal(err)
	}
	for _, s := range readHeapDelta(t, h, nil).Sample {
		if s.Value[pprofmt.IndexAllocSamples] < 0 || s.Value[pprofmt.IndexAllocObjects] < 0 {
			t.Errorf("sample %s: %v", sampleKey(s), s.Value)
		}
	}
}

// TestHeapDeltaKeepsRecords: a Read whose profile grew by a few buckets
// reuses the records it has room for (runtime.MemProfile's records are
// 288 bytes each: reading 100,000 buckets anew costs 29 MB).
func TestHeapDeltaKeepsRecords(t *testing.T) {
	defer func(f func([]runtime.MemProfileRecord, bool) (int, bool)) { memProfile = f }(memProfile)
	n := 100
	memProfile = func(p []runtime.MemProfileRecord, _ bool) (int, bool) {
		if len(p) < n {
			return n, false
		}
		for i := range n {
			p[i] = runtime.MemProfileRecord{AllocBytes: 64, AllocObjects: 1, Stack0: [32]uintptr{uintptr(i + 1)}}
		}
		return n, true
	}
	h := NewHeapDelta()
	if err := h.Read(nil); err != nil {
		t.Fatal(err)
	}
	first := &h.records[:1][0]
	n += 5
	if err := h.Read(nil); err != nil {
		t.Fatal(err)
	}
	if len(h.records) != n || &h.records[:1][0] != first {
		t.Errorf("%d records, reallocated %v", len(h.records), &h.records[:1][0] != first)
	}
}
