package wire

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/google/pprof/profile"
)

func TestVarint(t *testing.T) {
	for _, x := range []uint64{0, 1, 127, 128, 300, 1<<14 - 1, 1 << 14, 1<<35 + 7, math.MaxInt64, math.MaxUint64} {
		b := AppendVarint([]byte{0xff}, x)
		if want := binary.AppendUvarint([]byte{0xff}, x); string(b) != string(want) {
			t.Errorf("AppendVarint(%d) = %x, want %x", x, b, want)
		}
		if got := VarintSize(x); got != len(b)-1 {
			t.Errorf("VarintSize(%d) = %d, want %d", x, got, len(b)-1)
		}
		if got, n := ReadVarint(b[1:]); got != x || n != len(b)-1 {
			t.Errorf("ReadVarint(%x) = %d, %d; want %d, %d", b[1:], got, n, x, len(b)-1)
		}
	}
}

func TestReadVarintShort(t *testing.T) {
	for _, b := range [][]byte{nil, {0x80}, {0xff, 0xff}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}} {
		if x, n := ReadVarint(b); n != 0 || x != 0 {
			t.Errorf("ReadVarint(%x) = %d, %d; want 0, 0", b, x, n)
		}
	}
}

// TestFields encodes a pprof ValueType and a Function with these
// primitives and decodes them with google/pprof: the fields land where
// the format says.
func TestFields(t *testing.T) {
	// Profile: sample_type (1) ValueType{type 1, unit 2}; sample (2)
	// {location_id (1) packed [1], value (2) packed [5, -1]}; location (4)
	// {id 1, line (4) {function_id 1, line 42}}; function (5) {id 1,
	// name 3, filename 4}; string_table (6); period 0 left out.
	var vt, smp, line, loc, fn, p []byte
	vt = AppendUintOpt(vt, 1, 1)
	vt = AppendUintOpt(vt, 2, 2)
	smp = AppendPacked(smp, 1, []uint64{1})
	smp = AppendPacked(smp, 2, []int64{5, -1})
	line = AppendUintOpt(line, 1, 1)
	line = AppendUintOpt(line, 2, 42)
	if UintOptSize(1, 1)+UintOptSize(2, 42) != len(line) {
		t.Fatalf("UintOptSize disagrees with AppendUintOpt")
	}
	loc = AppendUint(loc, 1, 1)
	loc = AppendBytes(loc, 4, line)
	fn = AppendUintOpt(fn, 1, 1)
	fn = AppendUintOpt(fn, 2, 3)
	fn = AppendUintOpt(fn, 4, 4)
	fn = AppendUintOpt(fn, 5, 0)
	p = AppendBytes(p, 1, vt)
	p = AppendBytes(p, 1, vt) // two sample types, for the two values
	p = AppendBytes(p, 2, smp)
	p = AppendBytes(p, 4, loc)
	p = AppendBytes(p, 5, fn)
	for _, s := range []string{"", "alloc_space", "bytes", "main.f", "f.go"} {
		p = AppendString(p, 6, s)
	}
	p = AppendStringOpt(p, 6, "") // nothing
	p = AppendFixed64Opt(p, 99, 0)
	prof, err := profile.ParseData(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := prof.SampleType[0].Type + "/" + prof.SampleType[0].Unit; got != "alloc_space/bytes" {
		t.Errorf("sample type %q", got)
	}
	s := prof.Sample[0]
	if len(s.Value) != 2 || s.Value[0] != 5 || s.Value[1] != -1 {
		t.Errorf("values %v, want [5 -1]", s.Value)
	}
	if l := s.Location[0].Line[0]; l.Function.Name != "main.f" || l.Function.Filename != "f.go" || l.Line != 42 {
		t.Errorf("line %+v", l)
	}
}

func TestFixed64(t *testing.T) {
	b := AppendFixed64Opt(nil, 3, 0x0102030405060708)
	want := []byte{3<<3 | Fixed64, 8, 7, 6, 5, 4, 3, 2, 1}
	if string(b) != string(want) {
		t.Errorf("AppendFixed64Opt = %x, want %x", b, want)
	}
}

func FuzzReadVarint(f *testing.F) {
	f.Add([]byte{0x96, 0x01})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		x, n := ReadVarint(b)
		if n == 0 {
			return
		}
		if n > len(b) || n > 10 {
			t.Fatalf("length %d of %d bytes", n, len(b))
		}
		if again := AppendVarint(nil, x); len(again) > n {
			t.Fatalf("%d re-encodes in %d bytes, read from %d", x, len(again), n)
		}
	})
}
