package otlp

import "encoding/binary"

// Protocol buffer wire encoding: the few primitives the messages need.
// Zero-valued scalar fields are left out, as proto3 does.

const (
	wireVarint = 0
	wireI64    = 1
	wireLen    = 2
)

func appendTag(b []byte, field, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire))
}

// appendUint appends a varint field, nothing if x is 0. Negative int32 and
// int64 values go through uint64(int64(x)), as proto3 encodes them.
func appendUint(b []byte, field int, x uint64) []byte {
	if x == 0 {
		return b
	}
	return binary.AppendUvarint(appendTag(b, field, wireVarint), x)
}

func appendFixed64(b []byte, field int, x uint64) []byte {
	if x == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint64(appendTag(b, field, wireI64), x)
}

// appendBytes appends a length-delimited field (bytes or an encoded
// message), even an empty one: an empty message still counts as an entry
// of a repeated field.
func appendBytes(b []byte, field int, v []byte) []byte {
	b = appendTag(b, field, wireLen)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendString(b []byte, field int, s string) []byte {
	if s == "" {
		return b
	}
	b = appendTag(b, field, wireLen)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendPacked appends a packed repeated varint field, nothing if xs is
// empty.
func appendPacked[T int32 | int64](b []byte, field int, xs []T) []byte {
	if len(xs) == 0 {
		return b
	}
	n := 0
	for _, x := range xs {
		n += varintSize(uint64(int64(x)))
	}
	b = appendTag(b, field, wireLen)
	b = binary.AppendUvarint(b, uint64(n))
	for _, x := range xs {
		b = binary.AppendUvarint(b, uint64(int64(x)))
	}
	return b
}

func varintSize(x uint64) int {
	n := 1
	for x >= 0x80 {
		n++
		x >>= 7
	}
	return n
}
