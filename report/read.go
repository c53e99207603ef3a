package report

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"

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

// Kind is what a profile holds, as far as package report is concerned.
type Kind int

// The kinds of profiles [Table] reads.
const (
	// KindArena is an arenaprof profile (package export), possibly a
	// combined memory profile with Go heap samples.
	KindArena Kind = iota + 1
	// KindGoHeap is a heap or allocs profile of the Go runtime
	// (runtime/pprof, net/http/pprof's /debug/pprof/heap or allocs).
	KindGoHeap
)

// KindOf tells what p holds, or returns an error saying why [Table] cannot
// give it intervals: a profile of something other than sampled memory (CPU,
// goroutines, contention) or a Go heap profile written with
// MemProfileRate 0, which sampled nothing.
func KindOf(p *profile.Profile) (Kind, error) {
	if p == nil {
		return 0, errors.New("report: nil profile")
	}
	if isGoHeap(p) {
		if p.Period <= 0 {
			return 0, fmt.Errorf("report: a Go heap profile written with MemProfileRate %d, which samples nothing; set runtime.MemProfileRate above 0 before allocating", p.Period)
		}
		return KindGoHeap, nil
	}
	if _, err := sampleIndexes(p); err == nil {
		return KindArena, nil
	}
	var have []string
	for _, st := range p.SampleType {
		have = append(have, st.Type+"/"+st.Unit)
	}
	what := "a profile"
	if p.PeriodType != nil {
		switch p.PeriodType.Type {
		case "cpu":
			what = "a CPU profile"
		case "goroutine":
			what = "a goroutine profile"
		case "contentions":
			what = "a contention profile"
		case "wallclock":
			what = "a wall-clock profile"
		}
	}
	h := strings.Join(have, ", ")
	if h == "" {
		h = "none"
	}
	return 0, fmt.Errorf("report: %s (sample types %s) carries no sampled memory to estimate; give an arenaprof profile or a Go heap or allocs profile", what, h)
}
