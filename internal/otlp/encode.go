// Package otlp encodes pprof profiles as OpenTelemetry profiles: an OTLP
// ExportProfilesServiceRequest of the v1development profiles signal, in
// one of two wire formats of opentelemetry-proto (see [Version]): profiles
// v0.3.0, which Grafana Pyroscope v2.2 and OpenTelemetry Collector v0.148.0
// and later read, or v0.2.0, which Pyroscope v1.19 and Collector v0.147.0
// and earlier read. The two differ only in the numbers of the Sample's
// fields.
//
// One pprof profile becomes one ScopeProfiles holding one Profile per pprof
// sample type (an OTLP Profile has a single sample type), all sharing one
// dictionary: strings, functions, mappings, locations, stacks and
// attributes are written once for all of them. A pprof sample becomes, in
// each Profile where its value is not zero, a Sample with that one value,
// the sample's stack and its labels as attributes: a string label as a
// string attribute, a numeric label as an integer attribute with its unit
// (so "bytes" keeps its unit, bytes). A sample whose values are all zero
// carries nothing and is left out.
//
// A sample that carries a span, the label span_id holding one span ID (16
// lowercase hex digits, not all zero, as tracing integrations such as
// otelarena and grafana/otel-profiling-go set it), is linked to it: its
// link_index points to an entry of the dictionary's link table holding
// the span ID's 8 bytes (and the trace ID's 16 when a label trace_id
// holds one, 32 lowercase hex digits), one entry per distinct link. The
// link replaces the span_id (and trace_id) attribute: OTLP readers take a
// sample's span from its link, and Grafana Pyroscope makes the label
// span_id of it (v1.19 and v2.2; v2.2 also trace_id), so that an attribute
// as well would give the sample the label twice. A span_id label that does
// not hold one span ID stays an attribute.
//
// The pprof profile's own fields become Profile attributes, so that the
// conversion loses nothing a reader needs: the arenaprof comments that
// mark the window and list the sampling means as "arenaprof.window" (a
// string) and "arenaprof.means" / "arenaprof.inuse_means" (integer arrays,
// unit bytes), other comments as "pprof.comment", and the default sample
// type, drop and keep frames and doc URL under "pprof.". What does not
// cross: the mapping's has_functions/filenames/line_numbers/inline_frames
// flags (a reader derives them from the locations) and Location.IsFolded.
//
// The encoder is written by hand, like the pprof encoder in export: the
// generated protobuf types would add google.golang.org/protobuf (and the
// OTLP modules) to every user's build. The round trip through the
// official generated types is tested in tools/otelcol (v0.2.0) and
// tools/otelcol2 (v0.3.0).
package otlp

import (
	"cmp"
	"encoding/binary"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"

	"github.com/arenaprof/arenaprof/internal/wire"
)

// Attribute keys of the Profile attributes (see the package doc).
const (
	AttrWindow            = "arenaprof.window"
	AttrMeans             = "arenaprof.means"
	AttrInUseMeans        = "arenaprof.inuse_means"
	AttrComment           = "pprof.comment"
	AttrDefaultSampleType = "pprof.default_sample_type"
	AttrDropFrames        = "pprof.drop_frames"
	AttrKeepFrames        = "pprof.keep_frames"
	AttrDocURL            = "pprof.doc_url"
	// AttrBuildID is the mapping attribute holding a pprof mapping's build
	// ID, under the semantic-conventions name Pyroscope reads it from.
	AttrBuildID = "process.executable.build_id.gnu"
)

// The labels whose values a sample's link carries (see the package doc).
const (
	LabelSpanID  = "span_id"
	LabelTraceID = "trace_id"
)

// KeyValue is a string attribute of the resource or the scope.
type KeyValue struct {
	Key, Value string
}

// Request says what surrounds the profiles in the request.
type Request struct {
	// Resource holds the resource attributes (service.name first).
	Resource []KeyValue
	// ScopeName, ScopeVersion and ScopeAttributes describe the
	// instrumentation scope.
	ScopeName, ScopeVersion string
	ScopeAttributes         []KeyValue
	// Version is the wire format; the zero value is [V030].
	Version Version
	// SampleAttributes, if set, are string attributes added to every
	// sample (after its own) that has no label of the same key: for a
	// receiver that reads them there and not from the resource or the
	// scope (see the agent's OTLP uploader).
	SampleAttributes []KeyValue
	// NumAsString, if set, selects numeric labels to send as string
	// attributes (the decimal value, with the label's unit): a backend
	// that keeps only string attributes, as Pyroscope does, then keeps
	// them. It sees a sample and the key of one of its numeric labels.
	NumAsString func(s *profile.Sample, key string) bool
	// PeriodType, if set, is sent in place of the profile's period type:
	// Pyroscope names an OTLP profile's type after its period type.
	PeriodType *profile.ValueType
}

// attr is one entry of the attribute table: a string or an integer (or an
// integer array) value with an optional unit.
type attr struct {
	key, str, unit string
	num            int64
	isNum          bool
}

type encoder struct {
	strings   map[string]int32
	table     []string
	functions map[*profile.Function]int32
	mappings  map[*profile.Mapping]int32
	locations map[*profile.Location]int32
	stacks    map[string]int32
	// stackOf caches stack by the identity of a sample's location slice:
	// profile builders give the samples of one stack one slice.
	stackOf map[stackSlice]int32
	attrs   map[attr]int32
	links   map[link]int32
	// the dictionary's tables, encoded
	funcTable, mapTable, locTable, linkTable, stackTable, attrTable table

	numAsString func(*profile.Sample, string) bool

	scratch []byte
	idx     []int32
	keys    []string
	labels  map[labelMapsKey]sampleLabels
}

// sampleLabels is what a sample's labels become: attribute indices and a
// link index (0: none).
type sampleLabels struct {
	attrs []int32
	link  int32
}

// link is an entry of the link table: a trace ID (zero when unknown) and
// a span ID.
type link struct {
	trace [16]byte
	span  [8]byte
}

type labelMapsKey struct{ label, num, unit uintptr }

// Encode returns p as an OTLP ExportProfilesServiceRequest in protobuf,
// appended to dst. p is not modified.
func Encode(dst []byte, p *profile.Profile, r Request) []byte {
	e := &encoder{
		strings:   map[string]int32{"": 0},
		table:     []string{""},
		functions: map[*profile.Function]int32{},
		mappings:  map[*profile.Mapping]int32{},
		locations: map[*profile.Location]int32{},
		stacks:    map[string]int32{"": 0},
		stackOf:   map[stackSlice]int32{},
		attrs:     map[attr]int32{{}: 0},
		links:     map[link]int32{{}: 0},
		labels:    map[labelMapsKey]sampleLabels{},

		numAsString: r.NumAsString,
	}
	// Index 0 of every table is the zero value, which stands for "none".
	for t, field := range map[*table]int{&e.mapTable: 1, &e.locTable: 2, &e.funcTable: 3, &e.linkTable: 4, &e.attrTable: 6, &e.stackTable: 7} {
		t.field = field
		t.add(nil)
	}

	// Each sample's stack and attributes, shared by all its Profiles.
	common := make([][]byte, len(p.Sample))
	var arena []byte
	fAttrs, fLink, fValues := 2, 3, 4 // Sample.attribute_indices, link_index, values
	if r.Version == V020 {
		fAttrs, fLink, fValues = 3, 4, 2
	}
	extra := make([]int32, len(r.SampleAttributes))
	for i, kv := range r.SampleAttributes {
		extra[i] = e.attr(attr{key: kv.Key, str: kv.Value})
	}
	var attrs []int32
	for i, s := range p.Sample {
		start := len(arena)
		arena = wire.AppendUintOpt(arena, 1, uint64(e.sampleStack(s.Location)))
		sl := e.sampleLabels(s)
		attrs = append(attrs[:0], sl.attrs...)
		for j, kv := range r.SampleAttributes {
			// A label of the sample's own keeps its key.
			if _, ok := s.Label[kv.Key]; !ok && s.NumLabel[kv.Key] == nil {
				attrs = append(attrs, extra[j])
			}
		}
		arena = wire.AppendPacked(arena, fAttrs, attrs)
		arena = wire.AppendUintOpt(arena, fLink, uint64(sl.link))
		common[i] = arena[start:len(arena):len(arena)]
	}
	profAttrs := e.profileAttrs(p)

	// Each Profile holds at most every sample's shared part plus its
	// value (at most 10 bytes) and framing (at most 8).
	n := 0
	for _, c := range common {
		n += len(c) + 18
	}
	profs := make([]byte, 0, min(n*len(p.SampleType), 1<<30))
	var body []byte
	for t, st := range p.SampleType {
		body = body[:0]
		body = wire.AppendBytes(body, 1, e.valueType(st))
		for i, s := range p.Sample {
			if t >= len(s.Value) || s.Value[t] == 0 {
				continue
			}
			v := uint64(s.Value[t])
			body = wire.AppendTag(body, 2, wire.Len)
			body = binary.AppendUvarint(body, uint64(len(common[i])+1+1+wire.VarintSize(v)))
			body = append(body, common[i]...)
			body = wire.AppendTag(body, fValues, wire.Len)
			body = binary.AppendUvarint(body, uint64(wire.VarintSize(v)))
			body = binary.AppendUvarint(body, v)
		}
		body = wire.AppendFixed64Opt(body, 3, uint64(p.TimeNanos))
		body = wire.AppendUintOpt(body, 4, uint64(p.DurationNanos))
		if pt := cmp.Or(r.PeriodType, p.PeriodType); pt != nil {
			body = wire.AppendBytes(body, 5, e.valueType(pt))
		}
		body = wire.AppendUintOpt(body, 6, uint64(p.Period))
		body = wire.AppendPacked(body, 11, profAttrs)
		profs = wire.AppendBytes(profs, 2, body)
	}

	// The dictionary, now that every table is complete.
	var dict []byte
	dict = append(dict, e.mapTable.buf...)
	dict = append(dict, e.locTable.buf...)
	dict = append(dict, e.funcTable.buf...)
	dict = append(dict, e.linkTable.buf...)
	for _, s := range e.table {
		dict = wire.AppendTag(dict, 5, wire.Len)
		dict = binary.AppendUvarint(dict, uint64(len(s)))
		dict = append(dict, s...)
	}
	dict = append(dict, e.attrTable.buf...)
	dict = append(dict, e.stackTable.buf...)

	var res []byte
	for _, kv := range r.Resource {
		res = wire.AppendBytes(res, 1, keyValue(e.scratch[:0], kv))
	}
	var scope []byte
	scope = wire.AppendStringOpt(scope, 1, r.ScopeName)
	scope = wire.AppendStringOpt(scope, 2, r.ScopeVersion)
	for _, kv := range r.ScopeAttributes {
		scope = wire.AppendBytes(scope, 3, keyValue(e.scratch[:0], kv))
	}
	// ScopeProfiles: scope, then the Profiles, written without a copy of
	// the Profiles into an intermediate message.
	var scopeHead []byte
	scopeHead = wire.AppendBytes(scopeHead, 1, scope)
	spLen := len(scopeHead) + len(profs)
	var rpHead []byte
	rpHead = wire.AppendBytes(rpHead, 1, res)
	rpHead = wire.AppendTag(rpHead, 2, wire.Len)
	rpHead = binary.AppendUvarint(rpHead, uint64(spLen))
	rpLen := len(rpHead) + spLen

	dst = slices.Grow(dst, rpLen+len(dict)+16)
	dst = wire.AppendTag(dst, 1, wire.Len)
	dst = binary.AppendUvarint(dst, uint64(rpLen))
	dst = append(dst, rpHead...)
	dst = append(dst, scopeHead...)
	dst = append(dst, profs...)
	dst = wire.AppendBytes(dst, 2, dict)
	return dst
}

func keyValue(b []byte, kv KeyValue) []byte {
	var v []byte
	v = wire.AppendTag(v, 1, wire.Len) // AnyValue.string_value, even when empty
	v = binary.AppendUvarint(v, uint64(len(kv.Value)))
	v = append(v, kv.Value...)
	b = wire.AppendStringOpt(b, 1, kv.Key)
	return wire.AppendBytes(b, 2, v)
}

// str returns the index of s in the string table, adding it.
func (e *encoder) str(s string) int32 {
	i, ok := e.strings[s]
	if !ok {
		i = int32(len(e.table))
		e.strings[s] = i
		e.table = append(e.table, s)
	}
	return i
}

func (e *encoder) valueType(vt *profile.ValueType) []byte {
	var b []byte
	b = wire.AppendUintOpt(b, 1, uint64(e.str(vt.Type)))
	return wire.AppendUintOpt(b, 2, uint64(e.str(vt.Unit)))
}

func (e *encoder) function(f *profile.Function) int32 {
	if f == nil {
		return 0
	}
	if i, ok := e.functions[f]; ok {
		return i
	}
	b := e.scratch[:0]
	b = wire.AppendUintOpt(b, 1, uint64(e.str(f.Name)))
	b = wire.AppendUintOpt(b, 2, uint64(e.str(f.SystemName)))
	b = wire.AppendUintOpt(b, 3, uint64(e.str(f.Filename)))
	b = wire.AppendUintOpt(b, 4, uint64(f.StartLine))
	e.scratch = b
	i := e.funcTable.add(b)
	e.functions[f] = i
	return i
}

func (e *encoder) mapping(m *profile.Mapping) int32 {
	if m == nil {
		return 0
	}
	if i, ok := e.mappings[m]; ok {
		return i
	}
	var build int32
	if m.BuildID != "" {
		build = e.attr(attr{key: AttrBuildID, str: m.BuildID})
	}
	b := e.scratch[:0]
	b = wire.AppendUintOpt(b, 1, m.Start)
	b = wire.AppendUintOpt(b, 2, m.Limit)
	b = wire.AppendUintOpt(b, 3, m.Offset)
	b = wire.AppendUintOpt(b, 4, uint64(e.str(m.File)))
	if build != 0 {
		b = wire.AppendPacked(b, 5, []int32{build})
	}
	e.scratch = b
	i := e.mapTable.add(b)
	e.mappings[m] = i
	return i
}

func (e *encoder) location(l *profile.Location) int32 {
	if i, ok := e.locations[l]; ok {
		return i
	}
	mi := e.mapping(l.Mapping)
	var lines []byte
	for _, ln := range l.Line {
		var b []byte
		b = wire.AppendUintOpt(b, 1, uint64(e.function(ln.Function)))
		b = wire.AppendUintOpt(b, 2, uint64(ln.Line))
		b = wire.AppendUintOpt(b, 3, uint64(ln.Column))
		lines = wire.AppendBytes(lines, 3, b)
	}
	b := e.scratch[:0]
	b = wire.AppendUintOpt(b, 1, uint64(mi))
	b = wire.AppendUintOpt(b, 2, l.Address)
	b = append(b, lines...)
	e.scratch = b
	i := e.locTable.add(b)
	e.locations[l] = i
	return i
}

// stackSlice identifies a location slice: its first element's address
// and its length. Two samples with the same identity have the same stack
// (the profile is not modified while it is encoded).
type stackSlice struct {
	first **profile.Location
	n     int
}

// sampleStack is stack with a cache by slice identity, which saves a map
// lookup per location for every sample after the first of a stack.
func (e *encoder) sampleStack(locs []*profile.Location) int32 {
	if len(locs) == 0 {
		return e.stack(locs)
	}
	k := stackSlice{&locs[0], len(locs)}
	if i, ok := e.stackOf[k]; ok {
		return i
	}
	i := e.stack(locs)
	e.stackOf[k] = i
	return i
}

// stack returns the index of the stack of locs (leaf first, as in pprof
// and OTLP).
func (e *encoder) stack(locs []*profile.Location) int32 {
	e.idx = e.idx[:0]
	for _, l := range locs {
		e.idx = append(e.idx, e.location(l))
	}
	key := e.scratch[:0]
	for _, x := range e.idx {
		key = binary.AppendUvarint(key, uint64(x))
	}
	e.scratch = key
	if i, ok := e.stacks[string(key)]; ok {
		return i
	}
	i := e.stackTable.add(wire.AppendPacked(nil, 1, e.idx))
	e.stacks[string(key)] = i
	return i
}

// attr returns the index of a in the attribute table, adding it.
func (e *encoder) attr(a attr) int32 {
	if i, ok := e.attrs[a]; ok {
		return i
	}
	var v []byte
	if a.isNum {
		v = wire.AppendTag(v, 3, wire.Varint) // AnyValue.int_value, even when 0
		v = binary.AppendUvarint(v, uint64(a.num))
	} else {
		v = wire.AppendTag(v, 1, wire.Len)
		v = binary.AppendUvarint(v, uint64(len(a.str)))
		v = append(v, a.str...)
	}
	i := e.addAttr(a.key, a.unit, v)
	e.attrs[a] = i
	return i
}

// arrayAttr adds an attribute whose value is an array of integers.
func (e *encoder) arrayAttr(key, unit string, xs []int64) int32 {
	var arr []byte
	for _, x := range xs {
		var v []byte
		v = wire.AppendTag(v, 3, wire.Varint)
		v = binary.AppendUvarint(v, uint64(x))
		arr = wire.AppendBytes(arr, 1, v)
	}
	return e.addAttr(key, unit, wire.AppendBytes(nil, 5, arr))
}

// addAttr adds a KeyValueAndUnit whose AnyValue is value to the attribute
// table.
func (e *encoder) addAttr(key, unit string, value []byte) int32 {
	var b []byte
	b = wire.AppendUintOpt(b, 1, uint64(e.str(key)))
	b = wire.AppendBytes(b, 2, value)
	b = wire.AppendUintOpt(b, 3, uint64(e.str(unit)))
	return e.attrTable.add(b)
}

// table is one table of the dictionary, encoded as it grows.
type table struct {
	buf   []byte
	n     int32 // entries
	field int   // the dictionary's field number of the table
}

// add appends an encoded entry and returns its index.
func (t *table) add(msg []byte) int32 {
	t.buf = wire.AppendBytes(t.buf, t.field, msg)
	t.n++
	return t.n - 1
}

// sampleLabels returns the attribute indices of s's labels, string labels
// sorted by key, then numeric ones sorted by key, each value in order, and
// the index of its link (see the package doc), whose labels are left out
// of the attributes. Samples that share their label maps (the profile
// builders share them between samples of one bucket key) share the result.
func (e *encoder) sampleLabels(s *profile.Sample) sampleLabels {
	k := labelMapsKey{mapPointer(s.Label), mapPointer(s.NumLabel), mapPointer(s.NumUnit)}
	if k != (labelMapsKey{}) {
		if sl, ok := e.labels[k]; ok {
			return sl
		}
	}
	var idx []int32
	l, linked := spanLink(s.Label)
	var li int32
	if linked {
		li = e.link(l)
	}
	e.keys = e.keys[:0]
	for key := range s.Label {
		if linked && (key == LabelSpanID || key == LabelTraceID && l.trace != [16]byte{}) {
			continue
		}
		e.keys = append(e.keys, key)
	}
	slices.Sort(e.keys)
	for _, key := range e.keys {
		for _, v := range s.Label[key] {
			idx = append(idx, e.attr(attr{key: key, str: v}))
		}
	}
	e.keys = e.keys[:0]
	for key := range s.NumLabel {
		e.keys = append(e.keys, key)
	}
	slices.Sort(e.keys)
	for _, key := range e.keys {
		units := s.NumUnit[key]
		asString := e.numAsString != nil && e.numAsString(s, key)
		for i, v := range s.NumLabel[key] {
			var unit string
			if i < len(units) {
				unit = units[i]
			}
			a := attr{key: key, num: v, isNum: true, unit: unit}
			if asString {
				a = attr{key: key, str: strconv.FormatInt(v, 10), unit: unit}
			}
			idx = append(idx, e.attr(a))
		}
	}
	sl := sampleLabels{idx, li}
	if k != (labelMapsKey{}) {
		e.labels[k] = sl
	}
	return sl
}

// spanLink reads the link of a sample's string labels: ok when span_id
// holds one span ID; the trace ID is set when trace_id holds one.
func spanLink(labels map[string][]string) (l link, ok bool) {
	span := labels[LabelSpanID]
	if len(span) != 1 || !hexID(l.span[:], span[0]) {
		return link{}, false
	}
	if trace := labels[LabelTraceID]; len(trace) == 1 && !hexID(l.trace[:], trace[0]) {
		l.trace = [16]byte{}
	}
	return l, true
}

// hexID decodes s, 2*len(dst) lowercase hex digits not all zero (an
// OpenTelemetry trace or span ID as its String method writes it), into dst.
func hexID(dst []byte, s string) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	var or byte
	for i := range dst {
		hi, ok1 := lowerHex(s[2*i])
		lo, ok2 := lowerHex(s[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[i] = hi<<4 | lo
		or |= dst[i]
	}
	return or != 0
}

func lowerHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// link returns the index of l in the link table, adding it.
func (e *encoder) link(l link) int32 {
	if i, ok := e.links[l]; ok {
		return i
	}
	var b []byte
	if l.trace != [16]byte{} {
		b = wire.AppendBytes(b, 1, l.trace[:])
	}
	b = wire.AppendBytes(b, 2, l.span[:])
	i := e.linkTable.add(b)
	e.links[l] = i
	return i
}

func mapPointer[M any](m M) uintptr {
	v := reflect.ValueOf(m)
	if v.IsNil() {
		return 0
	}
	return uintptr(v.UnsafePointer())
}

// profileAttrs returns the Profile attributes that carry p's comments and
// its other pprof fields.
func (e *encoder) profileAttrs(p *profile.Profile) []int32 {
	var idx []int32
	for _, c := range p.Comments {
		if w, ok := strings.CutPrefix(c, pprofmt.WindowCommentPrefix); ok {
			idx = append(idx, e.attr(attr{key: AttrWindow, str: w}))
			continue
		}
		if ms, ok := parseMeans(c, pprofmt.MeansCommentPrefix); ok {
			idx = append(idx, e.arrayAttr(AttrMeans, "bytes", ms))
			continue
		}
		if ms, ok := parseMeans(c, pprofmt.InUseMeansCommentPrefix); ok {
			idx = append(idx, e.arrayAttr(AttrInUseMeans, "bytes", ms))
			continue
		}
		idx = append(idx, e.attr(attr{key: AttrComment, str: c}))
	}
	if p.DefaultSampleType != "" {
		idx = append(idx, e.attr(attr{key: AttrDefaultSampleType, str: p.DefaultSampleType}))
	}
	if p.DropFrames != "" {
		idx = append(idx, e.attr(attr{key: AttrDropFrames, str: p.DropFrames}))
	}
	if p.KeepFrames != "" {
		idx = append(idx, e.attr(attr{key: AttrKeepFrames, str: p.KeepFrames}))
	}
	if p.DocURL != "" {
		idx = append(idx, e.attr(attr{key: AttrDocURL, str: p.DocURL}))
	}
	return idx
}

// parseMeans reads a means comment; one that does not read back exactly
// (a malformed list) is not taken, so it crosses as a plain comment.
func parseMeans(c, prefix string) ([]int64, bool) {
	list, ok := strings.CutPrefix(c, prefix)
	if !ok || list == "" {
		return nil, false
	}
	var ms []int64
	for f := range strings.SplitSeq(list, ",") {
		m, err := strconv.ParseInt(f, 10, 64)
		if err != nil || strconv.FormatInt(m, 10) != f {
			return nil, false
		}
		ms = append(ms, m)
	}
	return ms, true
}
