package agent

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofenc"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// rssKeep keeps heap objects live, so that the profile has heap rows.
var rssKeep [][]byte

// TestRSSSource collects the resident-memory profile and checks how the
// agent sends it: a level (average aggregation), to Pyroscope with its
// heap rows' object size and MemProfileRate as string labels; and that a
// read without smaps marks every sample.
func TestRSSSource(t *testing.T) {
	for range 200 {
		b := make([]byte, 64<<10)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1 // resident: a page never written is not
		}
		rssKeep = append(rssKeep, b)
	}
	runtime.GC()
	defer func() { rssKeep = nil }()
	s := RSSSource()
	if s.Name() != "rss" {
		t.Errorf("name %q, want rss", s.Name())
	}
	p, err := s.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !pprofmt.IsRSS(p) {
		t.Fatalf("sample types %v: not a resident-memory profile", p.SampleType)
	}
	types := sampleTypesOf(p)
	for _, st := range p.SampleType {
		if types[st.Type].Aggregation != "average" {
			t.Errorf("%s: aggregation %q, want average (a level)", st.Type, types[st.Type].Aggregation)
		}
	}
	if isMemoryProfile(types) || !isRSSProfile(types) {
		t.Errorf("types %v: memory %v, rss %v; want an rss profile, not a memory one", types, isMemoryProfile(types), isRSSProfile(types))
	}
	opts := pyroscopeEncoding(types, true)
	if opts == nil {
		t.Fatal("no Pyroscope encoding for the resident-memory profile")
	}
	var buf bytes.Buffer
	if err := pprofenc.WriteGzip(&buf, p, opts); err != nil {
		t.Fatal(err)
	}
	q, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	_, ic, ok := pprofmt.RSSIndex(q)
	if !ok {
		t.Fatalf("sample types %v: not a resident-memory profile", q.SampleType)
	}
	rows := 0
	for _, smp := range q.Sample {
		if smp.Value[ic] == 0 {
			continue
		}
		rows++
		if len(smp.Label[pprofmt.LabelBytes]) != 1 || len(smp.Label[pprofmt.LabelHeapRate]) != 1 {
			t.Errorf("a heap row sent to Pyroscope with labels %v: want bytes and memprofilerate as string labels", smp.Label)
		}
	}
	if rows == 0 {
		t.Error("no go/heap/live row with a count: 12.5 MiB of 64 KiB objects were live")
	}

	markSmapsUnread(p)
	shared := p.Sample[0].Label
	for _, smp := range p.Sample {
		if v := smp.Label[pprofmt.LabelSmaps]; len(v) != 1 || v[0] != pprofmt.SmapsUnread {
			t.Fatalf("a sample's labels %v after markSmapsUnread", smp.Label)
		}
		if smp.Label[pprofmt.LabelClass] == nil {
			t.Fatalf("a sample lost its class: %v", smp.Label)
		}
	}
	shared[pprofmt.LabelSmaps] = []string{"x"}
	if p.Sample[1].Label[pprofmt.LabelSmaps][0] != pprofmt.SmapsUnread {
		t.Error("samples share the label map markSmapsUnread wrote")
	}
}
