package pprofread

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// Options bound what [Read] reads: report.ParseOptions, whose
// documentation gives the meaning of each bound and its default. A bound
// of 0 or less takes the default.
type Options struct {
	// MaxBytes bounds the profile's data, as read and after
	// decompression; 0 or less means pprofmt.DefaultMaxBytes.
	MaxBytes int64
	// MaxMemory bounds the memory reading takes (the decompressed data
	// counted four times plus what decoding it allocates, as estimated
	// from a scan of the data); 0 or less means pprofmt.DefaultMaxMemory.
	MaxMemory int64
}

// readChunk is the size of the buffer that measuring reads through.
const readChunk = 64 << 10

// firstChunk is the size of the first read buffer; it doubles as data
// arrives and is found within the bounds. It is small: the profiles a
// directory of Config.Dir holds by the thousand are a few hundred bytes
// to a few KiB each, and a larger first buffer for each was most of what
// reading them allocated.
const firstChunk = 4 << 10

// Read reads a pprof profile (gzip-compressed or not) from r within the
// bounds of o, as report.Parse does (its documentation says how), and
// returns also the memory the decoded profile was estimated to take (the
// decoder's allocations as priced from a scan of the data, without the
// buffers of the data, which are garbage once it is decoded): what a
// caller that keeps several profiles, or merges them, counts against a
// bound of its own.
//
// After refusing a profile that may be genuine, it reads on, keeping none
// of the data, to measure what the whole needs (see
// [pprofmt.MemoryLimitError] and [pprofmt.SizeLimitError]). It reads in
// chunks and scans the records of the decompressed data as they arrive,
// counting what each will cost decoded, and refuses the profile (an error
// wrapping [pprofmt.ErrTooLarge]) as soon as the data or that cost passes
// a bound. A panic of the protobuf decoder on hostile input becomes an
// ordinary error. Its errors start "report: ": they are report.Parse's.
func Read(r io.Reader, o Options) (*profile.Profile, int64, error) {
	maxBytes, maxMem := o.MaxBytes, o.MaxMemory
	if maxBytes <= 0 {
		maxBytes = pprofmt.DefaultMaxBytes
	}
	if maxMem <= 0 {
		maxMem = pprofmt.DefaultMaxMemory
	}
	maxBytes, maxMem = min(maxBytes, math.MaxInt64/4), min(maxMem, math.MaxInt64/4) // no overflow below
	lr := &io.LimitedReader{R: r, N: maxBytes + 1}
	br := bufio.NewReader(lr)
	var src io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, 0, fmt.Errorf("report: bad gzip data: %w", err)
		}
		defer zr.Close()
		src = zr
	}
	var sc memScan
	var data []byte
	// measure reads the rest of the data, keeping none of it, for what
	// the whole needs (measureRest), and lets go of data.
	measure := func() (size, need int64, exact bool) {
		d := data
		data = nil
		more := max(measureFactor*maxBytes, measureMin)
		lr.N = min(lr.N, math.MaxInt64-more) + more
		return measureRest(src, d, sc, more, maxMem/4)
	}
	tooLarge := func() error {
		e := &pprofmt.SizeLimitError{Limit: maxBytes, Compressed: lr.N == 0, NotProfile: sc.notProfile(data), Size: int64(len(data))}
		if !e.NotProfile { // no bound reads data that is no profile
			e.Size, _, e.Exact = measure()
		}
		return fmt.Errorf("report: %w", e)
	}
	overMemory := func(need int64) error {
		e := &pprofmt.MemoryLimitError{Limit: maxMem, Need: need, NotProfile: sc.notProfile(data), Size: int64(len(data))}
		if !e.NotProfile {
			size, all, exact := measure()
			e.Need, e.Size, e.Exact = max(all, need), size, exact
		}
		return fmt.Errorf("report: %w", e)
	}
	// need is the memory the data read so far commits to: four times the
	// data (see MaxMemory) and its decoded cost.
	need := func(data []byte, final bool) int64 {
		n := 4*int64(len(data)) + sc.estimate(data, final)
		if pending := 4*min(sc.need, math.MaxInt64/8) + sc.cost; pending > n {
			n = pending // a record declared longer than what has arrived
		}
		return n
	}
	// The buffer never grows past what the bounds admit: maxBytes+1 to
	// detect data past maxBytes, maxMem/4 for the data counted four times.
	limit := min(maxBytes+1, maxMem/4+1)
	data = make([]byte, 0, min(int64(firstChunk), limit))
	for {
		if len(data) == cap(data) {
			if int64(len(data)) >= limit {
				if lr.N == 0 || int64(len(data)) > maxBytes {
					return nil, 0, tooLarge()
				}
				return nil, 0, overMemory(need(data, false) + 1)
			}
			grown := make([]byte, len(data), min(2*int64(cap(data)), limit))
			copy(grown, data)
			data = grown
		}
		n, err := src.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if lr.N == 0 {
			return nil, 0, tooLarge()
		}
		if int64(len(data)) > maxBytes {
			return nil, 0, tooLarge()
		}
		sc.scan(data)
		if nd := need(data, err == io.EOF); nd > maxMem {
			return nil, 0, overMemory(nd)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("report: reading profile: %w", err)
		}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, 0, errors.New("report: empty data, not a profile")
	}
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		// The decoder would decompress it again, with no bound.
		return nil, 0, errors.New("report: gzip data inside gzip data, not a profile")
	}
	p, err := parseData(data, &sc)
	if err != nil {
		return nil, 0, err
	}
	return p, sc.estimate(data, true), nil
}

// parseData parses uncompressed pprof data, turning a decoder panic into an
// error. Data the scan s found to be a protobuf message is decoded as one
// only: the decoder's fallback to the legacy text formats, which allocate
// far more per byte, is kept for data the scan priced as legacy, so that a
// protobuf message whose strings hide a legacy text profile cannot pass for
// cheap.
func parseData(data []byte, s *memScan) (p *profile.Profile, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("report: malformed profile data (%v)", r)
		}
	}()
	if s.legacy(data, true) {
		p, err = profile.ParseData(data)
	} else if p, err = profile.ParseUncompressed(data); err == nil {
		if err = p.CheckValid(); err != nil {
			err = fmt.Errorf("malformed profile: %w", err)
		}
	} else {
		err = fmt.Errorf("parsing profile: %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("report: not a pprof profile: %w", err)
	}
	return p, nil
}
