package profiler

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// The peak: out-of-memory kills happen at the highest point of memory, and
// an in-use profile read at a quiet moment does not show it. The profiler
// keeps the estimated live arena bytes (the sum of the in-use estimates),
// and a snapshot taken at the highest point seen, re-taken only when the
// peak has grown by peakMargin, so that a service whose live bytes creep up
// pays for O(log(peak)/log(1+peakMargin)) snapshots in all.
//
// Live bytes fall only when an arena is released (Reset, Free, or dropped);
// a release is where a peak ends. So the check runs at the start of each
// release that carries sampled objects, before they leave the in-use
// view: the snapshot taken there holds the burst being released. The
// check is one atomic load per watch; the snapshot itself runs in the
// releasing goroutine (Reset or Free), as long as a Snapshot of the
// collector (milliseconds for a full one), at most once per peakMargin of
// growth. An event adds its estimate to its shard's live bytes, on the
// shard's own cache line, under the shard's lock it holds anyway: a plain
// add. Reading a peak also compares it with the live bytes at that
// moment, so a peak still under way is not missed.

// peakMargin is the growth of the estimated live bytes over the last peak
// snapshot that makes the profiler take a new one.
const peakMargin = 0.05

// A peakWatch keeps the snapshot of the profiler at the highest estimated
// live arena bytes since the watch began, or since its last take. See
// [Profiler.WatchPeak].
type peakWatch struct {
	p    *Profiler
	next atomic.Int64 // live bytes above which a new snapshot is taken

	mu    sync.Mutex
	snap  *Snapshot
	bytes float64 // estimated live bytes of snap
	start time.Time
}

// Peak is the snapshot of a profiler at the highest estimated live arena
// bytes of a span (see [Profiler.Peak] and [Profiler.WatchPeak]): out of
// memory kills happen at the highest point, which an in-use profile read at
// a quiet moment does not show. Its in-use values, and their intervals, are
// those of that moment; its alloc values are cumulative up to it. The
// snapshot is re-taken when the live bytes have grown 5% above the last
// one, so Bytes is within 5% of the true highest point.
type Peak struct {
	Snapshot *Snapshot // nil if no object was live during the span
	Bytes    float64   // estimated live bytes at the peak
	Start    time.Time // start of the span the peak is the highest of
}

// WatchPeak starts a peak watch of a window of one's own, e.g. an upload
// interval (the profiler itself keeps one since Start: see
// [Profiler.Peak]). take returns the peak since the watch began or was
// last taken, and starts a new span at the live bytes of now; stop ends
// the watch. A watch costs one atomic load per arena release while it
// runs.
func (p *Profiler) WatchPeak() (take func() Peak, stop func()) {
	w := p.newPeakWatch()
	return w.take, w.stop
}

// newPeakWatch starts a peak watch.
func (p *Profiler) newPeakWatch() *peakWatch {
	w := &peakWatch{p: p, start: time.Now()}
	p.watchMu.Lock()
	p.watches = append(p.watches, w)
	p.watchMu.Unlock()
	return w
}

// stop ends the watch.
func (w *peakWatch) stop() {
	p := w.p
	p.watchMu.Lock()
	for i, x := range p.watches {
		if x == w {
			p.watches = append(p.watches[:i:i], p.watches[i+1:]...)
			break
		}
	}
	p.watchMu.Unlock()
}

// peak returns the peak since the watch began or was last taken, without
// resetting it.
func (w *peakWatch) peak() Peak {
	w.check(w.p.liveBytes())
	w.mu.Lock()
	defer w.mu.Unlock()
	return Peak{Snapshot: w.snap, Bytes: w.bytes, Start: w.start}
}

// take returns the peak since the watch began or was last taken, and
// starts a new span at the live bytes of now.
func (w *peakWatch) take() Peak {
	pk := w.peak()
	w.mu.Lock()
	w.snap, w.bytes, w.start = nil, 0, time.Now()
	w.next.Store(0)
	w.mu.Unlock()
	return pk
}

// check takes a snapshot if live is above the watch's threshold.
func (w *peakWatch) check(live int64) {
	if live <= w.next.Load() || live <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if live <= w.next.Load() {
		return // another release took it meanwhile
	}
	w.snap = w.p.Snapshot()
	w.bytes = 0
	for _, r := range w.snap.Records {
		w.bytes += r.InuseBytes
	}
	w.next.Store(int64(math.Ceil(w.bytes * (1 + peakMargin))))
}

// Peak returns the peak since the profiler started: the snapshot at the
// highest estimated live arena bytes (within peakMargin), taken when it
// happened.
func (p *Profiler) Peak() Peak { return p.peak.peak() }

// liveBytes returns the estimated live arena bytes, rounded: the sum of
// the shards' counts, at a release (64 loads), not at each event. The
// counts are written under their shards' locks by events and releases; they
// are read here without the locks (taking 64 locks per release would cost
// a microsecond), with plain loads out of the race detector's sight: a
// word-sized load sees some value written (the Go memory model), so the sum
// may lag the events of the last moments, which a peak within peakMargin
// does not need.
//
//go:norace
func (p *Profiler) liveBytes() int64 {
	var n float64
	for i := range p.shards {
		n += p.shards[i].liveBytes
	}
	// Additions and subtractions of floats leave a residue of a few
	// units in the last place: nothing live is 0 or a hair off it.
	return max(0, int64(math.Round(n)))
}

// checkPeaks runs the peak watches' check at a release.
func (p *Profiler) checkPeaks() {
	live := p.liveBytes()
	p.watchMu.Lock()
	ws := p.watches
	p.watchMu.Unlock()
	for _, w := range ws {
		w.check(live)
	}
}
