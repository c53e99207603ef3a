package arena

import (
	"errors"
	"fmt"
	"io"
)

// ErrTooLarge is the error [ReadAll] returns, wrapped with the limit, when
// its input is longer than the limit.
var ErrTooLarge = errors.New("arenaprof: arena.ReadAll: input longer than the limit")

// firstRead is the capacity ReadAll starts with, as io.ReadAll does.
const firstRead = 512

// ReadAll reads r until EOF or an error into memory of a, like
// [io.ReadAll], and returns the bytes read; it reads at most limit bytes
// (and one more, to tell a longer input apart). A successful call returns
// a nil error, not io.EOF.
//
// If r holds more than limit bytes, ReadAll returns the first limit bytes
// and an error that wraps [ErrTooLarge]; r has then been read past them.
// If r returns another error, ReadAll returns the bytes read before it and
// that error. A negative limit is an error, and reads nothing.
//
// The buffer starts at 512 bytes and doubles when full, never past
// limit+1 bytes: in place while it is the last thing a handed out and a's
// chunk has room (r's Read allocating in a stops that), else by copying
// into a new buffer of a. Each growth is an allocation of a, sampled like
// any other (type []uint8, the leaf frame the caller of ReadAll). The
// buffers left behind by a copy stay in a until its Reset, as with
// [Append]: reading n bytes takes at most about 4n bytes of a.
//
// It panics if a was freed, or if r returns a count outside [0, len(p)].
func ReadAll(a *Arena, r io.Reader, limit int) ([]byte, error) {
	if limit < 0 {
		return nil, fmt.Errorf("arenaprof: arena.ReadAll: negative limit %d", limit)
	}
	// One byte past the limit tells a longer input apart (a limit beyond
	// what one slice can hold is no limit).
	most := limit
	if most < maxAlloc {
		most++
	}
	b := MakeSlice[byte](a, 0, min(firstRead, most))
	for {
		n, err := r.Read(b[len(b):cap(b)])
		if n < 0 || n > cap(b)-len(b) {
			panic(fmt.Sprintf("arenaprof: arena.ReadAll: the reader returned %d for a buffer of %d bytes", n, cap(b)-len(b)))
		}
		b = b[:len(b)+n]
		if len(b) > limit {
			return b[:limit], fmt.Errorf("%w (%d bytes)", ErrTooLarge, limit)
		}
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			// Double the capacity, up to most. Append's rule (1.25x for
			// large slices) would leave five times the input behind in
			// the arena after copies; doubling leaves at most twice the
			// final buffer.
			n := min(len(b), most-len(b))
			b = growBy(a, b, n, len(b)+n, "ReadAll")
		}
	}
}
