package otlp

import (
	"errors"
	"fmt"
)

// PartialSuccess reads an ExportProfilesServiceResponse: the number of
// profiles the receiver rejected and its message (both zero when it
// accepted everything, as an empty response says). Unknown fields are
// skipped; a malformed response is an error.
func PartialSuccess(b []byte) (rejected int64, message string, err error) {
	ps, err := field(b, 1)
	if err != nil || ps == nil {
		return 0, "", err
	}
	err = walk(ps, func(num int, wire int, v uint64, data []byte) error {
		switch {
		case num == 1 && wire == wireVarint:
			rejected = int64(v)
		case num == 2 && wire == wireLen:
			message = string(data)
		}
		return nil
	})
	return rejected, message, err
}

// field returns the last length-delimited field num of message b, nil if
// there is none.
func field(b []byte, num int) ([]byte, error) {
	var out []byte
	err := walk(b, func(n, wire int, _ uint64, data []byte) error {
		if n == num {
			if wire != wireLen {
				return fmt.Errorf("field %d: wire type %d, want %d", n, wire, wireLen)
			}
			out = data
			if out == nil {
				out = []byte{}
			}
		}
		return nil
	})
	return out, err
}

var errTruncated = errors.New("truncated protobuf message")

// walk calls fn for each field of message b: its number, wire type and
// value (v for varint and fixed fields, data for length-delimited ones).
func walk(b []byte, fn func(num, wire int, v uint64, data []byte) error) error {
	for len(b) > 0 {
		key, n := readVarint(b)
		if n == 0 {
			return errTruncated
		}
		b = b[n:]
		num, wire := int(key>>3), int(key&7)
		if num <= 0 || key>>3 > 1<<29 {
			return fmt.Errorf("invalid field number %d", key>>3)
		}
		var v uint64
		var data []byte
		switch wire {
		case wireVarint:
			if v, n = readVarint(b); n == 0 {
				return errTruncated
			}
			b = b[n:]
		case wireI64:
			if len(b) < 8 {
				return errTruncated
			}
			for i := 7; i >= 0; i-- {
				v = v<<8 | uint64(b[i])
			}
			b = b[8:]
		case 5: // fixed32
			if len(b) < 4 {
				return errTruncated
			}
			v = uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24
			b = b[4:]
		case wireLen:
			l, n := readVarint(b)
			if n == 0 || l > uint64(len(b)-n) {
				return errTruncated
			}
			data, b = b[n:n+int(l)], b[n+int(l):]
		default:
			return fmt.Errorf("field %d: unsupported wire type %d", num, wire)
		}
		if err := fn(num, wire, v, data); err != nil {
			return err
		}
	}
	return nil
}

// readVarint decodes a varint from the start of b and returns it and its
// length, 0 if b holds no complete varint of at most 10 bytes.
func readVarint(b []byte) (uint64, int) {
	var x uint64
	for i := 0; i < len(b) && i < 10; i++ {
		x |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return x, i + 1
		}
	}
	return 0, 0
}
