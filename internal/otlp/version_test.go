package otlp

import (
	"testing"
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
			if w, ok := fields[tt.values]; !ok || w != wireLen {
				t.Errorf("values not in field %d: fields %v", tt.values, fields)
			}
			if w, ok := fields[tt.attrsNum]; !ok || w != wireLen {
				t.Errorf("attribute indices not in field %d: fields %v", tt.attrsNum, fields)
			}
			if len(fields) != 3 {
				t.Errorf("sample fields %v, want stack, values, attributes", fields)
			}
		})
	}
}
