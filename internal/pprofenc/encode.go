// Package pprofenc writes pprof profiles: a streaming protocol buffer
// encoder that allocates little (package export's profiles and the
// agent's uploads), a Writer that keeps its gzip writer and tables between
// profiles, and the additions the agent's Pyroscope uploads need, written
// while encoding rather than by decoding and encoding again.
package pprofenc

import (
	"bufio"
	"encoding/binary"
	"io"
	"reflect"
	"slices"
	"strconv"
	"sync"

	"github.com/google/pprof/profile"
	"github.com/klauspost/compress/gzip"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/wire"
)

// Options add to what Encode writes. The zero value adds nothing.
type Options struct {
	// NumAsString lists numeric label keys whose first value is also
	// written as a string label of the same key (in decimal), on samples
	// that have no string label of that key. Pyroscope keeps a sample's
	// string labels and drops its numeric ones.
	NumAsString []string
	// HeapNumAsString is NumAsString for the samples whose string label
	// memory is "heap" only.
	HeapNumAsString []string
	// TypeFrames adds, to each sample with a string label type that is not
	// a Go heap sample, a leaf frame named after the type: a function of
	// that name without a line, in a file named "type" (the frames
	// go tool pprof -tagleaf=type adds).
	TypeFrames bool
	// ArenaVariance adds, to a profile with an alloc_samples sample type
	// and a sample that is not a Go heap sample, the sample types
	// alloc_var and alloc_wbound (pprofmt.VarianceSums) and, to each
	// arena sample with a size (numeric label bytes) and a mean (numeric
	// label sampling_mean, or the profile's period), their values and the
	// string label pprofmt.LabelVarFormat. Other samples get zeros and no
	// label.
	ArenaVariance bool
	// DropLabels lists string label keys left out of every sample (such
	// as trace_id, a series label per request on Pyroscope v1.19).
	DropLabels []string
}

// TypeFrameFile is the file name of the frames Options.TypeFrames adds.
const TypeFrameFile = pprofmt.LabelType

// encode writes p to w (see Encode). google/pprof marshals the whole
// profile into one growing buffer and first fills a label and location index per sample: for 100,000
// samples that is over 100 MB of allocation. This encoder streams each
// message as soon as it is encoded, reuses one scratch buffer, and encodes
// a label map shared by many samples once. It assigns string indices in
// the order google/pprof does, so the string table, and so the bytes, are
// the same (a test checks this).
//
// p is not modified.
func (e *encoder) encode(w io.Writer, p *profile.Profile, opts *Options) error {
	defer e.reset()
	e.w.Reset(w)
	e.strings[""] = 0
	e.table = append(e.table, "")
	if opts != nil {
		e.opts = *opts
	}
	if e.opts.TypeFrames {
		for _, l := range p.Location {
			e.nextLoc = max(e.nextLoc, l.ID)
		}
		for _, f := range p.Function {
			e.nextFunc = max(e.nextFunc, f.ID)
		}
	}
	types := p.SampleType
	e.varIdx = -1
	if e.opts.ArenaVariance {
		e.varIdx = pprofmt.VarianceIndex(types)
		if !slices.ContainsFunc(p.Sample, func(s *profile.Sample) bool { return !isHeap(s) }) {
			e.varIdx = -1 // a Go heap profile: it has no arena samples
		}
		if e.varIdx >= 0 {
			types = append(slices.Clip(types), pprofmt.VarianceSampleTypes()...)
			e.period = p.Period
		}
	}
	for _, st := range types {
		e.str(st.Type)
		e.str(st.Unit)
	}
	for _, st := range types {
		e.valueType(1, st)
	}
	for _, s := range p.Sample {
		e.sample(s)
	}
	for _, m := range p.Mapping {
		file, build := e.str(m.File), e.str(m.BuildID)
		b := e.buf[:0]
		b = wire.AppendUintOpt(b, 1, m.ID)
		b = wire.AppendUintOpt(b, 2, m.Start)
		b = wire.AppendUintOpt(b, 3, m.Limit)
		b = wire.AppendUintOpt(b, 4, m.Offset)
		b = wire.AppendUintOpt(b, 5, uint64(file))
		b = wire.AppendUintOpt(b, 6, uint64(build))
		b = appendBoolOpt(b, 7, m.HasFunctions)
		b = appendBoolOpt(b, 8, m.HasFilenames)
		b = appendBoolOpt(b, 9, m.HasLineNumbers)
		b = appendBoolOpt(b, 10, m.HasInlineFrames)
		e.message(3, b)
	}
	for _, l := range p.Location {
		b := e.buf[:0]
		b = wire.AppendUintOpt(b, 1, l.ID)
		if l.Mapping != nil {
			b = wire.AppendUintOpt(b, 2, l.Mapping.ID)
		}
		b = wire.AppendUintOpt(b, 3, l.Address)
		for _, ln := range l.Line {
			var fid uint64
			if ln.Function != nil {
				fid = ln.Function.ID
			}
			n := wire.UintOptSize(1, fid) + wire.UintOptSize(2, uint64(ln.Line)) + wire.UintOptSize(3, uint64(ln.Column))
			b = wire.AppendVarint(b, 4<<3|2)
			b = wire.AppendVarint(b, uint64(n))
			b = wire.AppendUintOpt(b, 1, fid)
			b = wire.AppendUintOpt(b, 2, uint64(ln.Line))
			b = wire.AppendUintOpt(b, 3, uint64(ln.Column))
		}
		b = appendBoolOpt(b, 5, l.IsFolded)
		e.message(4, b)
	}
	for _, tf := range e.typeFrames {
		b := wire.AppendUintOpt(e.buf[:0], 1, tf.loc)
		n := wire.UintOptSize(1, tf.fn)
		b = wire.AppendVarint(b, 4<<3|2)
		b = wire.AppendVarint(b, uint64(n))
		b = wire.AppendUintOpt(b, 1, tf.fn)
		e.message(4, b)
	}
	for _, f := range p.Function {
		e.function(f.ID, f.Name, f.SystemName, f.Filename, f.StartLine)
	}
	for _, tf := range e.typeFrames {
		e.function(tf.fn, tf.name, tf.name, TypeFrameFile, 0)
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
	e.writeStringTable()
	b := e.buf[:0]
	b = wire.AppendUintOpt(b, 7, uint64(drop))
	b = wire.AppendUintOpt(b, 8, uint64(keep))
	b = wire.AppendUintOpt(b, 9, uint64(p.TimeNanos))
	b = wire.AppendUintOpt(b, 10, uint64(p.DurationNanos))
	e.buf = b
	e.write(b)
	if p.PeriodType != nil && (ptType != 0 || ptUnit != 0) {
		b = wire.AppendUintOpt(e.buf[:0], 1, uint64(ptType))
		b = wire.AppendUintOpt(b, 2, uint64(ptUnit))
		e.message(11, b)
	}
	b = wire.AppendUintOpt(e.buf[:0], 12, uint64(p.Period))
	b = appendInt64s(b, 13, comments)
	b = wire.AppendVarint(b, 14<<3)
	b = wire.AppendVarint(b, uint64(defType))
	b = wire.AppendUintOpt(b, 15, uint64(docURL))
	e.buf = b
	e.write(b)
	if e.err != nil {
		return e.err
	}
	return e.w.Flush()
}

func (e *encoder) function(id uint64, name, sys, file string, start int64) {
	n, s, f := e.str(name), e.str(sys), e.str(file)
	b := e.buf[:0]
	b = wire.AppendUintOpt(b, 1, id)
	b = wire.AppendUintOpt(b, 2, uint64(n))
	b = wire.AppendUintOpt(b, 3, uint64(s))
	b = wire.AppendUintOpt(b, 4, uint64(f))
	b = wire.AppendUintOpt(b, 5, uint64(start))
	e.message(5, b)
}

// typeFrame is a leaf frame Options.TypeFrames adds: a location and a
// function of their own.
type typeFrame struct {
	name    string
	loc, fn uint64
}

// encodedLabels is the encoding of a sample's label maps and, with
// Options.TypeFrames, the location of its type frame (0 if none); with
// Options.ArenaVariance, the size and mean of its events (0 if it gets no
// variance sums).
type encodedLabels struct {
	enc           []byte
	typeLoc       uint64
	varSize, mean int64
}

// Writer encodes profiles one after another, keeping its gzip writer, its
// 64 KiB output buffer and its tables between them. Its zero value is
// ready to use. A Writer must not be used by two goroutines at once.
type Writer struct {
	e  *encoder
	gz *gzip.Writer
}

// Encode writes p to w as the package's Encode does.
func (wr *Writer) Encode(w io.Writer, p *profile.Profile, opts *Options) error {
	if wr.e == nil {
		wr.e = newEncoder()
	}
	return wr.e.encode(w, p, opts)
}

// WriteGzip writes p to w as Encode does, gzipped (see newGzip).
func (wr *Writer) WriteGzip(w io.Writer, p *profile.Profile, opts *Options) error {
	if wr.gz == nil {
		wr.gz = newGzip(w)
	} else {
		wr.gz.Reset(w)
	}
	defer wr.gz.Reset(nil)
	if err := wr.Encode(wr.gz, p, opts); err != nil {
		return err
	}
	return wr.gz.Close()
}

// newGzip returns a gzip writer to w at github.com/klauspost/compress's
// StatelessCompression level, which keeps no compressor state between
// writes. compress/flate's compressor holds about 1.2 MB at every level
// (its hash tables are arrays inside it): kept between an agent's uploads,
// as the Writers here keep theirs, two of them were 2.3 MB of a JSON
// service's 3.3 MB live heap, and the heap goal doubles what stays live
// (docs/agent-cost.md). Allocated for each upload instead, it would make
// the agent a top allocator of the service's heap profile. The stateless
// level compresses a profile as well as compress/flate's BestSpeed did
// (pprof readers accept any gzip level).
func newGzip(w io.Writer) *gzip.Writer {
	gz, _ := gzip.NewWriterLevel(w, gzip.StatelessCompression) // a valid level: no error
	return gz
}

// writers keeps Writers between the profiles of Encode and WriteGzip.
var writers = sync.Pool{New: func() any { return new(Writer) }}

// Encode writes p to w as an uncompressed protocol buffer, with opts'
// additions (nil: none). Without additions it writes byte for byte what
// p.WriteUncompressed writes, without holding the encoding in memory. It
// uses a Writer of a pool.
func Encode(w io.Writer, p *profile.Profile, opts *Options) error {
	wr := writers.Get().(*Writer)
	defer writers.Put(wr)
	return wr.Encode(w, p, opts)
}

// WriteGzip is Encode gzipped (see Writer.WriteGzip).
func WriteGzip(w io.Writer, p *profile.Profile, opts *Options) error {
	wr := writers.Get().(*Writer)
	defer writers.Put(wr)
	return wr.WriteGzip(w, p, opts)
}

func newEncoder() *encoder {
	return &encoder{
		w:       bufio.NewWriterSize(nil, 64<<10),
		strings: map[string]int64{},
		labels:  map[labelMapsKey]encodedLabels{},
		varIdx:  -1,
	}
}

// reset empties e, keeping its storage.
func (e *encoder) reset() {
	e.w.Reset(nil)
	e.err = nil
	e.opts = Options{}
	clear(e.strings)
	clear(e.table)
	e.table = e.table[:0]
	clear(e.labels)
	clear(e.keys)
	e.keys = e.keys[:0]
	e.typeFrames = e.typeFrames[:0]
	clear(e.typeFrameOf)
	e.nextLoc, e.nextFunc = 0, 0
	e.varIdx, e.period = -1, 0
}

// labelMapsKey identifies the label maps of a sample: the builder shares
// them between samples, so their encoding is computed once.
type labelMapsKey struct {
	label, num, unit uintptr
}

type encoder struct {
	w       *bufio.Writer
	err     error
	opts    Options
	strings map[string]int64
	table   []string
	buf     []byte // scratch for one message
	hdr     [2 * binary.MaxVarintLen64]byte
	ids     []uint64
	labels  map[labelMapsKey]encodedLabels
	keys    []string

	// The type frames added (Options.TypeFrames), by type, and the last
	// location and function ids taken.
	typeFrames        []typeFrame
	typeFrameOf       map[string]uint64
	nextLoc, nextFunc uint64

	// Options.ArenaVariance: the index of alloc_samples (-1: no variance
	// sums), the profile's period, and the values of one sample.
	varIdx int
	period int64
	values []int64
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

// writeStringTable writes the string table, field 6: once every string
// the profile refers to has its index.
func (e *encoder) writeStringTable() {
	for _, s := range e.table {
		b := wire.AppendVarint(e.buf[:0], 6<<3|2)
		b = wire.AppendVarint(b, uint64(len(s)))
		e.buf = b
		e.write(b)
		e.writeString(s)
	}
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
	h := wire.AppendVarint(e.hdr[:0], uint64(tag)<<3|2)
	h = wire.AppendVarint(h, uint64(len(b)))
	e.write(h)
	e.write(b)
	e.buf = b
}

func (e *encoder) valueType(tag int, vt *profile.ValueType) {
	b := wire.AppendUintOpt(e.buf[:0], 1, uint64(e.str(vt.Type)))
	b = wire.AppendUintOpt(b, 2, uint64(e.str(vt.Unit)))
	e.message(tag, b)
}

func mapPointer[M any](m M) uintptr {
	return uintptr(reflect.ValueOf(m).UnsafePointer())
}

// sample writes one sample: its location ids, its values and its labels,
// sorted by key as google/pprof sorts them.
func (e *encoder) sample(s *profile.Sample) {
	k := labelMapsKey{mapPointer(s.Label), mapPointer(s.NumLabel), mapPointer(s.NumUnit)}
	el, ok := e.labels[k]
	if !ok {
		el.varSize, el.mean = e.varianceOf(s)
		el.enc, el.typeLoc = e.encodeLabels(s, el.varSize > 0), e.typeFrame(s)
		e.labels[k] = el
	}
	e.ids = e.ids[:0]
	if el.typeLoc != 0 {
		e.ids = append(e.ids, el.typeLoc)
	}
	for _, l := range s.Location {
		e.ids = append(e.ids, l.ID)
	}
	b := appendUint64s(e.buf[:0], 1, e.ids)
	vals := s.Value
	if e.varIdx >= 0 {
		var v, wb int64
		if el.varSize > 0 && e.varIdx < len(s.Value) {
			v, wb = pprofmt.VarianceSums(s.Value[e.varIdx], el.varSize, el.mean)
		}
		e.values = append(append(e.values[:0], s.Value...), v, wb)
		vals = e.values
	}
	b = appendInt64sPacked(b, 2, vals)
	b = append(b, el.enc...)
	e.message(2, b)
}

// isHeap reports whether s is a Go heap sample (string label memory=heap).
func isHeap(s *profile.Sample) bool {
	m := s.Label[pprofmt.LabelMemory]
	return len(m) > 0 && m[0] == pprofmt.MemoryHeap
}

// typeFrame returns the location of s's type frame, adding it the first
// time, or 0 when s gets none (see Options.TypeFrames).
func (e *encoder) typeFrame(s *profile.Sample) uint64 {
	t := s.Label[pprofmt.LabelType]
	if !e.opts.TypeFrames || len(t) == 0 || isHeap(s) {
		return 0
	}
	if id, ok := e.typeFrameOf[t[0]]; ok {
		return id
	}
	if e.typeFrameOf == nil {
		e.typeFrameOf = map[string]uint64{}
	}
	e.nextLoc++
	e.nextFunc++
	e.typeFrames = append(e.typeFrames, typeFrame{name: t[0], loc: e.nextLoc, fn: e.nextFunc})
	e.typeFrameOf[t[0]] = e.nextLoc
	return e.nextLoc
}

// varianceOf returns the object size and the mean of the events of a
// sample that gets variance sums (Options.ArenaVariance), or zeros.
func (e *encoder) varianceOf(s *profile.Sample) (size, mean int64) {
	if e.varIdx < 0 {
		return 0, 0
	}
	return pprofmt.VarianceOf(s, e.period)
}

// encodeLabels returns the encoded label fields of a sample, adding their
// strings to the table in google/pprof's order; marked adds the label
// pprofmt.LabelVarFormat (Options.ArenaVariance).
func (e *encoder) encodeLabels(s *profile.Sample, marked bool) []byte {
	var out []byte
	label := func(key, str, num, unit int64) { out = appendLabel(out, key, str, num, unit) }
	e.keys = e.keys[:0]
	for k := range s.Label {
		if !slices.Contains(e.opts.DropLabels, k) {
			e.keys = append(e.keys, k)
		}
	}
	// The numeric labels repeated as strings (Options.NumAsString).
	var asString map[string]string
	add := func(keys []string) {
		for _, k := range keys {
			if v := s.NumLabel[k]; len(v) > 0 && len(s.Label[k]) == 0 && asString[k] == "" {
				if asString == nil {
					asString = map[string]string{}
				}
				asString[k] = strconv.FormatInt(v[0], 10)
				e.keys = append(e.keys, k)
			}
		}
	}
	add(e.opts.NumAsString)
	if isHeap(s) {
		add(e.opts.HeapNumAsString)
	}
	if marked && len(s.Label[pprofmt.LabelVarFormat]) == 0 {
		if asString == nil {
			asString = map[string]string{}
		}
		asString[pprofmt.LabelVarFormat] = pprofmt.VarFormat
		e.keys = append(e.keys, pprofmt.LabelVarFormat)
	}
	slices.Sort(e.keys)
	for _, k := range e.keys {
		if v, ok := asString[k]; ok {
			label(e.str(k), e.str(v), 0, 0)
			continue
		}
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

func appendBoolOpt(b []byte, tag int, x bool) []byte {
	if !x {
		return b
	}
	return wire.AppendUintOpt(b, tag, 1)
}

// appendUint64s encodes a repeated field as google/pprof does: packed if
// it has more than two values, else one field per value.
func appendUint64s(b []byte, tag int, x []uint64) []byte {
	if len(x) > 2 {
		n := 0
		for _, u := range x {
			n += wire.VarintSize(u)
		}
		b = wire.AppendVarint(b, uint64(tag)<<3|2)
		b = wire.AppendVarint(b, uint64(n))
		for _, u := range x {
			b = wire.AppendVarint(b, u)
		}
		return b
	}
	for _, u := range x {
		b = wire.AppendVarint(b, uint64(tag)<<3)
		b = wire.AppendVarint(b, u)
	}
	return b
}

func appendInt64s(b []byte, tag int, x []int64) []byte {
	if len(x) > 2 {
		return appendInt64sPacked(b, tag, x)
	}
	for _, u := range x {
		b = wire.AppendVarint(b, uint64(tag)<<3)
		b = wire.AppendVarint(b, uint64(u))
	}
	return b
}

// appendInt64sPacked is appendInt64s for a field that google/pprof also
// encodes through encodeInt64s.
func appendInt64sPacked(b []byte, tag int, x []int64) []byte {
	if len(x) <= 2 {
		for _, u := range x {
			b = wire.AppendVarint(b, uint64(tag)<<3)
			b = wire.AppendVarint(b, uint64(u))
		}
		return b
	}
	n := 0
	for _, u := range x {
		n += wire.VarintSize(uint64(u))
	}
	b = wire.AppendVarint(b, uint64(tag)<<3|2)
	b = wire.AppendVarint(b, uint64(n))
	for _, u := range x {
		b = wire.AppendVarint(b, uint64(u))
	}
	return b
}
