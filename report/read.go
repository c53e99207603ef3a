package report

import (
	"io"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/pprofread"
)

// ErrTooLarge is returned, wrapped, by [Parse] for data larger than its
// size bound, before or after decompression, and for a profile that would
// take more memory to decode than its memory bound.
var ErrTooLarge = pprofmt.ErrTooLarge

// ParseOptions bound what [Parse] reads. The zero value takes the
// defaults, which admit Go heap profiles of about 300,000 samples with
// 20-frame stacks and arenaprof profiles of about 145,000 buckets (stack,
// type, size and labels).
type ParseOptions struct {
	// MaxBytes bounds the profile's data, as read and after
	// decompression; 0 or less means 1 GiB.
	MaxBytes int64
	// MaxMemory bounds the memory reading takes: the decompressed data
	// (counted four times: the buffer that holds it, the one it grew from
	// and the garbage of earlier growth, which the runtime may not reuse
	// for the next, larger buffer) plus the bytes that decoding it
	// allocates, as estimated from a scan of the data before anything is
	// decoded; 0 or less means 512 MiB. Refusing
	// a profile costs at most about half the bound, for the data read
	// before the refusal (measured: 265 MiB of RSS in all for the worst
	// case, data that decodes to nothing).
	MaxMemory int64
}

// Parse reads a pprof profile (gzip-compressed or not) from r within the
// bounds of o. After refusing a profile that may be genuine, it reads on,
// keeping none of the data, to measure what the whole needs (see
// [pprofmt.MemoryLimitError] and [pprofmt.SizeLimitError]). It reads in chunks and scans the records of the
// decompressed data as they arrive, counting what each will cost decoded,
// and refuses the profile (an error wrapping [ErrTooLarge]) as soon as the
// data or that cost passes a bound: so a small hostile file (a gzip of
// zeros, or a few kilobytes of empty samples that decode to gigabytes)
// costs at most about MaxMemory, whatever MaxBytes is. A panic of the
// protobuf decoder on hostile input becomes an ordinary error.
func Parse(r io.Reader, o ParseOptions) (*profile.Profile, error) {
	p, _, err := pprofread.Read(r, pprofread.Options(o))
	return p, err
}
