package otlp

import (
	"errors"
	"fmt"

	"github.com/arenaprof/arenaprof/internal/wire"
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
	err = walk(ps, func(num, wt int, v uint64, data []byte) error {
		switch {
		case num == 1 && wt == wire.Varint:
			rejected = int64(v)
		case num == 2 && wt == wire.Len:
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
	err := walk(b, func(n, wt int, _ uint64, data []byte) error {
		if n == num {
			if wt != wire.Len {
				return fmt.Errorf("field %d: wire type %d, want %d", n, wt, wire.Len)
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
func walk(b []byte, fn func(num, wt int, v uint64, data []byte) error) error {
	for len(b) > 0 {
		key, n := wire.ReadVarint(b)
		if n == 0 {
			return errTruncated
		}
		b = b[n:]
		num, wt := int(key>>3), int(key&7)
		if num <= 0 || key>>3 > 1<<29 {
			return fmt.Errorf("invalid field number %d", key>>3)
		}
		var v uint64
		var data []byte
		switch wt {
		case wire.Varint:
			if v, n = wire.ReadVarint(b); n == 0 {
				return errTruncated
			}
			b = b[n:]
		case wire.Fixed64:
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
		case wire.Len:
			l, n := wire.ReadVarint(b)
			if n == 0 || l > uint64(len(b)-n) {
				return errTruncated
			}
			data, b = b[n:n+int(l)], b[n+int(l):]
		default:
			return fmt.Errorf("field %d: unsupported wire type %d", num, wt)
		}
		if err := fn(num, wt, v, data); err != nil {
			return err
		}
	}
	return nil
}
