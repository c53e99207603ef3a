package export

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/pprofenc"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/profiler"
)

// handMade is a profile that uses every field google/pprof encodes, with
// the edge cases of its encoder: repeated fields of one, two and three
// values (packed only past two), negative numbers, labels with several
// values, numeric labels with and without units, a location without a
// mapping and a location without lines.
func handMade() *profile.Profile {
	m1 := &profile.Mapping{ID: 1, Start: 0x1000, Limit: 0x9000, Offset: 0x10, File: "/bin/x", BuildID: "abc",
		HasFunctions: true, HasFilenames: true, HasLineNumbers: true, HasInlineFrames: true}
	m2 := &profile.Mapping{ID: 2, File: "/lib/y"}
	f1 := &profile.Function{ID: 1, Name: "main.f", SystemName: "main.f", Filename: "x.go", StartLine: 3}
	f2 := &profile.Function{ID: 2, Name: "main.g", SystemName: "main.g·1", Filename: "x.go"}
	l1 := &profile.Location{ID: 1, Mapping: m1, Address: 0x1234, Line: []profile.Line{{Function: f1, Line: 7, Column: 2}, {Function: f2, Line: 9}}}
	l2 := &profile.Location{ID: 2, Mapping: m2, Address: 0x5678, Line: []profile.Line{{Function: f2, Line: 300}}, IsFolded: true}
	l3 := &profile.Location{ID: 3, Line: []profile.Line{{Function: f1}}}
	l4 := &profile.Location{ID: 4, Mapping: m1}
	return &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "a", Unit: "count"}, {Type: "b", Unit: "bytes"}},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{l1}, Value: []int64{1, -2}},
			{Location: []*profile.Location{l1, l2}, Value: []int64{0, 1 << 40},
				Label: map[string][]string{"z": {"1", "2"}, "a": {""}, "m": {"x"}}},
			{Location: []*profile.Location{l1, l2, l3, l4}, Value: []int64{3, 4},
				NumLabel: map[string][]int64{"bytes": {8, -1}, "n": {5}},
				NumUnit:  map[string][]string{"bytes": {"bytes", "kilobytes"}}},
			{Value: []int64{5, 6}, Label: map[string][]string{"z": {"1", "2"}, "a": {""}, "m": {"x"}},
				NumLabel: map[string][]int64{"k": {1}}},
		},
		Mapping:           []*profile.Mapping{m1, m2},
		Location:          []*profile.Location{l1, l2, l3, l4},
		Function:          []*profile.Function{f1, f2},
		DropFrames:        "runtime\\..*",
		KeepFrames:        "main",
		TimeNanos:         1700000000123456789,
		DurationNanos:     60e9,
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            512 * 1024,
		Comments:          []string{"one", "two", "x.go"},
		DefaultSampleType: "b",
		DocURL:            "https://example.com/doc",
	}
}

// built is the profile Build makes of a snapshot of real stacks, with
// overflow and typeless records and two label sets.
func built(t *testing.T) *profile.Profile {
	var recs []profiler.Record
	pcs := make([]uintptr, 32)
	stack := pcs[:runtime.Callers(1, pcs)]
	for i, l := range []hooks.Labels{{}, hooks.NewLabels("handler", "/a", "type", "clash")} {
		for size := int64(8); size <= 64; size += 8 {
			w, _ := estimate.WeightedBytes(size, 4096)
			recs = append(recs, profiler.Record{Stack: stack[i:], TypeName: "main.t", Labels: l, Size: size, MeanBytes: 4096,
				AllocSamples: 2, AllocTail: size, AllocBytes: 2 * w, AllocObjects: 2 * w / float64(size), InuseSamples: 1, InuseBytes: w, InuseObjects: w / float64(size)})
		}
	}
	recs = append(recs, profiler.Record{TypeName: pprofmt.TypelessTypeName, MeanBytes: 4096, Overflow: true, AllocSamples: 1, AllocBytes: 4096, AllocObjects: 10})
	now := time.Unix(1700000000, 0)
	s := &profiler.Snapshot{Start: now, End: now.Add(time.Minute), MeanBytes: 4096, Window: estimate.WindowBoth, Records: recs,
		Stats: profiler.Stats{OverflowEvents: 1, TypelessEvents: 1, Dropped: 2, MaxBuckets: 16}}
	p, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEncodeMatchesGooglePprof checks that the streaming encoder writes the
// bytes google/pprof's own encoder writes.
func TestEncodeMatchesGooglePprof(t *testing.T) {
	for _, c := range []struct {
		name string
		p    *profile.Profile
	}{
		{"empty", &profile.Profile{}},
		{"hand-made", handMade()},
		{"built from a snapshot", built(t)},
	} {
		var want, got bytes.Buffer
		if err := c.p.WriteUncompressed(&want); err != nil {
			t.Fatal(err)
		}
		if err := pprofenc.Encode(&got, c.p, nil); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: %d bytes differ from google/pprof's %d", c.name, got.Len(), want.Len())
			continue
		}
		if _, err := profile.ParseData(got.Bytes()); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
