package report

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/google/pprof/profile"
)

// DefaultMaxBytes is the size bound [Parse] applies when given none: 1 GiB
// of profile data after decompression.
const DefaultMaxBytes = 1 << 30

// ErrTooLarge is returned, wrapped, by [Parse] for data larger than its
// bound, before or after decompression.
var ErrTooLarge = errors.New("profile larger than the size limit")

// Parse reads a pprof profile (gzip-compressed or not) from r, refusing data
// longer than maxBytes (DefaultMaxBytes if maxBytes <= 0) both as read and
// after decompression, so that a small hostile file (a gzip of zeros) cannot
// make the reader allocate gigabytes. A panic of the protobuf decoder on
// hostile input becomes an ordinary error.
func Parse(r io.Reader, maxBytes int64) (*profile.Profile, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	lr := &io.LimitedReader{R: r, N: maxBytes + 1}
	br := bufio.NewReader(lr)
	var src io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("report: bad gzip data: %w", err)
		}
		defer zr.Close()
		src = zr
	}
	data, err := io.ReadAll(io.LimitReader(src, maxBytes+1))
	if lr.N == 0 {
		return nil, fmt.Errorf("report: %w of %d bytes (compressed)", ErrTooLarge, maxBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("report: reading profile: %w", err)
	}
	if int64(len(data)) > maxBytes {
		return nil, fmt.Errorf("report: %w of %d bytes (decompressed)", ErrTooLarge, maxBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("report: empty data, not a profile")
	}
	return parseData(data)
}

// parseData parses uncompressed pprof data, turning a decoder panic into an
// error.
func parseData(data []byte) (p *profile.Profile, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("report: malformed profile data (%v)", r)
		}
	}()
	p, err = profile.ParseData(data)
	if err != nil {
		return nil, fmt.Errorf("report: not a pprof profile: %w", err)
	}
	return p, nil
}
