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
// into a new buffer of a, after a read ahead of up to 512 bytes (into
// memory of a, taken once) has shown that the input goes on. Each growth
// is an allocation of a, sampled like any other (type []uint8, the leaf
// frame the caller of ReadAll). The buffers left behind by a copy stay in
// a until its Reset, as with [Append]: reading n bytes takes at most
// about 4n bytes of a.
//
// It panics if a was freed, or if r.Read returns a count outside [0, len(p)]
// for the p it was given.
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
	var probe []byte // see below; made once, when first needed
	for {
		if len(b) == cap(b) {
			// Double the capacity, up to most. Append's rule (1.25x for
			// large slices) would leave five times the input behind in
			// the arena after copies; doubling leaves at most twice the
			// final buffer.
			k := min(len(b), most-len(b))
			if t, ok := growInPlace(a, b, len(b)+k); ok {
				b = t[:len(b)]
			} else {
				// Growing copies b: read a little ahead first, so that
				// an input that filled b exactly (a power of two, say)
				// ends without a copy into a buffer twice its size.
				if probe == nil {
					probe = MakeSlice[byte](a, probeRead, probeRead)
				}
				n, err := read(r, probe[:min(probeRead, k)])
				if n > 0 {
					b = growBy(a, b, k, len(b)+k, "ReadAll")
					b = append(b, probe[:n]...) // fits: n <= k
				}
				if done, out, err := readDone(b, err, limit); done {
					return out, err
				}
				continue
			}
		}
		n, err := read(r, b[len(b):cap(b)])
		b = b[:len(b)+n]
		if done, out, err := readDone(b, err, limit); done {
			return out, err
		}
	}
}

// probeRead is the size of the read ahead ReadAll makes before a growth
// that copies.
const probeRead = 512

// read is r.Read(p), checked.
func read(r io.Reader, p []byte) (int, error) {
	n, err := r.Read(p)
	if n < 0 || n > len(p) {
		panic(fmt.Sprintf("arenaprof: arena.ReadAll: the reader returned %d for a buffer of %d bytes", n, len(p)))
	}
	return n, err
}

// readDone says whether ReadAll is done after a read left b and err, and
// with what.
func readDone(b []byte, err error, limit int) (bool, []byte, error) {
	switch {
	case len(b) > limit:
		return true, b[:limit], fmt.Errorf("%w (%d bytes)", ErrTooLarge, limit)
	case err == io.EOF:
		return true, b, nil
	case err != nil:
		return true, b, err
	}
	return false, b, nil
}
