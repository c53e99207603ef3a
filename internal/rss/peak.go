package rss

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/google/pprof/profile"
)

// The peak: the resident-memory profile at the highest RSS since the watch
// started (or within a window). A watcher reads /proc/self/statm every
// WatchTick (one small read: a few microseconds) and takes a full read
// when the RSS makes a new high by peakMargin; so a peak held for a second
// is caught, and the profile kept is within the margin of the highest RSS
// the ticks saw.
const (
	// WatchTick is how often the watcher reads the RSS.
	WatchTick = 250 * time.Millisecond
	// peakMarginShift sets the margin of a new high: 1/32 of the last
	// peak (about 3%), and at least minMargin.
	peakMarginShift = 5
	minMargin       = 1 << 20
)

// Peak is a read taken at a new high of the RSS.
type Peak struct {
	Reading   *Reading
	Breakdown *Breakdown
	// RSS is the RSS the peak's read found (smaps), or statm's when smaps
	// could not be read.
	RSS int64
	// Since is when the watch (or the window) the peak is the highest of
	// began.
	Since time.Time
}

// Window collects the peak of a span of time (see OpenWindow).
type Window struct {
	peak  *Peak
	since time.Time
}

// nearShare is how close to a limit a new peak must be for the
// near-limit hook: 90% of it.
const nearShare = 0.9

var watch struct {
	mu sync.Mutex
	// near is called with each new peak at 90% of a limit or more (see
	// OnNearLimit).
	near    func(p *Peak, limit int64, what string)
	users   int
	stop    chan struct{}
	done    chan struct{}
	since   time.Time
	peak    *Peak
	windows map[*Window]struct{}
}

// statmPath is the file the watcher reads; tests point it elsewhere.
var statmPath = "/proc/self/statm"

// residentNow returns the RSS /proc/self/statm gives: its second field,
// in pages.
func residentNow(buf []byte) (int64, error) {
	f, err := os.Open(statmPath)
	if err != nil {
		return 0, err
	}
	n, err := f.Read(buf)
	f.Close()
	if err != nil {
		return 0, err
	}
	fields := bytes.Fields(buf[:n])
	if len(fields) < 2 {
		return 0, fmt.Errorf("statm: %q", buf[:n])
	}
	pages, err := strconv.ParseInt(string(fields[1]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("statm: %q", buf[:n])
	}
	return pages * int64(os.Getpagesize()), nil
}

// Watch starts watching the RSS for its peak, unless a watch runs already,
// and returns the function that ends this caller's use of it: the watch
// stops when every caller has stopped it.
func Watch() (stop func()) {
	watch.mu.Lock()
	defer watch.mu.Unlock()
	watch.users++
	if watch.users == 1 {
		watch.stop, watch.done = make(chan struct{}), make(chan struct{})
		watch.since, watch.peak = time.Now(), nil
		watch.windows = map[*Window]struct{}{}
		go watchLoop(watch.stop, watch.done)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			watch.mu.Lock()
			watch.users--
			var stop, done chan struct{}
			if watch.users == 0 {
				stop, done = watch.stop, watch.done
			}
			watch.mu.Unlock()
			if stop != nil {
				close(stop)
				<-done
			}
		})
	}
}

func watchLoop(stop, done chan struct{}) {
	defer close(done)
	buf := make([]byte, 256)
	t := time.NewTicker(WatchTick)
	defer t.Stop()
	check(buf)
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			check(buf)
		}
	}
}

// above reports whether rss is a new high over p by the margin.
func above(rss int64, p *Peak) bool {
	return p == nil || rss > p.RSS+max(p.RSS>>peakMarginShift, minMargin)
}

// check reads the RSS and, when it is a new high of the watch or of a
// window, takes a full read.
func check(buf []byte) {
	rss, err := residentNow(buf)
	if err != nil {
		rss = 0 // no statm: one read at the start only
	}
	watch.mu.Lock()
	need := above(rss, watch.peak) && (err == nil || watch.peak == nil)
	for w := range watch.windows {
		need = need || above(rss, w.peak) && (err == nil || w.peak == nil)
	}
	watch.mu.Unlock()
	if !need {
		return
	}
	r := Read()
	b := Classify(r)
	p := &Peak{Reading: r, Breakdown: b, RSS: b.RSS}
	if r.SmapsErr != nil {
		p.RSS = rss
	}
	watch.mu.Lock()
	var near func(*Peak, int64, string)
	var newPeak *Peak
	if watch.peak == nil || p.RSS > watch.peak.RSS {
		q := *p
		q.Since = watch.since
		watch.peak = &q
		near, newPeak = watch.near, &q
	}
	defer func() {
		watch.mu.Unlock()
		if near != nil {
			if limit, what := limitOf(r); limit > 0 && float64(newPeak.RSS) >= nearShare*float64(limit) {
				near(newPeak, limit, what)
			}
		}
	}()
	for w := range watch.windows {
		if w.peak == nil || p.RSS > w.peak.RSS {
			q := *p
			q.Since = w.since
			w.peak = &q
		}
	}
}

// limitOf returns the tightest memory limit of the process and its name:
// GOMEMLIMIT (which bounds the Go runtime's memory, a part of RSS) or the
// cgroup's memory.max; 0 when there is none.
func limitOf(r *Reading) (int64, string) {
	limit, what := int64(0), ""
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		limit, what = l, "GOMEMLIMIT"
	}
	if m := r.CgroupMax; m > 0 && (limit == 0 || m < limit) {
		limit, what = m, "the cgroup's memory.max"
	}
	return limit, what
}

// OnNearLimit sets the function called, from the watch, with each new
// peak whose RSS is 90% of a limit or more (GOMEMLIMIT or the cgroup's
// memory.max: the limit and its name are given), and returns the function
// that removes it. One at a time: a second replaces the first.
func OnNearLimit(f func(p *Peak, limit int64, what string)) (remove func()) {
	watch.mu.Lock()
	watch.near = f
	watch.mu.Unlock()
	return func() {
		watch.mu.Lock()
		watch.near = nil
		watch.mu.Unlock()
	}
}

// CurrentPeak returns the peak since the watch started, and whether a
// watch runs.
func CurrentPeak() (*Peak, bool) {
	watch.mu.Lock()
	defer watch.mu.Unlock()
	return watch.peak, watch.users > 0
}

// OpenWindow starts collecting the peak of a span of time; it returns nil
// when no watch runs. Close it to get the peak.
func OpenWindow() *Window {
	watch.mu.Lock()
	defer watch.mu.Unlock()
	if watch.users == 0 {
		return nil
	}
	w := &Window{since: time.Now()}
	watch.windows[w] = struct{}{}
	return w
}

// Close ends the window and returns its peak (nil if the watcher took no
// read within it).
func (w *Window) Close() *Peak {
	watch.mu.Lock()
	defer watch.mu.Unlock()
	delete(watch.windows, w)
	return w.peak
}

// PeakProfile writes a peak as a resident-memory profile, saying it is
// the highest RSS seen since p.Since.
func PeakProfile(p *Peak) (*profile.Profile, error) {
	prof, err := Profile(p.Reading, p.Breakdown)
	if err != nil {
		return nil, err
	}
	prof.Comments = append(prof.Comments, commentPeak+p.Since.UTC().Format(time.RFC3339Nano))
	return prof, nil
}

// NearLimitProfile writes a peak near a limit as a peak profile whose
// note says how near.
func NearLimitProfile(p *Peak, limit int64, what string) (*profile.Profile, error) {
	prof, err := PeakProfile(p)
	if err != nil {
		return nil, err
	}
	prof.Comments = append(prof.Comments, fmt.Sprintf("%swritten near a limit: RSS %d bytes is %.1f%% of %s (%d bytes)", commentNote, p.RSS, 100*float64(p.RSS)/float64(limit), what, limit))
	return prof, nil
}
