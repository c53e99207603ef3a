package pprofmt

import (
	"bytes"
	"reflect"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/estimate"
)

// arenaProfile returns an arenaprof profile with the given samples and
// comments (period 4096).
func arenaProfile(comments []string, samples ...*profile.Sample) *profile.Profile {
	return &profile.Profile{
		SampleType: SampleTypes(),
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:     4096,
		Comments:   comments,
		Sample:     samples,
	}
}

func arenaSample(labels map[string][]string, num map[string][]int64) *profile.Sample {
	return &profile.Sample{Value: []int64{1, 4096, 0, 0, 1, 10}, Label: labels, NumLabel: num}
}

// TestDescribe: the facts of each kind of profile, read in one pass, and
// the errors CheckMeans gives, kept in MeansErr.
func TestDescribe(t *testing.T) {
	heap := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}, {Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:     512 * 1024,
		Comments:   []string{GoVersionComment("go1.26.8")},
		Sample:     []*profile.Sample{{Value: []int64{1, 2, 3, 4}, NumLabel: map[string][]int64{"bytes": {2}}}},
	}
	holdings := &profile.Profile{SampleType: HoldingTypes(), Comments: []string{HoldingsComment},
		Sample: []*profile.Sample{{Value: []int64{1, 2, 3}, Label: map[string][]string{LabelAge: {"<1s"}}}}}
	cpu := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 10000000}
	combined := arenaProfile([]string{MeansComment(MeansCommentPrefix, []int64{4096}), MeansComment(InUseMeansCommentPrefix, []int64{1, 4096}), WindowComment(estimate.WindowStart), GoVersionComment("go1.23.4")},
		arenaSample(map[string][]string{LabelType: {"main.T"}}, map[string][]int64{LabelBytes: {32}}),
		arenaSample(map[string][]string{LabelMemory: {MemoryHeap}}, map[string][]int64{LabelHeapRate: {4096}, LabelBytes: {16}}),
		arenaSample(map[string][]string{LabelMemory: {MemoryHeap}}, map[string][]int64{LabelHeapRate: {8192}}),
	)
	malformed := arenaProfile(nil, &profile.Sample{Value: []int64{1, 2}})
	peak := arenaProfile([]string{PeakCommentPrefix + "1 B"})
	tests := []struct {
		name    string
		p       *profile.Profile
		check   func(t *testing.T, f *Facts)
		wantErr string
	}{
		{name: "go heap", p: heap, check: func(t *testing.T, f *Facts) {
			if f.Kind != KindGoHeap || f.Heap != [4]int{0, 1, 2, 3} || !reflect.DeepEqual(f.HeapRates, []int64{512 * 1024}) ||
				!reflect.DeepEqual(f.GoVersions, []string{"go1.26.8"}) || !f.NumLabels["bytes"] || f.Window != estimate.WindowBoth {
				t.Errorf("facts %+v", f)
			}
		}},
		{name: "holdings", p: holdings, check: func(t *testing.T, f *Facts) {
			if f.Kind != KindHoldings || !f.Labels[LabelAge] || f.NotMemory != nil {
				t.Errorf("facts %+v", f)
			}
		}},
		{name: "cpu", p: cpu, check: func(t *testing.T, f *Facts) {
			if f.Kind != KindOther || len(f.Missing) != NumSampleTypes || f.NotMemory == nil ||
				!strings.Contains(f.NotMemory.Error(), "a CPU profile (sample types samples/count, cpu/nanoseconds)") {
				t.Errorf("facts %+v, %v", f, f.NotMemory)
			}
			if err := f.CheckSampledMemory(); err != f.NotMemory {
				t.Errorf("CheckSampledMemory %v", err)
			}
		}},
		{name: "combined", p: combined, check: func(t *testing.T, f *Facts) {
			if f.Kind != KindArena || !f.HeapSamples || !reflect.DeepEqual(f.HeapRates, []int64{4096, 8192}) ||
				f.Arena != [NumSampleTypes]int{0, 1, 2, 3, 4, 5} || f.Var != [2]int{-1, -1} || f.Window != estimate.WindowStart ||
				!reflect.DeepEqual(f.InForce(false), []int64{4096}) || !reflect.DeepEqual(f.InForce(true), []int64{1, 4096}) ||
				!f.Labels[LabelType] || !f.Labels[LabelMemory] || f.Peak || f.ValuesErr != nil {
				t.Errorf("facts %+v", f)
			}
		}},
		{name: "in-use means fall back", p: arenaProfile([]string{MeansComment(MeansCommentPrefix, []int64{64})}), check: func(t *testing.T, f *Facts) {
			if f.HasInUseMeans || !reflect.DeepEqual(f.InForce(true), []int64{64}) || f.HasSamples {
				t.Errorf("facts %+v", f)
			}
		}},
		{name: "peak", p: peak, check: func(t *testing.T, f *Facts) {
			if !f.Peak || f.Kind != KindArena {
				t.Errorf("facts %+v", f)
			}
		}},
		{name: "malformed values", p: malformed, check: func(t *testing.T, f *Facts) {
			if f.BadValues != 2 || f.ValuesErr == nil || !strings.Contains(f.ValuesErr.Error(), "a sample has 2 values for 6 sample types") {
				t.Errorf("facts %+v, %v", f, f.ValuesErr)
			}
		}},
		{name: "bad mean label", p: arenaProfile(nil, arenaSample(nil, map[string][]int64{LabelMean: {0}})), wantErr: "sampling_mean=0"},
		{name: "bad means comment", p: arenaProfile([]string{MeansCommentPrefix + "x"}), wantErr: "malformed profile comment"},
		{name: "heap sample without rate", p: arenaProfile(nil, arenaSample(map[string][]string{LabelMemory: {MemoryHeap}}, nil)), wantErr: "has no memprofilerate label"},
		{name: "go heap period 0", p: &profile.Profile{SampleType: heap.SampleType, Period: 0}, wantErr: "MemProfileRate) is 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Describe(tt.p)
			if f == nil {
				t.Fatal("no facts")
			}
			if err != f.MeansErr {
				t.Errorf("error %v, MeansErr %v", err, f.MeansErr)
			}
			if cm := CheckMeans(tt.p); (cm == nil) != (err == nil) {
				t.Errorf("CheckMeans %v, Describe %v", cm, err)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, f)
		})
	}
	if f, err := Describe(nil); f != nil || err != nil {
		t.Errorf("Describe(nil) = %v, %v", f, err)
	}
}

// TestDescribeRuntimeHeap: a heap profile the runtime writes is a Go heap
// profile to Describe.
func TestDescribeRuntimeHeap(t *testing.T) {
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Describe(p)
	if err != nil || f.Kind != KindGoHeap || f.Period != p.Period || f.ValuesErr != nil {
		t.Fatalf("facts %+v, %v", f, err)
	}
}

// FuzzDescribe: any profile that parses is described without a panic,
// with its error in MeansErr and positions inside its sample types.
func FuzzDescribe(f *testing.F) {
	var buf bytes.Buffer
	p := arenaProfile([]string{MeansComment(MeansCommentPrefix, []int64{4096})},
		arenaSample(map[string][]string{LabelMemory: {MemoryHeap}}, map[string][]int64{LabelHeapRate: {4096}}))
	if err := p.Write(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := profile.ParseData(data)
		if err != nil {
			return
		}
		fa, err := Describe(p)
		if err != fa.MeansErr {
			t.Fatalf("error %v, MeansErr %v", err, fa.MeansErr)
		}
		for _, i := range fa.Arena {
			if i >= len(p.SampleType) {
				t.Fatalf("position %d of %d sample types", i, len(p.SampleType))
			}
		}
		if fa.Kind == KindOther && fa.NotMemory == nil {
			t.Fatal("no reason for a profile of no sampled memory")
		}
	})
}

// A Go heap profile with the raw counts of a merge is still one, its raw
// counts found; any other set of sample types is not.
func TestHeapRawKind(t *testing.T) {
	heapTypes := []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}, {Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}}
	cat := func(lists ...[]*profile.ValueType) []*profile.ValueType {
		var out []*profile.ValueType
		for _, l := range lists {
			out = append(out, l...)
		}
		return out
	}
	tests := []struct {
		name  string
		types []*profile.ValueType
		kind  Kind
		raw   [NumHeapRawTypes]int
	}{
		{"runtime", heapTypes, KindGoHeap, [4]int{-1, -1, -1, -1}},
		{"merged runtime", cat(heapTypes, HeapRawSampleTypes()), KindGoHeap, [4]int{4, 5, 6, 7}},
		{"raw first", cat(HeapRawSampleTypes(), heapTypes), KindGoHeap, [4]int{0, 1, 2, 3}},
		{"three raw", cat(heapTypes, HeapRawSampleTypes()[:3]), KindOther, [4]int{-1, -1, -1, -1}},
		{"a type twice", cat(heapTypes[:3], heapTypes[:1]), KindOther, [4]int{-1, -1, -1, -1}},
		{"merged arenaprof", cat(SampleTypes(), HeapRawSampleTypes()), KindArena, [4]int{6, 7, 8, 9}},
	}
	for _, tt := range tests {
		f, _ := Describe(&profile.Profile{SampleType: tt.types, Period: 4096, PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"}})
		if f.Kind != tt.kind || f.HeapRaw != tt.raw {
			t.Errorf("%s: kind %v, raw counts at %v; want %v at %v", tt.name, f.Kind, f.HeapRaw, tt.kind, tt.raw)
		}
	}
}

// TestRSSIndex finds the resident-memory profile's two sample types by
// name, in today's order and in the earlier one (resident first), and
// nothing in profiles of other types.
func TestRSSIndex(t *testing.T) {
	vt := func(s ...string) []*profile.ValueType {
		var out []*profile.ValueType
		for i := 0; i+1 < len(s); i += 2 {
			out = append(out, &profile.ValueType{Type: s[i], Unit: s[i+1]})
		}
		return out
	}
	cases := []struct {
		name            string
		types           []*profile.ValueType
		resident, count int
		ok              bool
	}{
		{"today", RSSSampleTypes(), 1, 0, true},
		{"earlier", vt("resident", "bytes", "heap_samples", "count"), 0, 1, true},
		{"resident alone", vt("resident", "bytes"), 0, 0, false},
		{"a third type", vt("heap_samples", "count", "resident", "bytes", "space", "bytes"), 0, 0, false},
		{"resident twice", vt("resident", "bytes", "resident", "bytes"), 0, 0, false},
		{"other unit", vt("heap_samples", "count", "resident", "pages"), 0, 0, false},
		{"heap", vt("inuse_objects", "count", "inuse_space", "bytes"), 0, 0, false},
	}
	for _, c := range cases {
		p := &profile.Profile{SampleType: c.types}
		r, n, ok := RSSIndex(p)
		if ok != c.ok || ok && (r != c.resident || n != c.count) || ok != IsRSS(p) {
			t.Errorf("%s: RSSIndex %d, %d, %v (IsRSS %v); want %d, %d, %v", c.name, r, n, ok, IsRSS(p), c.resident, c.count, c.ok)
		}
	}
}
