package rss

import (
	"bytes"
	"testing"

	"github.com/google/pprof/profile"
)

// TestProfilesShareSymbols builds profiles one after another, and one of
// an earlier reading after the symbol cache was emptied: each is valid,
// reads back whole, and lists every location and function its samples
// use once (the cached ones they share, ids unique across).
func TestProfilesShareSymbols(t *testing.T) {
	held := depthSink(300)
	r1 := Read()
	p1, err := Profile(r1, Classify(r1))
	if err != nil {
		t.Fatal(err)
	}
	r2 := Read()
	p2, err := Profile(r2, Classify(r2))
	if err != nil {
		t.Fatal(err)
	}
	symbols.Lock()
	symbols.pcs = nil // emptied at the next use
	symbols.Unlock()
	p3, err := Profile(r1, Classify(r1))
	if err != nil {
		t.Fatal(err)
	}
	benchSink = append(benchSink, held...)
	defer func() { benchSink = nil }()
	for i, p := range []*profile.Profile{p1, p2, p3} {
		if err := p.CheckValid(); err != nil {
			t.Fatalf("profile %d: %v", i+1, err)
		}
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			t.Fatal(err)
		}
		q, err := profile.Parse(&buf)
		if err != nil {
			t.Fatalf("profile %d: %v", i+1, err)
		}
		if len(q.Sample) != len(p.Sample) || len(q.Location) != len(p.Location) || len(q.Function) != len(p.Function) {
			t.Errorf("profile %d read back: %d samples, %d locations, %d functions; wrote %d, %d, %d", i+1,
				len(q.Sample), len(q.Location), len(q.Function), len(p.Sample), len(p.Location), len(p.Function))
		}
		used := map[*profile.Location]bool{}
		for _, s := range p.Sample {
			for _, l := range s.Location {
				used[l] = true
			}
		}
		if len(used) != len(p.Location) {
			t.Errorf("profile %d: its samples use %d locations, it lists %d", i+1, len(used), len(p.Location))
		}
	}
}

// depthSink allocates n live objects from distinct stacks (buckets of
// bench_test.go), sampled at the MemProfileRate in force.
func depthSink(n int) [][]byte {
	benchSink = nil
	buckets(n)
	out := benchSink
	benchSink = nil
	return out
}
