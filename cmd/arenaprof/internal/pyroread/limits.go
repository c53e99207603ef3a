package pyroread

import (
	"fmt"
	"math"
	"strconv"
	"sync"
)

// The flags a [LimitError] names, as the arenaprof CLI spells them.
const (
	FlagMaxMemory   = "-max-memory"
	FlagMaxBytes    = "-max-bytes"
	FlagMaxRequests = "-max-requests"
)

// LimitError is a read refused at one of its bounds, before passing it: it
// says what was refused, names the bound by its CLI flag and suggests a
// value of that flag above what the read needs, as far as the read knew
// when it stopped.
type LimitError struct {
	// Flag is FlagMaxMemory, FlagMaxBytes or FlagMaxRequests.
	Flag string
	// Limit is the flag's value: bytes, or requests.
	Limit int64
	// Suggest is a value of the flag that would do.
	Suggest int64
	// What says what was refused and why.
	What string
}

// Error reads "WHAT; raise FLAG (e.g. FLAG VALUE)".
func (e *LimitError) Error() string {
	return fmt.Sprintf("%s; raise %s (e.g. %s %s)", e.What, e.Flag, e.Flag, e.show(e.Suggest))
}

// show writes n in the flag's unit.
func (e *LimitError) show(n int64) string {
	if e.Flag == FlagMaxRequests {
		return strconv.FormatInt(n, 10)
	}
	return showBytes(n)
}

// showBytes writes n as the CLI's byte-size flags read it: in GiB, MiB or
// KiB when it is a whole number of them, else in bytes.
func showBytes(n int64) string {
	for _, u := range []struct {
		shift  uint
		suffix string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// powerAbove is the smallest power of two of at least 1 MiB above need and
// at least twice limit: the value a refusal at limit suggests.
func powerAbove(limit, need float64) int64 {
	s := float64(1 << 20)
	for (s < 2*limit || s <= need) && s <= math.MaxInt64/2 {
		s *= 2
	}
	if s > math.MaxInt64/2 {
		return math.MaxInt64
	}
	return int64(s)
}

// How one Read shares MaxMemory. The Go collector lets the heap grow to
// twice what is live (GOGC=100) before it collects: half of MaxMemory is
// for what the read keeps live, the other half that headroom. Of the live
// half, one half holds what the read keeps until its end (the sums of
// every series combination, the stacks kept), bounded by retainedShare;
// the other the answers in flight, inFlightShare each at -parallel P.
// A JSON answer is decoded one series at a time: it may take up to
// answerShare (a quarter of its query's share) on the wire, the series
// decoded from it the rest; a profile answer takes as much on the wire
// (also within MaxBytes) and report.Parse decodes it within the other
// three quarters.
const (
	retainedDiv = 4  // retainedShare = MaxMemory / retainedDiv
	inFlightDiv = 4  // inFlightShare = MaxMemory / inFlightDiv / P
	answerDiv   = 16 // answerShare = MaxMemory / answerDiv / P
)

// retainedShare is the memory a Read keeps until its end.
func (c *Client) retainedShare() int64 { return c.limits.MaxMemory / retainedDiv }

// answerShare bounds one answer's bytes on the wire.
func (c *Client) answerShare() int64 {
	return max(c.limits.MaxMemory/answerDiv/int64(c.parallel), 1)
}

// decodeShare bounds the memory report.Parse takes to decode one profile
// answer.
func (c *Client) decodeShare() int64 {
	return max(c.limits.MaxMemory/inFlightDiv/int64(c.parallel)-c.answerShare(), 1)
}

// memoryForAnswer is the -max-memory under which an answer of size bytes
// on the wire fits answerShare.
func (c *Client) memoryForAnswer(size int64) int64 {
	return powerAbove(float64(c.limits.MaxMemory), float64(size)*answerDiv*float64(c.parallel))
}

// retained counts what one Read keeps until its end against
// retainedShare, from every goroutine of the read.
type retained struct {
	mu    sync.Mutex
	limit int64
	used  int64
}

// add counts n bytes more; it reports whether they fit.
func (r *retained) add(n int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.used+n > r.limit {
		return false
	}
	r.used += n
	return true
}

// retainedError is the refusal of a read whose kept data would pass
// retainedShare, after done of its total queries were added up whole: the
// suggestion scales what was kept by the queries left, as if each brought
// as much new data as the average so far. The agent's uploads repeat
// their combinations across alloc types and names, so that it is mostly
// well above what the read needs; a server whose every answer brings
// combinations of its own needs about that.
func (c *Client) retainedError(what string, used int64, done, total int) error {
	need := float64(used) * float64(total) / float64(max(done, 1))
	return &LimitError{
		Flag:    FlagMaxMemory,
		Limit:   c.limits.MaxMemory,
		Suggest: powerAbove(float64(c.limits.MaxMemory), need*retainedDiv),
		What: fmt.Sprintf("%s: what the read keeps passed %s with %d of %d queries added up, a quarter of %s %s (half of it is left to the collector's headroom, a quarter to the answers in flight)",
			what, showBytes(c.retainedShare()), done, total, FlagMaxMemory, showBytes(c.limits.MaxMemory)),
	}
}
