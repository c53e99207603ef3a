package otlp

import (
	"bytes"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/wire"
)

// messages lists, for each message type the encoder writes, its
// length-delimited fields that hold messages, so that checkMessage can
// walk a request whole. Other length-delimited fields are strings, bytes
// or packed scalars.
var messages = map[string]map[int]string{
	"request":           {1: "resource_profiles", 2: "dictionary"},
	"resource_profiles": {1: "resource", 2: "scope_profiles"},
	"resource":          {1: "keyvalue"},
	"keyvalue":          {2: "anyvalue"},
	"anyvalue":          {5: "array"},
	"array":             {1: "anyvalue"},
	"scope_profiles":    {1: "scope", 2: "profile"},
	"scope":             {3: "keyvalue"},
	"profile":           {1: "valuetype", 2: "sample", 5: "valuetype"},
	"valuetype":         {},
	"sample":            {},
	"dictionary":        {1: "mapping", 2: "location", 3: "function", 4: "link", 6: "attribute", 7: "stack"},
	"mapping":           {},
	"location":          {3: "line"},
	"line":              {},
	"function":          {},
	"link":              {},
	"attribute":         {2: "anyvalue"},
	"stack":             {},
}

// checkMessage walks b as a message of type typ and everything in it.
func checkMessage(t *testing.T, typ string, b []byte) {
	t.Helper()
	fields := messages[typ]
	if err := walk(b, func(num, wt int, _ uint64, data []byte) error {
		if sub, ok := fields[num]; ok && wt == wire.Len {
			checkMessage(t, sub, data)
		}
		return nil
	}); err != nil {
		t.Fatalf("%s: %v", typ, err)
	}
}

func testProfile() *profile.Profile {
	m := &profile.Mapping{ID: 1, Start: 0x1000, Limit: 0x2000, File: "/bin/x", BuildID: "b1"}
	f := &profile.Function{ID: 1, Name: "main.f", Filename: "f.go"}
	l := &profile.Location{ID: 1, Mapping: m, Address: 0x1100, Line: []profile.Line{{Function: f, Line: 3}}}
	labels := map[string][]string{"type": {"main.t"}}
	return &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}, {Type: "alloc_samples", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"}, Period: 102400,
		Comments: []string{"arenaprof window=both", "arenaprof means=102400"},
		Mapping:  []*profile.Mapping{m}, Function: []*profile.Function{f}, Location: []*profile.Location{l},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{l}, Value: []int64{4096, 1}, Label: labels,
				NumLabel: map[string][]int64{"bytes": {48}, "sampling_mean": {102400}},
				NumUnit:  map[string][]string{"bytes": {"bytes"}, "sampling_mean": {"bytes"}}},
			{Location: []*profile.Location{l}, Value: []int64{0, 0}, Label: labels},
			{Location: []*profile.Location{l}, Value: []int64{-5, 0}},
		},
	}
}

func TestEncode(t *testing.T) {
	p := testProfile()
	req := Request{Resource: []KeyValue{{"service.name", "shop"}}, ScopeName: "arenaprof",
		NumAsString: func(_ *profile.Sample, k string) bool { return k == "sampling_mean" }}
	b := Encode(nil, p, req)
	checkMessage(t, "request", b)
	if !bytes.Equal(b, Encode(nil, p, req)) {
		t.Error("two encodings of one profile differ")
	}
	// One Profile per sample type, each with the samples whose value is
	// not zero there.
	rp, _ := field(b, 1)
	sp, _ := field(rp, 2)
	var samples []int
	walk(sp, func(num, _ int, _ uint64, data []byte) error {
		if num == 2 {
			n := 0
			walk(data, func(num, _ int, _ uint64, _ []byte) error {
				if num == 2 {
					n++
				}
				return nil
			})
			samples = append(samples, n)
		}
		return nil
	})
	if len(samples) != 2 || samples[0] != 2 || samples[1] != 1 {
		t.Errorf("samples per Profile %v, want [2 1]", samples)
	}
	// The string table starts with "", and the mean crosses as a string.
	d, _ := field(b, 2)
	var strs []string
	walk(d, func(num, _ int, _ uint64, data []byte) error {
		if num == 5 {
			strs = append(strs, string(data))
		}
		return nil
	})
	if len(strs) == 0 || strs[0] != "" {
		t.Fatalf("string table %q", strs)
	}
	if !bytes.Contains(d, []byte("102400")) {
		t.Error("sampling_mean not sent as a string")
	}
}

func TestPartialSuccess(t *testing.T) {
	for _, tt := range []struct {
		in       []byte
		rejected int64
		msg      string
		err      bool
	}{
		{nil, 0, "", false},
		{[]byte{0x0a, 0x00}, 0, "", false},
		{[]byte{0x0a, 0x07, 0x08, 0x03, 0x12, 0x03, 'b', 'a', 'd'}, 3, "bad", false},
		{[]byte{0x10, 0x01, 0x0a, 0x02, 0x08, 0x02}, 2, "", false}, // an unknown field first
		{[]byte{0x0a, 0x05, 0x08}, 0, "", true},
		{[]byte{0x08, 0x01}, 0, "", true}, // partial_success is not a message
	} {
		r, m, err := PartialSuccess(tt.in)
		if r != tt.rejected || m != tt.msg || (err != nil) != tt.err {
			t.Errorf("%x: %d %q %v, want %d %q error %v", tt.in, r, m, err, tt.rejected, tt.msg, tt.err)
		}
	}
}

func FuzzPartialSuccess(f *testing.F) {
	f.Add([]byte{0x0a, 0x07, 0x08, 0x03, 0x12, 0x03, 'b', 'a', 'd'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		PartialSuccess(b) // must not panic
	})
}

// FuzzEncode encodes any profile google/pprof accepts and checks that the
// request is well formed, in both versions, and that every sample's
// link_index is in the link table.
func FuzzEncode(f *testing.F) {
	var buf bytes.Buffer
	testProfile().WriteUncompressed(&buf)
	f.Add(buf.Bytes())
	linked := testProfile()
	linked.Sample[0].Label = map[string][]string{"span_id": {"00f067aa0ba902b7"}, "span_name": {"GET"}}
	buf.Reset()
	linked.WriteUncompressed(&buf)
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := profile.ParseData(data)
		if err != nil {
			return
		}
		for _, v := range []Version{V030, V020} {
			b := Encode(nil, p, Request{Resource: []KeyValue{{"service.name", "x"}}, Version: v})
			checkMessage(t, "request", b)
			d := decode(t, b, v)
			for _, ss := range d.profs {
				for _, s := range ss {
					if s.link < 0 || int(s.link) >= len(d.links) {
						t.Fatalf("%s: link_index %d of %d links", v, s.link, len(d.links))
					}
				}
			}
		}
	})
}
