package export

import (
	"bufio"
	"encoding/binary"
	"io"
	"reflect"
	"slices"

	"github.com/google/pprof/profile"
)

// encodeProfile writes p to w as an uncompressed protocol buffer, byte for
// byte what p.WriteUncompressed writes, without holding the encoding in
// memory. google/pprof marshals the whole profile into one growing buffer
// and first fills a label and location index per sample: for 100,000
// samples that is over 100 MB of allocation. This encoder streams each
// message as soon as it is encoded, reuses one scratch buffer, and encodes
// a label map shared by many samples once. It assigns string indices in
// the order google/pprof does, so the string table, and so the bytes, are
// the same (a test checks this).
//
// p is not modified.
func encodeProfile(w io.Writer, p *profile.Profile) error {
	e := &encoder{
		w:       bufio.NewWriterSize(w, 64<<10),
		strings: map[string]int64{"": 0},
		table:   []string{""},
		labels:  make(map[labelMapsKey][]byte),
	}
	for _, st := range p.SampleType {
		e.str(st.Type)
		e.str(st.Unit)
	}
	for _, st := range p.SampleType {
		e.valueType(1, st)
	}
	for _, s := range p.Sample {
		e.sample(s)
	}
	for _, m := range p.Mapping {
		file, build := e.str(m.File), e.str(m.BuildID)
		b := e.buf[:0]
		b = appendUint64Opt(b, 1, m.ID)
		b = appendUint64Opt(b, 2, m.Start)
		b = appendUint64Opt(b, 3, m.Limit)
		b = appendUint64Opt(b, 4, m.Offset)
		b = appendUint64Opt(b, 5, uint64(file))
		b = appendUint64Opt(b, 6, uint64(build))
		b = appendBoolOpt(b, 7, m.HasFunctions)
		b = appendBoolOpt(b, 8, m.HasFilenames)
		b = appendBoolOpt(b, 9, m.HasLineNumbers)
		b = appendBoolOpt(b, 10, m.HasInlineFrames)
		e.message(3, b)
	}
	for _, l := range p.Location {
		b := e.buf[:0]
		b = appendUint64Opt(b, 1, l.ID)
		if l.Mapping != nil {
			b = appendUint64Opt(b, 2, l.Mapping.ID)
		}
		b = appendUint64Opt(b, 3, l.Address)
		for _, ln := range l.Line {
			var fid uint64
			if ln.Function != nil {
				fid = ln.Function.ID
			}
			n := protoSize(1, fid) + protoSize(2, uint64(ln.Line)) + protoSize(3, uint64(ln.Column))
			b = appendVarint(b, 4<<3|2)
			b = appendVarint(b, uint64(n))
			b = appendUint64Opt(b, 1, fid)
			b = appendUint64Opt(b, 2, uint64(ln.Line))
			b = appendUint64Opt(b, 3, uint64(ln.Column))
		}
		b = appendBoolOpt(b, 5, l.IsFolded)
		e.message(4, b)
	}
	for _, f := range p.Function {
		name, sys, file := e.str(f.Name), e.str(f.SystemName), e.str(f.Filename)
		b := e.buf[:0]
		b = appendUint64Opt(b, 1, f.ID)
		b = appendUint64Opt(b, 2, uint64(name))
		b = appendUint64Opt(b, 3, uint64(sys))
		b = appendUint64Opt(b, 4, uint64(file))
		b = appendUint64Opt(b, 5, uint64(f.StartLine))
		e.message(5, b)
	}
	// The strings of the fields after the string table, in google/pprof's
	// order, before the table is written.
	drop, keep := e.str(p.DropFrames), e.str(p.KeepFrames)
	var ptType, ptUnit int64
	if pt := p.PeriodType; pt != nil {
		ptType, ptUnit = e.str(pt.Type), e.str(pt.Unit)
	}
	comments := make([]int64, len(p.Comments))
	for i, c := range p.Comments {
		comments[i] = e.str(c)
	}
	defType, docURL := e.str(p.DefaultSampleType), e.str(p.DocURL)
	for _, s := range e.table {
		b := appendVarint(e.buf[:0], 6<<3|2)
		b = appendVarint(b, uint64(len(s)))
		e.buf = b
		e.write(b)
		e.writeString(s)
	}
	b := e.buf[:0]
	b = appendUint64Opt(b, 7, uint64(drop))
	b = appendUint64Opt(b, 8, uint64(keep))
	b = appendUint64Opt(b, 9, uint64(p.TimeNanos))
	b = appendUint64Opt(b, 10, uint64(p.DurationNanos))
	e.buf = b
	e.write(b)
	if p.PeriodType != nil && (ptType != 0 || ptUnit != 0) {
		b = appendUint64Opt(e.buf[:0], 1, uint64(ptType))
		b = appendUint64Opt(b, 2, uint64(ptUnit))
		e.message(11, b)
	}
	b = appendUint64Opt(e.buf[:0], 12, uint64(p.Period))
	b = appendInt64s(b, 13, comments)
	b = appendVarint(b, 14<<3)
	b = appendVarint(b, uint64(defType))
	b = appendUint64Opt(b, 15, uint64(docURL))
	e.buf = b
	e.write(b)
	if e.err != nil {
		return e.err
	}
	return e.w.Flush()
}

// labelMapsKey identifies the label maps of a sample: the builder shares
// them between samples, so their encoding is computed once.
type labelMapsKey struct {
	label, num, unit uintptr
}

type encoder struct {
	w       *bufio.Writer
	err     error
	strings map[string]int64
	table   []string
	buf     []byte // scratch for one message
	hdr     [2 * binary.MaxVarintLen64]byte
	ids     []uint64
	labels  map[labelMapsKey][]byte
	keys    []string
}

// str returns the index of s in the string table, adding it.
func (e *encoder) str(s string) int64 {
	i, ok := e.strings[s]
	if !ok {
		i = int64(len(e.table))
		e.strings[s] = i
		e.table = append(e.table, s)
	}
	return i
}

func (e *encoder) write(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

func (e *encoder) writeString(s string) {
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}

// message writes the field tag with b, an encoded message, as its value.
// b must be e.buf or share its array.
func (e *encoder) message(tag int, b []byte) {
	h := appendVarint(e.hdr[:0], uint64(tag)<<3|2)
	h = appendVarint(h, uint64(len(b)))
	e.write(h)
	e.write(b)
	e.buf = b
}

func (e *encoder) valueType(tag int, vt *profile.ValueType) {
	b := appendUint64Opt(e.buf[:0], 1, uint64(e.str(vt.Type)))
	b = appendUint64Opt(b, 2, uint64(e.str(vt.Unit)))
	e.message(tag, b)
}

func mapPointer[M any](m M) uintptr {
	return uintptr(reflect.ValueOf(m).UnsafePointer())
}

// sample writes one sample: its location ids, its values and its labels,
// sorted by key as google/pprof sorts them.
func (e *encoder) sample(s *profile.Sample) {
	e.ids = e.ids[:0]
	for _, l := range s.Location {
		e.ids = append(e.ids, l.ID)
	}
	b := appendUint64s(e.buf[:0], 1, e.ids)
	b = appendInt64sPacked(b, 2, s.Value)
	k := labelMapsKey{mapPointer(s.Label), mapPointer(s.NumLabel), mapPointer(s.NumUnit)}
	enc, ok := e.labels[k]
	if !ok {
		enc = e.encodeLabels(s)
		e.labels[k] = enc
	}
	b = append(b, enc...)
	e.message(2, b)
}

// encodeLabels returns the encoded label fields of a sample, adding their
// strings to the table in google/pprof's order.
func (e *encoder) encodeLabels(s *profile.Sample) []byte {
	var out []byte
	label := func(key, str, num, unit int64) {
		n := protoSize(1, uint64(key)) + protoSize(2, uint64(str)) + protoSize(3, uint64(num)) + protoSize(4, uint64(unit))
		out = appendVarint(out, 3<<3|2)
		out = appendVarint(out, uint64(n))
		out = appendUint64Opt(out, 1, uint64(key))
		out = appendUint64Opt(out, 2, uint64(str))
		out = appendUint64Opt(out, 3, uint64(num))
		out = appendUint64Opt(out, 4, uint64(unit))
	}
	e.keys = e.keys[:0]
	for k := range s.Label {
		e.keys = append(e.keys, k)
	}
	slices.Sort(e.keys)
	for _, k := range e.keys {
		for _, v := range s.Label[k] {
			key := e.str(k)
			label(key, e.str(v), 0, 0)
		}
	}
	e.keys = e.keys[:0]
	for k := range s.NumLabel {
		e.keys = append(e.keys, k)
	}
	slices.Sort(e.keys)
	for _, k := range e.keys {
		key := e.str(k)
		units := s.NumUnit[k]
		for i, v := range s.NumLabel[k] {
			var unit int64
			if len(units) != 0 {
				unit = e.str(units[i])
			}
			label(key, 0, v, unit)
		}
	}
	return out
}

func appendVarint(b []byte, x uint64) []byte {
	for x >= 128 {
		b = append(b, byte(x)|0x80)
		x >>= 7
	}
	return append(b, byte(x))
}

func varintSize(x uint64) int {
	n := 1
	for x >= 128 {
		n++
		x >>= 7
	}
	return n
}

// protoSize is the encoded size of an optional varint field: nothing if x
// is 0.
func protoSize(tag int, x uint64) int {
	if x == 0 {
		return 0
	}
	return varintSize(uint64(tag)<<3) + varintSize(x)
}

func appendUint64Opt(b []byte, tag int, x uint64) []byte {
	if x == 0 {
		return b
	}
	b = appendVarint(b, uint64(tag)<<3)
	return appendVarint(b, x)
}

func appendBoolOpt(b []byte, tag int, x bool) []byte {
	if !x {
		return b
	}
	return appendUint64Opt(b, tag, 1)
}

// appendUint64s encodes a repeated field as google/pprof does: packed if
// it has more than two values, else one field per value.
func appendUint64s(b []byte, tag int, x []uint64) []byte {
	if len(x) > 2 {
		n := 0
		for _, u := range x {
			n += varintSize(u)
		}
		b = appendVarint(b, uint64(tag)<<3|2)
		b = appendVarint(b, uint64(n))
		for _, u := range x {
			b = appendVarint(b, u)
		}
		return b
	}
	for _, u := range x {
		b = appendVarint(b, uint64(tag)<<3)
		b = appendVarint(b, u)
	}
	return b
}

func appendInt64s(b []byte, tag int, x []int64) []byte {
	if len(x) > 2 {
		return appendInt64sPacked(b, tag, x)
	}
	for _, u := range x {
		b = appendVarint(b, uint64(tag)<<3)
		b = appendVarint(b, uint64(u))
	}
	return b
}

// appendInt64sPacked is appendInt64s for a field that google/pprof also
// encodes through encodeInt64s.
func appendInt64sPacked(b []byte, tag int, x []int64) []byte {
	if len(x) <= 2 {
		for _, u := range x {
			b = appendVarint(b, uint64(tag)<<3)
			b = appendVarint(b, uint64(u))
		}
		return b
	}
	n := 0
	for _, u := range x {
		n += varintSize(uint64(u))
	}
	b = appendVarint(b, uint64(tag)<<3|2)
	b = appendVarint(b, uint64(n))
	for _, u := range x {
		b = appendVarint(b, uint64(u))
	}
	return b
}
