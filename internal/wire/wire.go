// Package wire holds the protocol buffer wire encoding that arenaprof's
// hand-written encoders share: the pprof profile writer
// (internal/pprofenc), the OTLP profiles writer (internal/otlp) and the
// Pyroscope query client (cmd/arenaprof/internal/pyroread). It is the few primitives
// those messages need, written to be inlined into the encoders' loops.
//
// Fields: a tag is the field number shifted left by 3 with the wire type in
// the low bits. The "Opt" functions leave a zero value out, as proto3 (and
// google/pprof's encoder) do.
package wire

import "encoding/binary"

// Wire types.
const (
	Varint  = 0 // int32, int64, uint32, uint64, bool, enum
	Fixed64 = 1 // fixed64, sfixed64, double
	Len     = 2 // string, bytes, embedded messages, packed repeated fields
)

// AppendVarint appends x as a varint.
func AppendVarint(b []byte, x uint64) []byte {
	for x >= 0x80 {
		b = append(b, byte(x)|0x80)
		x >>= 7
	}
	return append(b, byte(x))
}

// VarintSize is the length of x as a varint.
func VarintSize(x uint64) int {
	n := 1
	for x >= 0x80 {
		n++
		x >>= 7
	}
	return n
}

// AppendTag appends the key of field with wire type wt.
func AppendTag(b []byte, field, wt int) []byte {
	return AppendVarint(b, uint64(field)<<3|uint64(wt))
}

// AppendUint appends a varint field, even when x is 0. Negative int32 and
// int64 values go through uint64(int64(x)), as protobuf encodes them.
func AppendUint(b []byte, field int, x uint64) []byte {
	return AppendVarint(AppendTag(b, field, Varint), x)
}

// AppendUintOpt appends a varint field, nothing if x is 0.
func AppendUintOpt(b []byte, field int, x uint64) []byte {
	if x == 0 {
		return b
	}
	return AppendUint(b, field, x)
}

// UintOptSize is the length of what AppendUintOpt appends.
func UintOptSize(field int, x uint64) int {
	if x == 0 {
		return 0
	}
	return VarintSize(uint64(field)<<3) + VarintSize(x)
}

// AppendFixed64Opt appends a fixed64 field, nothing if x is 0.
func AppendFixed64Opt(b []byte, field int, x uint64) []byte {
	if x == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint64(AppendTag(b, field, Fixed64), x)
}

// AppendLenHeader appends the key and length of a length-delimited field of
// n bytes, whose bytes the caller appends next.
func AppendLenHeader(b []byte, field, n int) []byte {
	return AppendVarint(AppendTag(b, field, Len), uint64(n))
}

// AppendBytes appends a length-delimited field (bytes or an encoded
// message), even an empty one: an empty message still counts as an entry
// of a repeated field.
func AppendBytes(b []byte, field int, v []byte) []byte {
	return append(AppendLenHeader(b, field, len(v)), v...)
}

// AppendString appends a string field, even an empty one.
func AppendString(b []byte, field int, s string) []byte {
	return append(AppendLenHeader(b, field, len(s)), s...)
}

// AppendStringOpt appends a string field, nothing if s is empty.
func AppendStringOpt(b []byte, field int, s string) []byte {
	if s == "" {
		return b
	}
	return AppendString(b, field, s)
}

// AppendPacked appends a packed repeated varint field, nothing if xs is
// empty.
func AppendPacked[T ~int32 | ~int64 | ~uint64](b []byte, field int, xs []T) []byte {
	if len(xs) == 0 {
		return b
	}
	n := 0
	for _, x := range xs {
		n += VarintSize(uint64(x))
	}
	b = AppendLenHeader(b, field, n)
	for _, x := range xs {
		b = AppendVarint(b, uint64(x))
	}
	return b
}

// ReadVarint decodes a varint from the start of b and returns it and its
// length: 0 if b holds no complete varint of at most 10 bytes.
func ReadVarint(b []byte) (uint64, int) {
	x, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, 0
	}
	return x, n
}
