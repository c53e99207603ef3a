package otlp

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"slices"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/wire"
)

// decoded is what a test reads back of a request: its dictionary's string,
// attribute and link tables, and the samples of each Profile.
type decoded struct {
	strings []string
	attrs   []string // key=value (strings) or key#value (integers)
	links   [][2][]byte
	profs   [][]decodedSample
}

type decodedSample struct {
	attrs []int32
	link  int32
	value int64
}

// decode reads b, an encoding of version v, as far as the link tests need.
func decode(t *testing.T, b []byte, v Version) decoded {
	t.Helper()
	fAttrs, fLink, fValues := 2, 3, 4
	if v == V020 {
		fAttrs, fLink, fValues = 3, 4, 2
	}
	var d decoded
	dict, _ := field(b, 2)
	type rawAttr struct {
		key   int
		value []byte
	}
	var raw []rawAttr
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(walk(dict, func(num, _ int, _ uint64, data []byte) error {
		switch num {
		case 4:
			var l [2][]byte
			err := walk(data, func(num, _ int, _ uint64, data []byte) error {
				if num == 1 || num == 2 {
					l[num-1] = data
				}
				return nil
			})
			d.links = append(d.links, l)
			return err
		case 5:
			d.strings = append(d.strings, string(data))
		case 6:
			var a rawAttr
			err := walk(data, func(num, _ int, v uint64, data []byte) error {
				switch num {
				case 1:
					a.key = int(v)
				case 2:
					a.value = data
				}
				return nil
			})
			raw = append(raw, a)
			return err
		}
		return nil
	}))
	for _, a := range raw {
		s := d.strings[a.key]
		must(walk(a.value, func(num, _ int, v uint64, data []byte) error {
			switch num {
			case 1:
				s += "=" + string(data)
			case 3:
				s += fmt.Sprintf("#%d", int64(v))
			}
			return nil
		}))
		d.attrs = append(d.attrs, s)
	}
	rp, _ := field(b, 1)
	sp, _ := field(rp, 2)
	must(walk(sp, func(num, _ int, _ uint64, data []byte) error {
		if num != 2 {
			return nil
		}
		var samples []decodedSample
		err := walk(data, func(num, _ int, _ uint64, data []byte) error {
			if num != 2 {
				return nil
			}
			var s decodedSample
			err := walk(data, func(num, wt int, v uint64, data []byte) error {
				switch {
				case num == fLink && wt == wire.Varint:
					s.link = int32(v)
				case num == fAttrs && wt == wire.Len:
					for len(data) > 0 {
						x, n := wire.ReadVarint(data)
						s.attrs = append(s.attrs, int32(x))
						data = data[n:]
					}
				case num == fValues && wt == wire.Len:
					x, _ := wire.ReadVarint(data)
					s.value = int64(x)
				case num != 1:
					return fmt.Errorf("sample field %d, wire type %d", num, wt)
				}
				return nil
			})
			samples = append(samples, s)
			return err
		})
		d.profs = append(d.profs, samples)
		return err
	}))
	return d
}

// sampleAttrs returns the attributes of s as key=value strings.
func (d decoded) sampleAttrs(s decodedSample) []string {
	var out []string
	for _, i := range s.attrs {
		out = append(out, d.attrs[i])
	}
	return out
}

func hexBytes(t *testing.T, s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEncodeLinks checks the link table and each sample's link_index in
// both versions: one entry per distinct span (samples of one span with
// label maps of their own share it), index 0 (no field) for a sample
// without a span, the span_id and trace_id labels out of the attributes
// when linked, and a span_id that is not a span ID kept as an attribute.
func TestEncodeLinks(t *testing.T) {
	const (
		spanA  = "00f067aa0ba902b7"
		spanB  = "53995c3f42cd8ad8"
		traceA = "4bf92f3577b34da6a3ce929d0e0e4736"
	)
	l := &profile.Location{ID: 1, Address: 0x1000}
	sample := func(v int64, labels map[string][]string) *profile.Sample {
		return &profile.Sample{Location: []*profile.Location{l}, Value: []int64{v}, Label: labels}
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"}, Period: 1,
		Location: []*profile.Location{l},
		Sample: []*profile.Sample{
			sample(1, map[string][]string{"span_id": {spanA}, "span_name": {"GET /a"}, "type": {"t"}}),
			sample(2, map[string][]string{"span_id": {spanA}, "span_name": {"GET /a"}, "type": {"u"}}),
			sample(3, map[string][]string{"type": {"t"}}),
			sample(4, map[string][]string{"span_id": {spanB}, "span_name": {"GET /b"}}),
			sample(5, map[string][]string{"span_id": {spanA}, "trace_id": {traceA}}),
			sample(6, map[string][]string{"span_id": {"00F067AA0BA902B7"}}), // upper case: not as tracers write it
			sample(7, map[string][]string{"span_id": {"0000000000000000"}}), // the invalid span ID
			sample(8, map[string][]string{"span_id": {spanA, spanB}}),       // two spans: no one link
			sample(9, map[string][]string{"span_id": {spanB}, "trace_id": {"xyz"}}),
			sample(10, nil),
		},
	}
	type want struct {
		attrs []string
		link  [2]string // trace and span, hex; "" for none
	}
	wants := []want{
		{[]string{"span_name=GET /a", "type=t"}, [2]string{"", spanA}},
		{[]string{"span_name=GET /a", "type=u"}, [2]string{"", spanA}},
		{[]string{"type=t"}, [2]string{}},
		{[]string{"span_name=GET /b"}, [2]string{"", spanB}},
		{nil, [2]string{traceA, spanA}},
		{[]string{"span_id=00F067AA0BA902B7"}, [2]string{}},
		{[]string{"span_id=0000000000000000"}, [2]string{}},
		{[]string{"span_id=" + spanA, "span_id=" + spanB}, [2]string{}},
		{[]string{"trace_id=xyz"}, [2]string{"", spanB}},
		{nil, [2]string{}},
	}
	for _, v := range []Version{V030, V020} {
		t.Run(v.String(), func(t *testing.T) {
			b := Encode(nil, p, Request{Version: v})
			checkMessage(t, "request", b)
			d := decode(t, b, v)
			// link_table[0] is the empty link; then spanA, spanB,
			// (traceA, spanA): three distinct links.
			if len(d.links) != 4 || len(d.links[0][0])+len(d.links[0][1]) != 0 {
				t.Fatalf("link table %x, want the empty link and 3 others", d.links)
			}
			seen := map[string]bool{}
			for _, l := range d.links[1:] {
				k := fmt.Sprintf("%x/%x", l[0], l[1])
				if seen[k] {
					t.Errorf("link %s twice in the table", k)
				}
				seen[k] = true
			}
			if len(d.profs) != 1 || len(d.profs[0]) != len(wants) {
				t.Fatalf("samples %v, want %d in one Profile", d.profs, len(wants))
			}
			for i, s := range d.profs[0] {
				w := wants[i]
				if s.value != int64(i+1) {
					t.Fatalf("sample %d has value %d", i, s.value)
				}
				if got := d.sampleAttrs(s); !slices.Equal(got, w.attrs) {
					t.Errorf("sample %d: attributes %q, want %q", i, got, w.attrs)
				}
				if w.link == [2]string{} {
					if s.link != 0 {
						t.Errorf("sample %d: link_index %d, want none", i, s.link)
					}
					continue
				}
				if s.link <= 0 || int(s.link) >= len(d.links) {
					t.Fatalf("sample %d: link_index %d of %d links", i, s.link, len(d.links))
				}
				l := d.links[s.link]
				var trace []byte
				if w.link[0] != "" {
					trace = hexBytes(t, w.link[0])
				}
				if !bytes.Equal(l[0], trace) || !bytes.Equal(l[1], hexBytes(t, w.link[1])) {
					t.Errorf("sample %d: link trace %x span %x, want %s %s", i, l[0], l[1], w.link[0], w.link[1])
				}
			}
		})
	}
}

// FuzzEncodeLinks encodes a sample whose span_id and trace_id labels are
// any strings: it is linked exactly when span_id is a span ID (16
// lowercase hex digits, not all zero), its link holds those bytes (and the
// trace ID's when trace_id is one), and whatever is not linked stays an
// attribute.
func FuzzEncodeLinks(f *testing.F) {
	f.Add("00f067aa0ba902b7", "4bf92f3577b34da6a3ce929d0e0e4736", true)
	f.Add("00f067aa0ba902b7", "", false)
	f.Add("00F067AA0BA902B7", "x", true)
	f.Add("0000000000000000", "00000000000000000000000000000000", true)
	f.Fuzz(func(t *testing.T, span, trace string, v020 bool) {
		labels := map[string][]string{"span_id": {span}}
		if trace != "" {
			labels["trace_id"] = []string{trace}
		}
		l := &profile.Location{ID: 1}
		p := &profile.Profile{
			SampleType: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}},
			Location:   []*profile.Location{l},
			Sample:     []*profile.Sample{{Location: []*profile.Location{l}, Value: []int64{1}, Label: labels}},
		}
		v := V030
		if v020 {
			v = V020
		}
		b := Encode(nil, p, Request{Version: v})
		checkMessage(t, "request", b)
		d := decode(t, b, v)
		s := d.profs[0][0]
		isID := func(s string, n int) bool {
			b, err := hex.DecodeString(s)
			return err == nil && len(b) == n && s == hex.EncodeToString(b) && !bytes.Equal(b, make([]byte, n))
		}
		var want []string
		linked := isID(span, 8)
		traced := linked && isID(trace, 16)
		if !linked {
			want = append(want, "span_id="+span)
		}
		if trace != "" && !traced {
			want = append(want, "trace_id="+trace)
		}
		if got := d.sampleAttrs(s); !slices.Equal(got, want) {
			t.Errorf("attributes %q, want %q", got, want)
		}
		if !linked {
			if s.link != 0 || len(d.links) != 1 {
				t.Errorf("link_index %d, %d links: want none", s.link, len(d.links))
			}
			return
		}
		if s.link != 1 || len(d.links) != 2 {
			t.Fatalf("link_index %d, %d links: want 1 of 2", s.link, len(d.links))
		}
		if got := hex.EncodeToString(d.links[1][1]); got != span {
			t.Errorf("linked span %s, want %s", got, span)
		}
		if got := hex.EncodeToString(d.links[1][0]); traced && got != trace || !traced && got != "" {
			t.Errorf("linked trace %q for trace_id %q", got, trace)
		}
	})
}
