package pprofread

import (
	"bytes"
	"encoding/binary"
)

// The decoder of github.com/google/pprof/profile turns each record of a
// profile into Go objects far larger than the record: an empty Sample is 2
// bytes on the wire and over 150 bytes decoded, a Sample with one label
// several hundred more (three maps). A size bound on the data therefore does
// not bound the memory decoding takes. memScan reads the top-level fields of
// uncompressed pprof data (profile.proto) without decoding them, counts what
// each record will become, and prices it with the costs below, so that Read
// can refuse a profile before decoding it.
//
// The costs are bytes allocated by profile.ParseData (decoding, linking and
// CheckValid) per record, including garbage such as the growth of appended
// slices; TestEstimateCovers measures them against the decoder.

// Per-record costs, in bytes allocated.
const (
	// Each top-level repeated message is appended to a slice of pointers,
	// which grows by 1.25x when large: with the slices left behind, about
	// 6.25 pointers allocated per element.
	costSlot = 64
	// A Sample: the struct (120 bytes, size class 128), its slot, and what
	// linking and checking it cost (measured: 201 bytes in all for an
	// empty sample).
	costSample = 160 + costSlot
	// Each location ID of a sample: locationIDX grown by appends (as
	// costSlot) and the sample's share of the []*Location buffer.
	costSampleLoc = costSlot + 8
	// Each value of a sample: Value grown by appends.
	costSampleValue = costSlot
	// A packed run of location IDs or values is decoded into a slice grown
	// once to its length: 8 bytes per value, and a size class rounding up
	// by at most 1/8, plus the slack of small classes.
	costPacked     = 32
	costPackedElem = 10
	// A sample with labels gets three maps (Label, NumLabel, NumUnit)
	// sized for its label count; costLabeled is their fixed part and
	// costLabel the part per label (label struct, map slots, value slices).
	costLabeled = 256
	costLabel   = 128 + 3*128 + 64
	// ID-indexed tables: a slot in the decode-time ID slice and in two maps
	// (postDecode's and CheckValid's).
	costIDTable = 8 + 2*64
	// A Location (64 bytes) and each of its lines (32 bytes: the copy, the
	// shared temporary slice's growth).
	costLocation = 64 + costSlot + costIDTable
	costLine     = 3 * 32
	// A Function (88 bytes, size class 96) and a Mapping (136, class 144).
	costFunction = 96 + costSlot + costIDTable
	costMapping  = 144 + costSlot + costIDTable
	// A string of the string table: its header in the grown table (16
	// bytes, grown as costSlot), and its bytes (rounded up to a size class,
	// at most 1/8 more, plus 8).
	costString = 2 * costSlot
	// A sample type: a ValueType and its slot.
	costValueType = 48 + costSlot
	// A comment: its index (grown) and its string header in Comments.
	costComment = 3 * costSlot
	// The fixed cost of any profile: the Profile struct, the decoder's
	// buffers, small maps.
	costProfile = 64 << 10
)

// legacyCostPerByte bounds the bytes the decoder's parsers of legacy
// formats allocate per byte of data that is neither a protobuf message nor
// text (the legacy binary CPU format, or data no parser reads);
// TestEstimateCovers measures them.
const legacyCostPerByte = 80

// The legacy text formats (Go's debug=1 heap text, as the Go compiler's
// -memprofile writes it, and the goroutine, contention and thread
// formats) are priced by what their parsers build: a sample and its
// values, labels and location slice for each line that holds more than
// blanks or a comment, a slot for each address (0x...) on such a line, and
// a copy of the data. Comment lines (#...), which runtime/pprof writes for
// every frame of every sample and which make up most of a real profile,
// cost their bytes only. TestEstimateCovers measures the costs; a real
// legacy heap profile of 100 MB is estimated within 2 times the bytes reading it
// allocates (TestLegacyEstimateReal).
const (
	legacyTextPerByte = 1
	legacyTextPerLine = 1024
	legacyTextPerAddr = 128
)

// memScan is the state of a scan of uncompressed pprof data that arrives
// in pieces: it reads each complete top-level record once and keeps the
// total cost of those read.
type memScan struct {
	pos    int   // offset of the first record not yet read
	need   int64 // length the data must reach for the record at pos to be complete; 0 if unknown
	cost   int64 // decoded cost of the records before pos
	broken bool  // the data is not a protobuf message from pos on
	// The lines of legacy text read so far (scanText): the offset of the
	// first line not yet read, and the lines and addresses counted.
	textPos          int
	textLines, addrs int64
}

// scan reads the complete top-level records of data from s.pos on. data
// must extend the data of earlier calls.
func (s *memScan) scan(data []byte) {
	for !s.broken && s.pos < len(data) {
		end, field, wire, payload, ok := nextField(data, s.pos)
		if !ok {
			// Incomplete (a varint or payload runs past the data) or
			// malformed: a varint longer than 10 bytes or a bad wire type
			// cannot become complete.
			if end < 0 {
				s.broken, s.need = true, 0
			} else {
				s.need = int64(end)
			}
			return
		}
		s.need = 0
		s.cost += recordCost(field, wire, payload)
		s.pos = end
	}
}

// estimate returns the bytes decoding data is expected to allocate, given
// that s has scanned it. Before the end of the data (final false), an
// incomplete last record is taken to be completed by what follows.
func (s *memScan) estimate(data []byte, final bool) int64 {
	est := s.cost + costProfile
	legacy := s.legacy(data, final)
	if legacy && looksText(data) {
		s.scanText(data, final)
		return est + legacyTextPerByte*int64(len(data)) + legacyTextPerLine*s.textLines + legacyTextPerAddr*s.addrs
	}
	// Data that looked like text while it was short, no longer.
	s.textPos, s.textLines, s.addrs = 0, 0, 0
	if legacy {
		est += legacyCostPerByte * int64(len(data))
	}
	return est
}

// scanText counts the lines of legacy text in data from s.textPos on that
// hold more than blanks or a comment, and the addresses (0x...) on them:
// the complete lines, and at the end of the data (final) the last one.
// data must extend the data of earlier calls.
func (s *memScan) scanText(data []byte, final bool) {
	for s.textPos < len(data) {
		end := bytes.IndexByte(data[s.textPos:], '\n')
		if end < 0 {
			if !final {
				return
			}
			end = len(data) - s.textPos
		}
		line := bytes.TrimLeft(data[s.textPos:s.textPos+end], " \t\r")
		s.textPos += end + 1
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		s.textLines++
		s.addrs += int64(bytes.Count(line, []byte("0x")))
	}
}

// legacy reports whether data, as far as s has scanned it, may be a legacy
// profile: not a protobuf message, or text. The decoder tries the legacy
// parsers on such data.
func (s *memScan) legacy(data []byte, final bool) bool {
	return s.broken || final && s.pos < len(data) || looksText(data)
}

// notProfile reports whether data, as far as s has scanned it, is no
// profile the decoder would read: not a protobuf message, and starting
// like none of the legacy formats it falls back to, whose text headers
// ("heap profile: ...", "--- contention ---", ...) all hold letters on the
// first line, and whose binary CPU format starts with the header words 0,
// 3, 0 or 1 (4 or 8 bytes each, either byte order).
func (s *memScan) notProfile(data []byte) bool {
	if !s.broken {
		return false
	}
	first := data[:min(len(data), 4096)]
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	for _, c := range first {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return !legacyCPUHeader(data)
}

// legacyCPUHeader reports whether data starts with the header of the
// legacy binary CPU profile: the words 0, 3, 0 (or 1 for Java) in 4- or
// 8-byte words of either byte order.
func legacyCPUHeader(data []byte) bool {
	for _, w := range []int{4, 8} {
		if len(data) < 3*w {
			continue
		}
		for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			word := func(i int) uint64 {
				if w == 4 {
					return uint64(order.Uint32(data[i*w:]))
				}
				return order.Uint64(data[i*w:])
			}
			if word(0) == 0 && word(1) == 3 && word(2) <= 1 {
				return true
			}
		}
	}
	return false
}

// looksText reports whether data starts like text: the legacy formats the
// decoder falls back to start with a text header. A protobuf profile starts
// with a field key and a length, bytes that are not printable text.
func looksText(data []byte) bool {
	n := min(len(data), 64)
	if n == 0 {
		return false
	}
	for _, c := range data[:n] {
		if c < 0x20 && c != '\n' && c != '\t' && c != '\r' || c > 0x7e {
			return false
		}
	}
	return true
}

// nextField reads the field that starts at data[pos:]. It returns the
// offset after it, its number, wire type and, for length-delimited fields,
// its payload. When the field is incomplete, ok is false and end is the
// length data must reach to hold it (or len(data)+1 when unknown); when it
// is malformed, end is -1.
func nextField(data []byte, pos int) (end int, field uint64, wire int, payload []byte, ok bool) {
	key, n := uvarint(data[pos:])
	if n == 0 {
		return len(data) + 1, 0, 0, nil, false
	}
	if n < 0 || key>>3 == 0 || key>>3 > 1<<29 {
		return -1, 0, 0, nil, false
	}
	field, wire = key>>3, int(key&7)
	p := pos + n
	switch wire {
	case 0:
		_, m := uvarint(data[p:])
		if m == 0 {
			return len(data) + 1, 0, 0, nil, false
		}
		if m < 0 {
			return -1, 0, 0, nil, false
		}
		return p + m, field, wire, nil, true
	case 1, 5:
		w := 8
		if wire == 5 {
			w = 4
		}
		if len(data)-p < w {
			return p + w, 0, 0, nil, false
		}
		return p + w, field, wire, nil, true
	case 2:
		l, m := uvarint(data[p:])
		if m == 0 {
			return len(data) + 1, 0, 0, nil, false
		}
		if m < 0 || l > 1<<62 {
			return -1, 0, 0, nil, false
		}
		p += m
		if uint64(len(data)-p) < l {
			if l > uint64(maxInt-p) {
				return -1, 0, 0, nil, false
			}
			return p + int(l), 0, 0, nil, false
		}
		return p + int(l), field, wire, data[p : p+int(l)], true
	}
	return -1, 0, 0, nil, false
}

const maxInt = int(^uint(0) >> 1)

// uvarint decodes a varint at the start of b: n > 0 is its length, n == 0
// means b ends inside it, n < 0 that it is longer than 10 bytes.
func uvarint(b []byte) (uint64, int) {
	var x uint64
	for i := 0; i < 10; i++ {
		if i == len(b) {
			return 0, 0
		}
		c := b[i]
		x |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return x, i + 1
		}
	}
	return 0, -1
}

// countVarints returns how many varints a packed field holds, counting a
// truncated last one.
func countVarints(b []byte) int64 {
	var n int64
	for _, c := range b {
		if c < 0x80 {
			n++
		}
	}
	if len(b) > 0 && b[len(b)-1] >= 0x80 {
		n++
	}
	return n
}

// recordCost prices one top-level record of profile.proto.
func recordCost(field uint64, wire int, payload []byte) int64 {
	switch field {
	case 1: // sample_type
		return costValueType
	case 2: // sample
		return sampleCost(payload)
	case 3: // mapping
		return costMapping
	case 4: // location
		return costLocation + costLine*countSubfields(payload, 4)
	case 5: // function
		return costFunction
	case 6: // string_table
		return costString + int64(len(payload)) + int64(len(payload))/8 + 8
	case 11: // period_type
		return costValueType
	case 13: // comment
		if wire == 2 {
			return costComment * countVarints(payload)
		}
		return costComment
	}
	return 0
}

// sampleCost prices a Sample record from its location IDs, values and
// labels.
func sampleCost(b []byte) int64 {
	cost := int64(costSample)
	var labels int64
	for pos := 0; pos < len(b); {
		end, field, wire, payload, ok := nextField(b, pos)
		if !ok {
			break // the decoder fails on it
		}
		switch {
		case field == 3:
			labels++
		case field > 2:
		case wire == 2:
			// Packed: the slice is grown once to the exact count.
			n := countVarints(payload)
			cost += costPacked + costPackedElem*n
			if field == 1 {
				cost += 8 * n // the []*Location buffer
			}
		case field == 1:
			cost += costSampleLoc
		default:
			cost += costSampleValue
		}
		pos = end
	}
	if labels > 0 {
		cost += costLabeled + costLabel*labels
	}
	return cost
}

// countSubfields counts the fields numbered field in message b.
func countSubfields(b []byte, field uint64) int64 {
	var n int64
	for pos := 0; pos < len(b); {
		end, f, _, _, ok := nextField(b, pos)
		if !ok {
			break
		}
		if f == field {
			n++
		}
		pos = end
	}
	return n
}
