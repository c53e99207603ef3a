package main

// The round trip pprof -> OTLP -> pprof of the agent's OTLP destination,
// read back through the generated types Grafana Pyroscope v1.19.3 itself
// decodes OTLP with (go.opentelemetry.io/proto/otlp/.../v1development
// v0.2.0), and rebuilt as pprof by the rules of Pyroscope's converter
// (pkg/ingester/otlp/convert.go): one pprof sample type per OTLP Profile,
// the stack's locations leaf first, a location's mapping and lines, the
// mapping's build ID from process.executable.build_id.gnu, string sample
// attributes as labels except service.name. Two readings are checked:
//
//   - full: every attribute, numeric ones as numeric labels with their
//     units and the Profile attributes as the pprof fields they came from;
//     the profile comes back with every value and every label;
//   - pyroscope: only what Pyroscope keeps (string attributes); the values
//     and string labels come back, and the numeric labels a reader of the
//     sums needs (sampling_mean, and memprofilerate and bytes of Go heap
//     samples) come back as string labels.

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	collectorpb "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	profilespb "go.opentelemetry.io/proto/otlp/profiles/v1development"
	"google.golang.org/protobuf/proto"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/export/agent"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
	"github.com/arenaprof/arenaprof/profiler"
)

// profilesVersion is the agent's OTLPConfig.ProfilesVersion for the
// generated types of this module (profiles v0.2.0, as Pyroscope v1.19.3
// reads).
const profilesVersion = "v0.2.0"

type roundTripType struct{ a, b, c uint64 }

func TestRoundTrip(t *testing.T) {
	arenaProf, memoryProf := arenaProfiles(t)
	// The process's allocs profile must hold a sample: by itself it held
	// about 7 here (the arena chunks above and the start-up), none on about
	// exp(-7) = 1e-3 of runs. A 16 MiB object is sampled at the default
	// MemProfileRate (512 KiB) but with probability exp(-32) = 1.3e-14.
	heapSink = make([]byte, 16<<20)
	heapSink = nil
	heap := runtimeProfile(t, "allocs")
	wall := wallProfile(t)
	for _, tt := range []struct {
		name, source string
		p            *profile.Profile
	}{
		{"arena", "arena", arenaProf},
		{"memory (arena and Go heap)", "memory", memoryProf},
		{"Go heap", "heap", heap},
		{"wall-clock", "wall", wall},
		{"edge cases", "custom", edgeProfile()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.p.Sample) == 0 {
				t.Fatal("the profile has no sample")
			}
			req := sendOTLP(t, tt.p, tt.source)
			if n := len(req.ResourceProfiles[0].ScopeProfiles[0].Profiles); n != len(tt.p.SampleType) {
				t.Fatalf("%d OTLP profiles, want one per sample type (%d)", n, len(tt.p.SampleType))
			}
			if n := countLinked(tt.p); len(req.Dictionary.LinkTable) != 1+n {
				t.Errorf("%d links in the table, want the empty one and %d", len(req.Dictionary.LinkTable), n)
			}
			if tt.source == "arena" {
				// Every span of the arena profile has its trace: each
				// link holds the trace ID, through the Collector.
				if len(req.Dictionary.LinkTable) < 2 {
					t.Error("no link: the arena profile's spans were not linked")
				}
				for i, l := range req.Dictionary.LinkTable[1:] {
					if len(l.TraceId) != 16 || len(l.SpanId) != 8 {
						t.Errorf("link %d: trace ID %x, span ID %x, want 16 and 8 bytes", i+1, l.TraceId, l.SpanId)
					}
				}
			}
			if got := serviceName(req); got != "shop" {
				t.Errorf("service.name %q, want shop", got)
			}

			back, err := toPprof(req, false)
			if err != nil {
				t.Fatal(err)
			}
			if err := back.CheckValid(); err != nil {
				t.Fatal(err)
			}
			compare(t, canonical(tt.p, nil), canonical(back, nil))
			if back.Period != tt.p.Period || back.TimeNanos != tt.p.TimeNanos || back.DurationNanos != tt.p.DurationNanos ||
				back.DefaultSampleType != tt.p.DefaultSampleType || back.PeriodType.Type != tt.p.PeriodType.Type || back.PeriodType.Unit != tt.p.PeriodType.Unit {
				t.Errorf("header: got period %d %v, time %d+%d, default %q; want %d %v, %d+%d, %q", back.Period, back.PeriodType,
					back.TimeNanos, back.DurationNanos, back.DefaultSampleType, tt.p.Period, tt.p.PeriodType, tt.p.TimeNanos, tt.p.DurationNanos, tt.p.DefaultSampleType)
			}
			if !slices.Equal(back.Comments, tt.p.Comments) {
				t.Errorf("comments %q, want %q", back.Comments, tt.p.Comments)
			}

			// What Pyroscope keeps.
			py, err := toPprof(req, true)
			if err != nil {
				t.Fatal(err)
			}
			compare(t, canonical(tt.p, keptByPyroscope), canonical(py, nil))
		})
	}
}

// keptByPyroscope turns the labels of a pprof sample into what Pyroscope
// keeps of its OTLP form: the string labels, plus the numeric labels sent
// as strings.
func keptByPyroscope(s *profile.Sample) (map[string][]string, map[string][]int64) {
	l := map[string][]string{}
	for k, v := range s.Label {
		l[k] = v
	}
	if len(l["span_id"]) == 1 {
		delete(l, "trace_id") // linked: v1.19.3 reads the span ID of a link, not the trace ID
	}
	heapSample := len(s.Label["memory"]) > 0 && s.Label["memory"][0] == "heap"
	for k, vs := range s.NumLabel {
		if k == "sampling_mean" || k == "memprofilerate" || (k == "bytes" && heapSample) {
			for _, v := range vs {
				l[k] = append(l[k], strconv.FormatInt(v, 10))
			}
		}
	}
	return l, nil
}

// canonical maps each sample of p, keyed by its frames and labels, to its
// values; samples whose values are all zero are left out (they carry
// nothing, and the conversion drops them). relabel, if set, replaces the
// labels.
func canonical(p *profile.Profile, relabel func(*profile.Sample) (map[string][]string, map[string][]int64)) map[string][]int64 {
	m := map[string][]int64{}
	types := make([]string, len(p.SampleType))
	for i, st := range p.SampleType {
		types[i] = st.Type + "/" + st.Unit
	}
	for _, s := range p.Sample {
		if !slices.ContainsFunc(s.Value, func(v int64) bool { return v != 0 }) {
			continue
		}
		var b strings.Builder
		for _, l := range s.Location {
			fmt.Fprintf(&b, "@%#x", l.Address)
			if m := l.Mapping; m != nil {
				fmt.Fprintf(&b, "[%s %s %#x-%#x+%#x]", m.File, m.BuildID, m.Start, m.Limit, m.Offset)
			}
			for _, ln := range l.Line {
				f := ln.Function
				fmt.Fprintf(&b, " %s|%s|%s:%d:%d@%d;", f.Name, f.SystemName, f.Filename, ln.Line, ln.Column, f.StartLine)
			}
		}
		label, num := s.Label, s.NumLabel
		units := s.NumUnit
		if relabel != nil {
			label, num = relabel(s)
		}
		for _, k := range sortedKeys(label) {
			fmt.Fprintf(&b, " %s=%q", k, label[k])
		}
		for _, k := range sortedKeys(num) {
			fmt.Fprintf(&b, " %s#%v%v", k, num[k], units[k])
		}
		key := strings.Join(types, ",") + b.String()
		if prev, ok := m[key]; ok {
			for i := range prev {
				prev[i] += s.Value[i]
			}
			continue
		}
		m[key] = slices.Clone(s.Value)
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func compare(t *testing.T, want, got map[string][]int64) {
	t.Helper()
	n := 0
	for k, v := range want {
		if g, ok := got[k]; !ok || !slices.Equal(g, v) {
			if n++; n <= 3 {
				t.Errorf("sample %s: got %v (present %v), want %v", k, g, ok, v)
			}
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			if n++; n <= 6 {
				t.Errorf("extra sample %s", k)
			}
		}
	}
	if n > 0 {
		t.Fatalf("%d samples differ (of %d)", n, len(want))
	}
	t.Logf("%d samples: every value and label as sent", len(want))
}

// sendOTLP uploads p through the agent's OTLP destination to a local
// server and decodes the request it gets.
func sendOTLP(t *testing.T, p *profile.Profile, source string) *collectorpb.ExportProfilesServiceRequest {
	var mu sync.Mutex
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		body = b
		mu.Unlock()
	}))
	defer srv.Close()
	o, err := agent.NewOTLP(agent.OTLPConfig{URL: srv.URL, Compression: "none", ProfilesVersion: profilesVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer o.(io.Closer).Close()
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	u := &agent.Upload{AppName: "shop", Profile: source, Data: buf.Bytes(), From: time.Unix(0, p.TimeNanos), Until: time.Now()}
	if err := o.Upload(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	req := new(collectorpb.ExportProfilesServiceRequest)
	if err := proto.Unmarshal(body, req); err != nil {
		t.Fatal(err)
	}
	if len(req.ResourceProfiles) != 1 || len(req.ResourceProfiles[0].ScopeProfiles) != 1 || req.Dictionary == nil {
		t.Fatalf("want one resource, one scope and a dictionary: %v", req)
	}
	return req
}

func serviceName(req *collectorpb.ExportProfilesServiceRequest) string {
	for _, kv := range req.ResourceProfiles[0].Resource.GetAttributes() {
		if kv.Key == "service.name" {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

// toPprof rebuilds one pprof profile from the request's Profiles, one per
// sample type, merging the samples of equal stack and attributes. With
// pyroscope set it reads only what Pyroscope v1.19.3 keeps.
func toPprof(req *collectorpb.ExportProfilesServiceRequest, pyroscope bool) (*profile.Profile, error) {
	d := req.Dictionary
	str := func(i int32) (string, error) {
		if i < 0 || int(i) >= len(d.StringTable) {
			return "", fmt.Errorf("string index %d out of range", i)
		}
		return d.StringTable[i], nil
	}
	out := &profile.Profile{}
	funcs := map[int32]*profile.Function{}
	maps := map[int32]*profile.Mapping{}
	locs := map[int32]*profile.Location{}
	function := func(i int32) (*profile.Function, error) {
		if f, ok := funcs[i]; ok {
			return f, nil
		}
		if i <= 0 || int(i) >= len(d.FunctionTable) {
			return nil, fmt.Errorf("function index %d", i)
		}
		of := d.FunctionTable[i]
		name, _ := str(of.NameStrindex)
		sys, _ := str(of.SystemNameStrindex)
		file, _ := str(of.FilenameStrindex)
		f := &profile.Function{ID: uint64(len(out.Function) + 1), Name: name, SystemName: sys, Filename: file, StartLine: of.StartLine}
		out.Function = append(out.Function, f)
		funcs[i] = f
		return f, nil
	}
	mapping := func(i int32) (*profile.Mapping, error) {
		if i == 0 {
			return nil, nil
		}
		if m, ok := maps[i]; ok {
			return m, nil
		}
		if int(i) >= len(d.MappingTable) {
			return nil, fmt.Errorf("mapping index %d", i)
		}
		om := d.MappingTable[i]
		file, _ := str(om.FilenameStrindex)
		m := &profile.Mapping{ID: uint64(len(out.Mapping) + 1), Start: om.MemoryStart, Limit: om.MemoryLimit, Offset: om.FileOffset, File: file}
		for _, ai := range om.AttributeIndices {
			a := d.AttributeTable[ai]
			if k, _ := str(a.KeyStrindex); k == "process.executable.build_id.gnu" {
				m.BuildID = a.Value.GetStringValue()
			}
		}
		out.Mapping = append(out.Mapping, m)
		maps[i] = m
		return m, nil
	}
	location := func(i int32) (*profile.Location, error) {
		if l, ok := locs[i]; ok {
			return l, nil
		}
		if i <= 0 || int(i) >= len(d.LocationTable) {
			return nil, fmt.Errorf("location index %d", i)
		}
		ol := d.LocationTable[i]
		m, err := mapping(ol.MappingIndex)
		if err != nil {
			return nil, err
		}
		l := &profile.Location{ID: uint64(len(out.Location) + 1), Mapping: m, Address: ol.Address}
		for _, ln := range ol.Lines {
			f, err := function(ln.FunctionIndex)
			if err != nil {
				return nil, err
			}
			l.Line = append(l.Line, profile.Line{Function: f, Line: ln.Line, Column: ln.Column})
		}
		out.Location = append(out.Location, l)
		locs[i] = l
		return l, nil
	}

	type key struct {
		stack, link int32
		attrs       string
	}
	samples := map[key]*profile.Sample{}
	var order []key
	profs := req.ResourceProfiles[0].ScopeProfiles[0].Profiles
	for t, op := range profs {
		typ, _ := str(op.SampleType.TypeStrindex)
		unit, _ := str(op.SampleType.UnitStrindex)
		out.SampleType = append(out.SampleType, &profile.ValueType{Type: typ, Unit: unit})
		if t == 0 {
			out.TimeNanos, out.DurationNanos, out.Period = int64(op.TimeUnixNano), int64(op.DurationNano), op.Period
			if op.PeriodType != nil {
				pt, _ := str(op.PeriodType.TypeStrindex)
				pu, _ := str(op.PeriodType.UnitStrindex)
				out.PeriodType = &profile.ValueType{Type: pt, Unit: pu}
			}
			if !pyroscope {
				if err := profileAttrs(out, d, op.AttributeIndices); err != nil {
					return nil, err
				}
			}
		}
		for _, os := range op.Samples {
			if len(os.Values) != 1 {
				return nil, fmt.Errorf("sample with %d values, want 1", len(os.Values))
			}
			k := key{os.StackIndex, os.LinkIndex, fmt.Sprint(os.AttributeIndices)}
			s, ok := samples[k]
			if !ok {
				s = &profile.Sample{Value: make([]int64, len(profs))}
				if os.StackIndex < 0 || int(os.StackIndex) >= len(d.StackTable) {
					return nil, fmt.Errorf("stack index %d", os.StackIndex)
				}
				for _, li := range d.StackTable[os.StackIndex].LocationIndices {
					l, err := location(li)
					if err != nil {
						return nil, err
					}
					s.Location = append(s.Location, l)
				}
				if err := sampleLabels(s, d, os.AttributeIndices, pyroscope); err != nil {
					return nil, err
				}
				if err := sampleLink(s, d, os.LinkIndex, !pyroscope); err != nil {
					return nil, err
				}
				samples[k] = s
				order = append(order, k)
			}
			s.Value[t] += os.Values[0]
		}
	}
	for _, k := range order {
		out.Sample = append(out.Sample, samples[k])
	}
	return out, nil
}

// sampleLabels sets s's labels from its attributes: as Pyroscope reads
// them (non-empty strings, not service.name), or all of them, integers as
// numeric labels and strings carrying a unit as the numeric labels they
// were sent for.
func sampleLabels(s *profile.Sample, d *profilespb.ProfilesDictionary, idx []int32, pyroscope bool) error {
	for _, ai := range idx {
		if ai < 0 || int(ai) >= len(d.AttributeTable) {
			return fmt.Errorf("attribute index %d", ai)
		}
		a := d.AttributeTable[ai]
		k := d.StringTable[a.KeyStrindex]
		unit := d.StringTable[a.UnitStrindex]
		switch v := a.Value.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			if k == "service.name" || (pyroscope && v.StringValue == "") {
				continue
			}
			if n, err := strconv.ParseInt(v.StringValue, 10, 64); err == nil && unit != "" && !pyroscope {
				addNum(s, k, n, unit)
				continue
			}
			if s.Label == nil {
				s.Label = map[string][]string{}
			}
			s.Label[k] = append(s.Label[k], v.StringValue)
		case *commonpb.AnyValue_IntValue:
			if !pyroscope {
				addNum(s, k, v.IntValue, unit)
			}
		default:
			return fmt.Errorf("attribute %s: unexpected value %v", k, a.Value)
		}
	}
	return nil
}

// countLinked counts the distinct span IDs of p's samples that the
// encoder links (a span_id label of 16 hex digits).
func countLinked(p *profile.Profile) int {
	spans := map[string]bool{}
	for _, s := range p.Sample {
		if v := s.Label["span_id"]; len(v) == 1 && len(v[0]) == 16 {
			spans[v[0]] = true
		}
	}
	return len(spans)
}

// sampleLink adds the labels of the sample's link, as Pyroscope's
// converter makes them: span_id, the span ID in hex, and with traceID
// (which v1.19.3 does not read) trace_id when the link holds a trace ID of
// 16 bytes.
func sampleLink(s *profile.Sample, d *profilespb.ProfilesDictionary, i int32, traceID bool) error {
	if i == 0 {
		return nil
	}
	if i < 0 || int(i) >= len(d.LinkTable) {
		return fmt.Errorf("link index %d of %d links", i, len(d.LinkTable))
	}
	l := d.LinkTable[i]
	if len(l.SpanId) != 8 {
		return fmt.Errorf("link %d: span ID %x, want 8 bytes", i, l.SpanId)
	}
	if s.Label == nil {
		s.Label = map[string][]string{}
	}
	s.Label["span_id"] = append(s.Label["span_id"], hex.EncodeToString(l.SpanId))
	if traceID && len(l.TraceId) == 16 {
		s.Label["trace_id"] = append(s.Label["trace_id"], hex.EncodeToString(l.TraceId))
	}
	return nil
}

func addNum(s *profile.Sample, k string, v int64, unit string) {
	if s.NumLabel == nil {
		s.NumLabel, s.NumUnit = map[string][]int64{}, map[string][]string{}
	}
	s.NumLabel[k] = append(s.NumLabel[k], v)
	s.NumUnit[k] = append(s.NumUnit[k], unit)
}

// profileAttrs restores the pprof fields the encoder sent as Profile
// attributes.
func profileAttrs(p *profile.Profile, d *profilespb.ProfilesDictionary, idx []int32) error {
	for _, ai := range idx {
		a := d.AttributeTable[ai]
		k := d.StringTable[a.KeyStrindex]
		sv := a.Value.GetStringValue()
		switch k {
		case "arenaprof.window":
			p.Comments = append(p.Comments, "arenaprof window="+sv)
		case "arenaprof.means", "arenaprof.inuse_means":
			var ms []string
			for _, v := range a.Value.GetArrayValue().GetValues() {
				ms = append(ms, strconv.FormatInt(v.GetIntValue(), 10))
			}
			prefix := "arenaprof means="
			if k == "arenaprof.inuse_means" {
				prefix = "arenaprof inuse_means="
			}
			p.Comments = append(p.Comments, prefix+strings.Join(ms, ","))
		case "pprof.comment":
			p.Comments = append(p.Comments, sv)
		case "pprof.default_sample_type":
			p.DefaultSampleType = sv
		case "pprof.drop_frames":
			p.DropFrames = sv
		case "pprof.keep_frames":
			p.KeepFrames = sv
		case "pprof.doc_url":
			p.DocURL = sv
		default:
			return fmt.Errorf("unknown profile attribute %s", k)
		}
	}
	return nil
}

// arenaProfiles returns an arena profile and a memory profile (arenas and
// the Go heap) of a workload with arena labels, two types and a change of
// the sampling mean.
func arenaProfiles(t *testing.T) (*profile.Profile, *profile.Profile) {
	p, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	defer hooks.SetMeanBytes(samplingstate.DefaultMeanBytes)
	for i, mean := range []int64{4096, 1024} {
		if err := hooks.SetMeanBytes(mean); err != nil {
			t.Fatal(err)
		}
		a := arena.NewArena(arena.WithSeed(uint64(i), 7), arena.WithLabels(hooks.NewLabels("endpoint", fmt.Sprintf("/e%d", i))))
		for range 20_000 {
			arena.New[roundTripType](a)
			arena.MakeSlice[byte](a, 40, 40)
		}
		a.Reset()
	}
	// Requests under spans, with the labels otelarena puts on them: the
	// encoder links their samples to their trace and span.
	for i := range 4 {
		a := arena.NewArena(arena.WithSeed(uint64(10+i), 7), arena.WithLabels(hooks.NewLabels(
			"span_id", fmt.Sprintf("%016x", 0xa0+i), "span_name", "GET /s",
			"trace_id", fmt.Sprintf("4bf92f3577b34da6a3ce929d0e0e47%02x", i))))
		for range 2_000 {
			arena.New[roundTripType](a)
		}
		a.Reset()
	}
	s := p.Snapshot()
	ap, err := export.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	mp, err := export.BuildMemory(s)
	if err != nil {
		t.Fatal(err)
	}
	return ap, mp
}

// heapSink keeps TestRoundTrip's 16 MiB allocation on the heap.
var heapSink []byte

// runtimeProfile returns one of the runtime's profiles, parsed.
func runtimeProfile(t *testing.T, name string) *profile.Profile {
	runtime.GC()
	var buf bytes.Buffer
	if err := pprof.Lookup(name).WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// wallProfile returns a wall-clock profile from the agent's wall source
// over 300 ms.
func wallProfile(t *testing.T) *profile.Profile {
	src := agent.WallSource()
	if err := src.(interface{ Start(context.Context) error }).Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	p, err := src.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := src.(interface{ Close() error }); ok {
		c.Close()
	}
	return p
}

// edgeProfile has what real profiles here rarely have: several values per
// label (an empty value cannot cross pprof itself), numeric labels with and without units, negative values, a sample
// with a zero value for one type, inlined lines with columns, mappings with
// build IDs, a location without mapping, and the pprof fields kept as
// Profile attributes.
func edgeProfile() *profile.Profile {
	m1 := &profile.Mapping{ID: 1, Start: 0x400000, Limit: 0x800000, Offset: 0x1000, File: "/bin/svc", BuildID: "abc123"}
	m2 := &profile.Mapping{ID: 2, Start: 0x7f0000000000, Limit: 0x7f0000100000, File: "libc.so.6"}
	f1 := &profile.Function{ID: 1, Name: "main.a", SystemName: "main.a", Filename: "a.go", StartLine: 10}
	f2 := &profile.Function{ID: 2, Name: "main.b", SystemName: "main.b", Filename: "b.go", StartLine: 20}
	f3 := &profile.Function{ID: 3, Name: "memcpy", Filename: ""}
	l1 := &profile.Location{ID: 1, Mapping: m1, Address: 0x401000, Line: []profile.Line{{Function: f1, Line: 12, Column: 3}, {Function: f2, Line: 25}}}
	l2 := &profile.Location{ID: 2, Mapping: m2, Address: 0x7f0000000100, Line: []profile.Line{{Function: f3}}}
	l3 := &profile.Location{ID: 3, Address: 0x999}
	return &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}, {Type: "delta", Unit: "count"}},
		DefaultSampleType: "delta",
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            512,
		TimeNanos:         1e18,
		DurationNanos:     15e9,
		Comments:          []string{"arenaprof window=both", "arenaprof means=1024,102400", "arenaprof inuse_means=102400", "free text, with = and ,", "arenaprof means=1,x"},
		DropFrames:        "runtime\\..*",
		KeepFrames:        "main\\..*",
		DocURL:            "https://example.com/doc",
		Mapping:           []*profile.Mapping{m1, m2},
		Function:          []*profile.Function{f1, f2, f3},
		Location:          []*profile.Location{l1, l2, l3},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{l1, l2}, Value: []int64{100, -3},
				Label:    map[string][]string{"type": {"[]uint8"}, "multi": {"x", "y"}},
				NumLabel: map[string][]int64{"bytes": {48}, "sampling_mean": {1024}, "plain": {-7, 8}},
				NumUnit:  map[string][]string{"bytes": {"bytes"}, "sampling_mean": {"bytes"}, "plain": {"", ""}}},
			{Location: []*profile.Location{l3, l1}, Value: []int64{0, 5}},
			// Samples that carry a span (labels as otelarena sets them)
			// are linked to it; a span_id that is no span ID is an
			// attribute.
			{Location: []*profile.Location{l1}, Value: []int64{64, 1},
				Label: map[string][]string{"span_id": {"00f067aa0ba902b7"}, "span_name": {"GET /a"}, "type": {"[]uint8"}}},
			{Location: []*profile.Location{l1}, Value: []int64{32, 1},
				Label: map[string][]string{"span_id": {"53995c3f42cd8ad8"}, "span_name": {"GET /a"}, "trace_id": {"4bf92f3577b34da6a3ce929d0e0e4736"}}},
			{Location: []*profile.Location{l2}, Value: []int64{16, 1}, Label: map[string][]string{"span_id": {"not-a-span"}}},
			{Location: []*profile.Location{l2}, Value: []int64{1 << 62, 0}, Label: map[string][]string{"memory": {"heap"}},
				NumLabel: map[string][]int64{"bytes": {4096}, "memprofilerate": {524288}},
				NumUnit:  map[string][]string{"bytes": {"bytes"}, "memprofilerate": {"bytes"}}},
		},
	}
}
