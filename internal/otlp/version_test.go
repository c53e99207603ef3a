package otlp

import (
	"slices"
	"testing"

	"github.com/arenaprof/arenaprof/internal/wire"
)

func TestParseVersion(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Version
		ok   bool
	}{
		{"", V030, true},
		{"v0.3.0", V030, true},
		{"0.3.0", V030, true},
		{" v0.2.0 ", V020, true},
		{"0.2.0", V020, true},
		{"v0.4.0", 0, false},
		{"vv0.2.0", 0, false},
		{"V0.2.0", 0, false},
		{"0.2", 0, false},
	} {
		got, err := ParseVersion(tt.in)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"", "v0.3.0", "0.2.0", " v0.2.0\n", "v1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVersion(s)
		if err != nil {
			return
		}
		back, err := ParseVersion(v.String())
		if err != nil || back != v {
			t.Errorf("ParseVersion(%q) = %v, which reads back as %v, %v", s, v, back, err)
		}
	})
}

// TestEncodeVersion checks the field numbers of a Sample's values and
// attribute indices in each version (the rest of the request is the same
// in both).
func TestEncodeVersion(t *testing.T) {
	for _, tt := range []struct {
		v                Version
		values, attrsNum int
	}{
		{V030, 4, 2},
		{V020, 2, 3},
	} {
		t.Run(tt.v.String(), func(t *testing.T) {
			b := Encode(nil, testProfile(), Request{Version: tt.v})
			checkMessage(t, "request", b)
			rp, _ := field(b, 1)
			sp, _ := field(rp, 2)
			prof, _ := field(sp, 2)
			sample, _ := field(prof, 2)
			fields := map[int]int{}
			walk(sample, func(num, wire int, _ uint64, data []byte) error {
				fields[num] = wire
				return nil
			})
			if w, ok := fields[tt.values]; !ok || w != wire.Len {
				t.Errorf("values not in field %d: fields %v", tt.values, fields)
			}
			if w, ok := fields[tt.attrsNum]; !ok || w != wire.Len {
				t.Errorf("attribute indices not in field %d: fields %v", tt.attrsNum, fields)
			}
			if len(fields) != 3 {
				t.Errorf("sample fields %v, want stack, values, attributes", fields)
			}
		})
	}
}

// TestEncodeSampleAttributes checks that SampleAttributes reach every
// sample, except where the sample has a label of the same key.
func TestEncodeSampleAttributes(t *testing.T) {
	r := Request{SampleAttributes: []KeyValue{{"service.name", "shop"}, {"type", "other"}}}
	b := Encode(nil, testProfile(), r)
	checkMessage(t, "request", b)
	rp, _ := field(b, 1)
	sp, _ := field(rp, 2)
	var counts []int
	count := func(num, _ int, _ uint64, sample []byte) error {
		if num != 2 {
			return nil
		}
		attrs, _ := field(sample, 2)
		n := 0
		for len(attrs) > 0 {
			_, k := wire.ReadVarint(attrs)
			attrs = attrs[k:]
			n++
		}
		counts = append(counts, n)
		return nil
	}
	walk(sp, func(num, _ int, _ uint64, prof []byte) error {
		if num == 2 { // a Profile
			walk(prof, count)
		}
		return nil
	})
	// Sample 1 (in both Profiles): its type label, its two numeric
	// labels, service.name (its own type wins); sample 3 (in the first):
	// service.name and type.
	if !slices.Equal(counts, []int{4, 2, 4}) {
		t.Errorf("attributes per sample %v, want [4 2 4]", counts)
	}
}
