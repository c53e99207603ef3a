package pprofmt

import (
	"errors"
	"fmt"
)

// The bounds of report.Parse, shared with the command and the fleet
// reader, which read profiles through it.

// DefaultMaxBytes is the size bound report.Parse applies when given none: 1 GiB
// of profile data, as read and after decompression.
const DefaultMaxBytes = 1 << 30

// DefaultMaxMemory is the memory bound report.Parse applies when given none:
// 512 MiB for the decompressed data and its decoded form. It admits Go heap
// profiles of about 300,000 samples with 20-frame stacks and arenaprof
// profiles of about 145,000 buckets (stack, type, size and labels); larger
// profiles need a larger bound. Refusing a profile costs at most about
// half the bound, for the data read before the refusal (measured: 265 MiB
// of RSS in all for the worst case, data that decodes to nothing).
const DefaultMaxMemory = 512 << 20

// ErrTooLarge is returned, wrapped, by report.Parse for data
// larger than their size bound, before or after decompression; a profile
// that would take more memory to decode than their memory bound gets
// ErrMemoryLimit, which matches ErrTooLarge too.
var ErrTooLarge = errors.New("profile larger than the size limit")

// ErrMemoryLimit is returned, wrapped, by report.Parse for a
// profile whose decoded form would take more memory than their memory
// bound. It matches ErrTooLarge too (errors.Is), so that a caller that
// checks for ErrTooLarge alone still sees every refusal.
var ErrMemoryLimit error = memoryLimitError{}

// memoryLimitError is ErrMemoryLimit, which is also ErrTooLarge.
type memoryLimitError struct{}

func (memoryLimitError) Error() string { return "profile needs more memory than the memory limit" }

// Is makes errors.Is(ErrMemoryLimit, ErrTooLarge) true.
func (memoryLimitError) Is(target error) bool { return target == ErrTooLarge }

// MemoryLimitError is the error, wrapped, of report.Parse's refusal at its
// memory bound, with what it knew when it refused: it matches
// ErrMemoryLimit and ErrTooLarge (errors.Is).
type MemoryLimitError struct {
	Limit int64 // the memory bound, in bytes
	// Need is the memory reading the whole profile would take, as the
	// bound counts it, when Exact; otherwise a lower bound of it (what the
	// data read commits to).
	Need int64
	// Exact says that Need was measured over the whole data: the reader
	// went on scanning the data past the refusal, keeping none of it.
	Exact bool
	// Size is the whole data's size, decompressed, when Exact; otherwise
	// a lower bound of it. Above the size bound, that has to be raised too.
	Size int64
	// NotProfile says that the data read is no profile at all: it is not
	// a protobuf message and starts like no legacy profile the decoder
	// falls back to (no text header, no binary CPU header).
	NotProfile bool
}

func (e *MemoryLimitError) Error() string {
	msg := fmt.Sprintf("%v of %d bytes (about %d bytes or more to read and decode)", ErrMemoryLimit, e.Limit, e.Need)
	if e.NotProfile {
		msg += "; the data is not a profile (neither a protobuf message nor a legacy profile)"
	}
	return msg
}

// Is makes errors.Is(err, ErrMemoryLimit) and errors.Is(err, ErrTooLarge)
// true.
func (e *MemoryLimitError) Is(target error) bool {
	return target == ErrMemoryLimit || target == ErrTooLarge
}

// SizeLimitError is the error, wrapped, of report.Parse's refusal at its
// size bound: it matches ErrTooLarge (errors.Is).
type SizeLimitError struct {
	Limit int64 // the size bound, in bytes
	// Compressed says that the data as read (compressed) passed the
	// bound; otherwise its decompressed form did.
	Compressed bool
	// Size is the whole data's decompressed size when Exact; otherwise a
	// lower bound of it (the reader stopped measuring).
	Size  int64
	Exact bool
	// NotProfile says that the data read is no profile at all (see
	// MemoryLimitError.NotProfile).
	NotProfile bool
}

func (e *SizeLimitError) Error() string {
	what := "decompressed"
	if e.Compressed {
		what = "compressed"
	}
	msg := fmt.Sprintf("%v of %d bytes (%s; the data is %d bytes decompressed", ErrTooLarge, e.Limit, what, e.Size)
	if !e.Exact {
		msg = fmt.Sprintf("%v of %d bytes (%s; the data is more than %d bytes decompressed", ErrTooLarge, e.Limit, what, e.Size)
	}
	msg += ")"
	if e.NotProfile {
		msg += "; the data is not a profile (neither a protobuf message nor a legacy profile)"
	}
	return msg
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *SizeLimitError) Is(target error) bool { return target == ErrTooLarge }
