package pprofenc

import (
	"bytes"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// testProfile returns a memory profile of n arena samples (types t0..t2,
// sharing label maps as export.Build does) and one Go heap sample.
func testProfile(n int) *profile.Profile {
	f := &profile.Function{ID: 1, Name: "main.f", SystemName: "main.f", Filename: "f.go"}
	l := &profile.Location{ID: 1, Address: 0x10, Line: []profile.Line{{Function: f, Line: 3}}}
	p := &profile.Profile{
		SampleType: pprofmt.SampleTypes(),
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:     4096,
		Function:   []*profile.Function{f},
		Location:   []*profile.Location{l},
	}
	var labels []map[string][]string
	for i := range 3 {
		labels = append(labels, map[string][]string{pprofmt.LabelType: {"t" + string(rune('0'+i))}})
	}
	num := map[string][]int64{pprofmt.LabelMean: {4096}, pprofmt.LabelBytes: {32}}
	for i := range n {
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{l}, Value: []int64{1, 32, 1, 32, 1, 8},
			Label: labels[i%3], NumLabel: num})
	}
	p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{l}, Value: []int64{1, 48, 0, 0, 1, 0},
		Label:    map[string][]string{pprofmt.LabelMemory: {pprofmt.MemoryHeap}},
		NumLabel: map[string][]int64{pprofmt.LabelHeapRate: {512}, pprofmt.LabelBytes: {48}}})
	return p
}

var pyroscope = &Options{
	NumAsString:     []string{pprofmt.LabelMean, pprofmt.LabelHeapRate},
	HeapNumAsString: []string{pprofmt.LabelBytes},
	TypeFrames:      true,
}

// TestOptions decodes what each option adds.
func TestOptions(t *testing.T) {
	var buf bytes.Buffer
	if err := Encode(&buf, testProfile(4), pyroscope); err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseUncompressed(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	for i, s := range p.Sample {
		heap := i == len(p.Sample)-1
		leaf := s.Location[0].Line[0].Function
		switch {
		case heap && (len(s.Location) != 1 || s.Label[pprofmt.LabelBytes][0] != "48" || s.Label[pprofmt.LabelHeapRate][0] != "512"):
			t.Errorf("heap sample: %d frames, labels %v", len(s.Location), s.Label)
		case !heap && (len(s.Location) != 2 || leaf.Name != s.Label[pprofmt.LabelType][0] || leaf.Filename != TypeFrameFile ||
			s.Label[pprofmt.LabelMean][0] != "4096" || len(s.Label[pprofmt.LabelBytes]) != 0):
			t.Errorf("arena sample %d: leaf %s in %s, labels %v", i, leaf.Name, leaf.Filename, s.Label)
		}
	}
	if got := len(p.Function); got != 4 {
		t.Errorf("%d functions, want 1 and a type frame per type (3)", got)
	}
}

// TestDropLabels: the labels DropLabels names are left out of every
// sample, the others kept.
func TestDropLabels(t *testing.T) {
	src := testProfile(3)
	src.Sample[0].Label = map[string][]string{pprofmt.LabelType: {"t0"}, "span_id": {"00000000000000aa"}, "trace_id": {"000000000000000000000000000000bb"}}
	var buf bytes.Buffer
	if err := Encode(&buf, src, &Options{DropLabels: []string{"trace_id"}}); err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseUncompressed(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range p.Sample {
		if len(s.Label["trace_id"]) != 0 || len(s.Label[pprofmt.LabelType]) != map[bool]int{true: 0, false: 1}[i == len(p.Sample)-1] {
			t.Errorf("sample %d: labels %v", i, s.Label)
		}
	}
	if got := p.Sample[0].Label["span_id"]; len(got) != 1 || got[0] != "00000000000000aa" {
		t.Errorf("span_id %v, want it kept", got)
	}
}

// TestWriterReuse: a Writer used for several profiles in turn, with and
// without options, writes each as a fresh one does.
func TestWriterReuse(t *testing.T) {
	var w Writer
	for i, c := range []struct {
		n    int
		opts *Options
	}{{5, pyroscope}, {2, nil}, {7, pyroscope}, {1, &Options{TypeFrames: true}}, {3, nil}} {
		p := testProfile(c.n)
		var got, want bytes.Buffer
		if err := w.Encode(&got, p, c.opts); err != nil {
			t.Fatal(err)
		}
		if err := new(Writer).Encode(&want, p, c.opts); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("profile %d: reused writer wrote %d bytes, a fresh one %d", i, got.Len(), want.Len())
		}
		if c.opts == nil {
			var theirs bytes.Buffer
			if err := p.WriteUncompressed(&theirs); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), theirs.Bytes()) {
				t.Fatalf("profile %d: not google/pprof's bytes", i)
			}
		}
	}
}

// TestWriterAllocs: once warm, a Writer's allocations per profile do not
// grow with its samples: they are those of the label sets encoded (4
// here) and the strings Options adds.
func TestWriterAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops pooled memory at random")
	}
	allocs := func(n int) float64 {
		var w Writer
		p := testProfile(n)
		var buf bytes.Buffer
		return testing.AllocsPerRun(20, func() {
			buf.Reset()
			if err := w.WriteGzip(&buf, p, pyroscope); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(200), allocs(20000)
	if small != large || small > 40 {
		t.Errorf("%v allocations per profile of 200 samples, %v of 20,000: want the same, at most 40", small, large)
	}
}

// TestArenaVariance decodes what Options.ArenaVariance adds: the two
// sample types, each arena sample's variance sums and its label, nothing
// on the Go heap sample, and nothing at all to a Go heap profile.
func TestArenaVariance(t *testing.T) {
	decode := func(t *testing.T, p *profile.Profile) *profile.Profile {
		t.Helper()
		var buf bytes.Buffer
		if err := Encode(&buf, p, &Options{ArenaVariance: true, TypeFrames: true}); err != nil {
			t.Fatal(err)
		}
		q, err := profile.ParseUncompressed(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if err := q.CheckValid(); err != nil {
			t.Fatal(err)
		}
		return q
	}
	p := testProfile(4)
	// One sample without a size (an overflow sample) gets no sums.
	p.Sample[3].NumLabel = map[string][]int64{pprofmt.LabelMean: {4096}}
	q := decode(t, p)
	if n := len(q.SampleType); n != pprofmt.NumVarSampleTypes || q.SampleType[pprofmt.IndexAllocVar].Type != "alloc_var" || q.SampleType[pprofmt.IndexAllocWBound].Type != "alloc_wbound" {
		t.Fatalf("sample types %v", q.SampleType)
	}
	wantV, wantWB := pprofmt.VarianceSums(1, 32, 4096)
	for i, s := range q.Sample {
		marked := len(s.Label[pprofmt.LabelVarFormat]) == 1 && s.Label[pprofmt.LabelVarFormat][0] == pprofmt.VarFormat
		v, wb := s.Value[pprofmt.IndexAllocVar], s.Value[pprofmt.IndexAllocWBound]
		if i < 3 {
			if !marked || v != wantV || wb != wantWB || v == 0 {
				t.Errorf("arena sample %d: label %v, sums %d, %d, want %d, %d", i, s.Label, v, wb, wantV, wantWB)
			}
			continue
		}
		if marked || v != 0 || wb != 0 {
			t.Errorf("sample %d (overflow or Go heap): label %v, sums %d, %d", i, s.Label, v, wb)
		}
	}
	heapOnly := testProfile(0)
	if q := decode(t, heapOnly); len(q.SampleType) != pprofmt.NumSampleTypes {
		t.Errorf("a Go heap profile got sample types %v", q.SampleType)
	}
	// Encoding again what already carries the sums adds nothing.
	if r := decode(t, q); len(r.SampleType) != pprofmt.NumVarSampleTypes {
		t.Errorf("encoded twice: %d sample types", len(r.SampleType))
	}
}
