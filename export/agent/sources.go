package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/pprof"
	"time"

	"github.com/felixge/fgprof"
	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofenc"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// WallSource returns the wall-clock profile source, named "wall": a
// github.com/felixge/fgprof profile over each interval, sampling the stacks
// of all goroutines (running or waiting) 99 times a second. Its period
// type is wallclock/nanoseconds, so it cannot be merged with space
// profiles and is always a separate upload. An interval too short to hold
// one sample yields an empty profile.
//
// It is the agent's costly source: each sample stops the world to copy
// every goroutine's stack (runtime.GoroutineProfile), and fgprof keeps
// every distinct stack, symbolized, for the interval. On a JSON service at
// 2,000 requests a second it took about 10% of the process's CPU, where
// the four memory sources together took 0.2% (docs/agent-cost.md); so
// arenaprof.Start leaves it out unless Config.Profiles names "wall".
func WallSource() Source { return &wallSource{} }

type wallSource struct {
	buf   *bytes.Buffer
	stop  func() error
	start time.Time
}

func (s *wallSource) Name() string { return "wall" }

func (s *wallSource) Start(context.Context) error {
	s.begin()
	return nil
}

func (s *wallSource) begin() {
	s.buf = new(bytes.Buffer)
	s.start = time.Now()
	s.stop = fgprof.Start(s.buf, fgprof.FormatPprof)
}

// end stops the running fgprof profile and parses it.
func (s *wallSource) end() (*profile.Profile, error) {
	if s.stop == nil {
		return nil, nil
	}
	stop, buf, start := s.stop, s.buf, s.start
	s.stop, s.buf = nil, nil
	if err := stopFgprof(stop); err != nil {
		if errors.Is(err, errNoWallSamples) {
			return emptyWallProfile(start, time.Now()), nil
		}
		return nil, fmt.Errorf("wall-clock profile: %w", err)
	}
	p, err := profile.Parse(buf)
	if err != nil {
		return nil, fmt.Errorf("wall-clock profile: %w", err)
	}
	nameWall(p)
	return p, nil
}

// wallSampleType is the name the wall-clock duration sample type carries.
// Pyroscope names a profile's type after its sample types, and files it as
// its wall profile type (wall:wall:nanoseconds:wallclock:nanoseconds) only
// when a sample type is literally "wall"; fgprof calls it "time", which the
// server stores as an unrelated "time" type.
const wallSampleType = "wall"

// nameWall renames fgprof's "time" sample type to [wallSampleType].
func nameWall(p *profile.Profile) {
	for _, st := range p.SampleType {
		if st.Type == "time" && st.Unit == "nanoseconds" {
			st.Type = wallSampleType
		}
	}
}

var errNoWallSamples = errors.New("no samples")

// stopFgprof calls fgprof's stop function. fgprof divides by its measured
// sampling rate, which is zero when the interval held no sample; its
// sampling goroutine has already exited then, so the panic is turned into
// errNoWallSamples.
func stopFgprof(stop func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errNoWallSamples
		}
	}()
	return stop()
}

func emptyWallProfile(start, end time.Time) *profile.Profile {
	return &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: wallSampleType, Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "wallclock", Unit: "nanoseconds"},
		Period:        int64(time.Second / 99),
		TimeNanos:     start.UnixNano(),
		DurationNanos: int64(end.Sub(start)),
	}
}

func (s *wallSource) Collect(ctx context.Context) (*profile.Profile, error) {
	p, err := s.end()
	s.begin()
	return p, err
}

func (s *wallSource) Close() error {
	if s.stop != nil {
		_ = stopFgprof(s.stop)
		s.stop, s.buf = nil, nil
	}
	return nil
}

// errCPUProfileInUse is returned (wrapped) when the CPU source cannot start
// because another CPU profile is running: the Go runtime allows only one
// per process.
var errCPUProfileInUse = errors.New("another CPU profile is already running in this process (the Go runtime allows one at a time); stop it or leave out the cpu source")

// CPUSource returns the runtime CPU profile source, named "cpu": a
// runtime/pprof CPU profile over each interval. Starting the agent fails
// when a CPU profile is already running (for example `go test
// -cpuprofile`, or net/http/pprof serving /profile), with an error that
// says so: "another CPU profile is already running in this process".
// While the source runs, it holds the process's one CPU profile:
// net/http/pprof's /debug/pprof/profile answers 500 "cpu profiling already in use", and
// runtime/pprof.StartCPUProfile fails. If another user takes the CPU
// profiler between two intervals, the interval reports that error and the
// source tries again at the next one.
func CPUSource() Source { return &cpuSource{} }

type cpuSource struct {
	buf     *bytes.Buffer
	running bool
}

func (s *cpuSource) Name() string { return "cpu" }

func (s *cpuSource) Start(context.Context) error { return s.begin() }

func (s *cpuSource) begin() error {
	buf := new(bytes.Buffer)
	if err := pprof.StartCPUProfile(buf); err != nil {
		return fmt.Errorf("cpu profile: %w: %v", errCPUProfileInUse, err)
	}
	s.buf, s.running = buf, true
	return nil
}

func (s *cpuSource) Collect(ctx context.Context) (*profile.Profile, error) {
	if !s.running {
		return nil, s.begin()
	}
	pprof.StopCPUProfile()
	buf := s.buf
	s.buf, s.running = nil, false
	restartErr := s.begin()
	p, err := profile.Parse(buf)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return p, restartErr
}

func (s *cpuSource) Close() error {
	if s.running {
		pprof.StopCPUProfile()
		s.buf, s.running = nil, false
	}
	return nil
}

// HeapSource returns the runtime heap profile source, named "heap": each
// interval, alloc_objects and alloc_space over the interval, inuse_objects
// and inuse_space absolute, as the difference of two runtime/pprof heap
// profiles (see [DeltaSource]) gives them. The runtime publishes heap
// figures as of the last completed garbage collection.
//
// The profiles are in arenaprof's format, so that intervals can be
// computed downstream (package report, arenaprof top): Go's four sample
// types, then alloc_samples, the raw number of sampled objects, and
// alloc_tail (0); every sample has the labels memory=heap and
// memprofilerate.
//
// The source reads runtime.MemProfile into records it keeps and
// writes the profile itself, symbolizing each program counter once: an
// upload of a few hundred buckets allocates about 10 KiB, where
// runtime/pprof's heap profile writer alone allocates 1.7 MiB (see
// docs/agent-cost.md).
func HeapSource() Source { return &heapSource{} }

type heapSource struct {
	h *pprofenc.HeapDelta
}

func (s *heapSource) Name() string { return "heap" }

// Start takes the baseline: the first interval starts now.
func (s *heapSource) Start(context.Context) error {
	s.h = nil
	return s.read()
}

// read ends the interval; without Start, the first interval starts when
// the program did.
func (s *heapSource) read() error {
	if s.h == nil {
		s.h = pprofenc.NewHeapDelta()
	}
	if err := s.h.Read(nil); err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	return nil
}

// Collect returns the interval's profile decoded; the agent takes it
// encoded instead (see collectEncoded).
func (s *heapSource) Collect(context.Context) (*profile.Profile, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := s.h.Write(&buf, nil); err != nil {
		return nil, fmt.Errorf("heap profile: %w", err)
	}
	p, err := profile.ParseUncompressed(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("heap profile: %w", err)
	}
	return p, nil
}

func (s *heapSource) collectEncoded(context.Context) (encodable, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	return heapEncodable{s.h}, nil
}

// heapEncodable is the interval a heapSource read last.
type heapEncodable struct{ h *pprofenc.HeapDelta }

// heapSampleTypes are the sample types of every Go heap profile.
var heapSampleTypes = pprofmt.SampleTypes()

func (e heapEncodable) writeGzip(_ *pprofenc.Writer, w io.Writer, opts *pprofenc.Options) error {
	return e.h.WriteGzip(w, opts)
}

func (e heapEncodable) sampleTypes() ([]*profile.ValueType, bool) { return heapSampleTypes, false }

func (e heapEncodable) stamp(f func(int64) int64) { e.h.SetStart(f(e.h.Start().UnixNano())) }

func (e heapEncodable) profile() (*profile.Profile, error) {
	var buf bytes.Buffer
	if err := e.h.Write(&buf, nil); err != nil {
		return nil, err
	}
	return profile.ParseUncompressed(buf.Bytes())
}

// DeltaSource returns a source named name that turns a cumulative profile
// into per-interval profiles: it takes a baseline snapshot when the agent
// starts and reports, each interval, the difference of the current
// snapshot and the previous one. Running totals (alloc values, the raw
// sums alloc_samples and alloc_tail) are subtracted, clamped at zero when
// they went down; in-use values (sample types named inuse_*) are levels
// and stay absolute (subtracting levels gives negative memory, see
// golang/go#57765). The window runs from the end of the previous snapshot
// (TimeNanos+DurationNanos) to the end of the current one; a snapshot with
// an arenaprof window marking gives a delta marked "arenaprof window=both".
// A snapshot whose sample types changed fails its interval, and the next
// interval starts from it. [HeapSource] gives what a DeltaSource over
// runtime/pprof's heap profile would, at a fraction of the cost.
func DeltaSource(name string, snapshot func(ctx context.Context) (*profile.Profile, error)) Source {
	return &deltaSource{name: name, snapshot: snapshot}
}

type deltaSource struct {
	name     string
	snapshot func(context.Context) (*profile.Profile, error)
	prev     *profile.Profile
}

func (s *deltaSource) Name() string { return s.name }

func (s *deltaSource) Start(ctx context.Context) error {
	if s.snapshot == nil {
		return errors.New("nil snapshot function")
	}
	p, err := s.snapshot(ctx)
	if err != nil {
		return err
	}
	s.prev = p
	return nil
}

func (s *deltaSource) Collect(ctx context.Context) (*profile.Profile, error) {
	cur, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return nil, nil
	}
	d, err := profileDelta(s.prev, cur)
	if err != nil {
		// Start again from this snapshot rather than failing forever.
		s.prev = cur
		return nil, err
	}
	s.prev = cur
	return d, nil
}
