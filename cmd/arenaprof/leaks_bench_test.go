package main

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// writeLeakBenchSeries writes n runtime/pprof heap profiles of sites
// functions each (MemProfileRate 512 KiB, one snapshot a second) to dir,
// with Config.Dir's names: the in-use counts of each site drift at random
// and one site leaks.
func writeLeakBenchSeries(tb testing.TB, dir string, n, sites int) {
	tb.Helper()
	const rate = 512 << 10
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:     rate,
	}
	counts, allocs := make([]int64, sites), make([]int64, sites)
	for i := range sites {
		name := fmt.Sprintf("github.com/acme/shop/internal/handlers.(*Server).site%04d", i)
		f := &profile.Function{ID: uint64(i + 1), Name: name, SystemName: name, Filename: "handlers.go"}
		caller := &profile.Function{ID: uint64(sites + i + 1), Name: name + ".func1", SystemName: name + ".func1", Filename: "handlers.go"}
		loc := &profile.Location{ID: uint64(i + 1), Address: uint64(0x400000 + 16*i), Line: []profile.Line{{Function: f, Line: int64(i)}, {Function: caller, Line: int64(i)}}}
		p.Function = append(p.Function, f, caller)
		p.Location = append(p.Location, loc)
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: make([]int64, 4),
			NumLabel: map[string][]int64{"bytes": {512}}, NumUnit: map[string][]string{"bytes": {"bytes"}}})
		counts[i] = 100
	}
	r := rand.New(rand.NewPCG(46, 4))
	t0 := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	for k := range n {
		at := t0.Add(time.Duration(k) * time.Second)
		p.TimeNanos = at.UnixNano()
		for i, s := range p.Sample {
			counts[i] = max(0, counts[i]+int64(r.IntN(3))-1)
			if i == 0 && k%10 == 0 {
				counts[i]++ // a leak of about 0.1 samples a second
			}
			w := int64(float64(rate) + 256)
			allocs[i]++ // cumulative: a sample a second
			s.Value[0], s.Value[1] = allocs[i]*w/512, allocs[i]*w
			s.Value[2], s.Value[3] = counts[i]*w/512, counts[i]*w
		}
		buf.Reset()
		if err := p.Write(&buf); err != nil {
			tb.Fatal(err)
		}
		name := at.Format(dirTimeLayout) + "-shop-heap.pb.gz"
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkLeaks reads 3,600 snapshots (an hour of 1 s snapshots) of a
// 1,000-site heap profile from a Config.Dir directory and fits every
// site: the goal is at most 10 s and 256 MiB (BENCHMARKS.md measures the
// peak RSS of the command on the same series).
func BenchmarkLeaks(b *testing.B) {
	dir := b.TempDir()
	writeLeakBenchSeries(b, dir, 3600, 1000)
	b.ResetTimer()
	for b.Loop() {
		if code := run([]string{"leaks", "-n", "10", dir}, io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

// TestLeaksBenchSeriesDir writes the series of BenchmarkLeaks to the
// directory ARENAPROF_LEAKS_BENCH_DIR names, for measuring the command's
// peak RSS (BENCHMARKS.md); without it, it does nothing.
func TestLeaksBenchSeriesDir(t *testing.T) {
	dir := os.Getenv("ARENAPROF_LEAKS_BENCH_DIR")
	if dir == "" {
		t.Skip("ARENAPROF_LEAKS_BENCH_DIR not set")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeLeakBenchSeries(t, dir, 3600, 1000)
}
