package profiler

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/poolgets"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
)

// defaultMaxBuckets is the default bound on the number of buckets (distinct
// allocation sites) a [Profiler] keeps; see [WithMaxBuckets].
const defaultMaxBuckets = 16384

// collectorShards is the number of independent shards of a Profiler. Events
// are routed to a shard by their arena identity, so goroutines allocating
// from different arenas rarely share a lock.
const collectorShards = 64

// Option configures [Start].
type Option func(*collectorConfig) error

type collectorConfig struct {
	maxBuckets int
}

// WithMaxBuckets bounds the number of buckets the profiler keeps (default
// 16384). A bucket is one distinct combination of stack, type,
// labels, object size and mean in one of the profiler's 64 shards (events
// are routed to a shard by arena identity, so a site allocated from by
// arenas of several shards has a bucket in each); it costs about 150 bytes
// plus 8 bytes per stack frame, so the default bounds the profiler's memory
// to about 10 MiB even with full 64-frame stacks. Events for new combinations past the bound are not dropped:
// they are aggregated into one overflow bucket per type and mean, whose stack
// is a single synthetic frame, and counted in [Stats.OverflowEvents]. Estimate
// totals therefore still include them.
//
// Overflow buckets are bounded too, by max(1, n/16) across shards: past that
// bound, events of further types go to the single typeless bucket of their
// mean, shared by all shards (type "arenaprof.other"), counted in
// [Stats.TypelessEvents]; they keep their bytes and their mean but lose
// their type. There are at most 16 typeless buckets (one per mean); an
// event past all three bounds (a mean without one, when all are taken) is
// dropped and counted in [Stats.Lost]. So the profiler never
// holds more than n + max(1, n/16) + 16 buckets, whatever the workload.
//
// Span IDs (the label span_id, new on every request) would fill the bound
// one sampled request at a time: at most a quarter of it, max(1, n/4)
// buckets, carry one at a time; past that, events that would need a new
// one lose their span_id label, keep the others (span_name among them),
// and are counted in [Stats.SpanIDsDropped]. [Profiler.Deltas] (the
// agent's windows) frees them window by window: it folds a span ID's
// buckets into their site's bucket once it has read them and their
// objects are released.
func WithMaxBuckets(n int) Option {
	return func(c *collectorConfig) error {
		if n < 1 {
			return fmt.Errorf("profiler: bucket bound %d is not positive", n)
		}
		c.maxBuckets = n
		return nil
	}
}

// Profiler aggregates the sampled-allocation events of every allocator that
// reports through package hooks into buckets, one per distinct allocation
// site (stack, type, labels, object size and mean), from [Start] until
// [Profiler.Stop]. Its memory grows with the number of distinct sites, never
// with the number of events, and is bounded (see [WithMaxBuckets]).
//
// A Profiler is safe for concurrent use. Read it with [Profiler.Snapshot];
// package export turns snapshots into pprof profiles.
type Profiler struct {
	id         uint64
	start      time.Time
	epoch      uint64 // samplingstate.Epoch at Start
	maxBuckets int
	unregister func()
	stopped    atomic.Bool
	stopTime   atomic.Pointer[time.Time]
	// gets is poolgets.Total at Start; stopGets the arenas handed out
	// from Start to Stop, set by Stop.
	gets     uint64
	stopGets atomic.Pointer[uint64]

	buckets         atomic.Int64 // regular buckets, across shards
	overflowBuckets atomic.Int64
	overflowEvents  atomic.Uint64
	typelessEvents  atomic.Uint64
	lost            atomic.Uint64
	releases        atomic.Uint64
	dropped         atomic.Uint64
	spanBuckets     atomic.Int64 // regular buckets whose labels carry a span ID
	spanIDsDropped  atomic.Uint64

	// The peak (see peak.go): the peak watches. The estimated live bytes
	// are kept per shard (collectorShard.live).
	peak    *peakWatch
	watchMu sync.Mutex
	watches []*peakWatch

	// The typeless buckets, one per mean, shared by all shards: their
	// fields are guarded by typelessMu (taken after a shard's lock).
	typelessMu sync.Mutex
	typeless   map[int64]*collectorBucket

	shards [collectorShards]collectorShard
}

// maxTypelessMeans bounds the typeless buckets of a [Profiler]: one per
// sampling mean, at most this many.
const maxTypelessMeans = 16

var collectorIDs atomic.Uint64

var collectorSeed = maphash.MakeSeed()

// collectorShard holds the buckets and the live objects of the arenas whose
// identity maps to it. The padding keeps hot shard locks on separate cache
// lines.
type collectorShard struct {
	mu      sync.Mutex
	buckets map[uint64]*collectorBucket // by key hash; collisions chained
	live    map[uint64]*collectorLive   // by arena identity
	free    []*collectorLive            // released, for reuse
	events  uint64                      // events aggregated in this shard
	// The live list of the arena of the shard's last event: an arena's
	// events come in runs, and this saves a map lookup per event.
	lastArena uint64
	lastLive  *collectorLive
	// liveBytes is the estimated live bytes of the shard's arenas, written
	// under mu: a plain add on the
	// shard's own cache line, not an atomic one on a line all cores share
	// (see Profiler.liveBytes for how it is read).
	liveBytes float64
	_         [64]byte
}

// collectorBucket is the running sums of one allocation site in one shard.
// All fields after the key are guarded by the shard's lock.
type collectorBucket struct {
	next      *collectorBucket // hash chain
	hash      uint64
	stack     []uintptr
	typeName  string
	labels    hooks.Labels
	size      int64 // 0 for an overflow bucket (mixed sizes)
	mean      int64
	overflow  bool
	typeless  bool    // a typeless bucket: its sums are guarded by typelessMu
	span      bool    // its labels carry a span ID (see foldSpan)
	weight    float64 // estimate.WeightedBytes(size, mean), cached; 0 for overflow
	allocN    int64
	allocTail int64
	allocB    float64
	allocO    float64
	inuseN    int64
	inuseB    float64
	inuseO    float64
}

// collectorLive is the sampled objects of one arena that are still live,
// aggregated by bucket.
type collectorLive struct {
	entries []collectorLiveEntry
	index   map[*collectorBucket]int // built when entries grows past a few
}

type collectorLiveEntry struct {
	b    *collectorBucket
	n    int64
	wB   float64
	wObj float64
}

// Start creates a profiler and registers it as a consumer of sampled
// allocations with [hooks.Register], which turns sampling on.
// Call [Profiler.Stop] to unregister it.
func Start(opts ...Option) (*Profiler, error) {
	cfg := collectorConfig{maxBuckets: defaultMaxBuckets}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	p := &Profiler{
		id:         collectorIDs.Add(1),
		start:      time.Now(),
		epoch:      samplingstate.Epoch(),
		gets:       poolgets.Total(),
		maxBuckets: cfg.maxBuckets,
		typeless:   make(map[int64]*collectorBucket),
	}
	for i := range p.shards {
		p.shards[i].buckets = make(map[uint64]*collectorBucket)
		p.shards[i].live = make(map[uint64]*collectorLive)
	}
	p.peak = p.newPeakWatch()
	p.unregister = hooks.Register(collectorConsumer{p})
	return p, nil
}

// Stop unregisters the profiler; it receives no more events. Its data stay
// readable. Calling Stop more than once is harmless.
func (p *Profiler) Stop() {
	if p.stopped.CompareAndSwap(false, true) {
		now := time.Now()
		p.stopTime.Store(&now)
		p.unregister()
		gets := poolgets.Total() - p.gets
		p.stopGets.Store(&gets)
	}
}

// collectorConsumer adapts a Profiler to hooks.Consumer without exporting
// the Sampled and Released methods on Profiler itself.
type collectorConsumer struct{ p *Profiler }

func (c collectorConsumer) Sampled(e *hooks.Event) { c.p.sampled(e) }
func (c collectorConsumer) Released(arena uint64)  { c.p.released(arena) }

func collectorShardOf(arena uint64) int {
	// Fibonacci hashing spreads sequential arena identities.
	return int((arena * 0x9E3779B97F4A7C15) >> (64 - 6))
}

func collectorHash(e *hooks.Event) uint64 {
	h := e.StackHash // from the allocator's stack capture, if it has one
	if h == 0 && len(e.Stack) > 0 {
		// One pass of the runtime's hash over the stack's bytes: a few
		// nanoseconds for 20 frames, where mixing one pc at a time was a
		// dependent chain of multiplies.
		h = maphash.String(collectorSeed, collectorStackBytes(e.Stack))
	}
	h ^= uint64(e.Size) * 0xbf58476d1ce4e5b9
	h ^= uint64(e.MeanBytes) * 0x94d049bb133111eb
	h ^= maphash.String(collectorSeed, e.TypeName)
	return h ^ collectorLabelsHash(e.Labels)
}

// collectorLabelsHash is the labels' part of collectorHash, which XORs it
// in last: foldSpan swaps one label set's part for another's.
func collectorLabelsHash(l hooks.Labels) uint64 {
	if k := l.Key(); k != "" {
		return maphash.String(collectorSeed, k) * 31
	}
	return 0
}

func collectorOverflowHash(typeName string, mean int64) uint64 {
	return maphash.String(collectorSeed, typeName) ^ uint64(mean)*0x94d049bb133111eb ^ 0x5bd1e995
}

func (b *collectorBucket) matches(h uint64, e *hooks.Event) bool {
	return b.hash == h && !b.overflow && b.size == e.Size && b.mean == e.MeanBytes &&
		b.typeName == e.TypeName && b.labels.Key() == e.Labels.Key() && collectorSameStack(b.stack, e.Stack)
}

// collectorSameStack is slices.Equal through the runtime's vectorized
// memory comparison.
func collectorSameStack(a, b []uintptr) bool {
	return len(a) == len(b) && (len(a) == 0 || collectorStackBytes(a) == collectorStackBytes(b))
}

// collectorStackBytes views a non-empty stack's memory as a string.
func collectorStackBytes(s []uintptr) string {
	return unsafe.String((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(uintptr(0))))
}

func (p *Profiler) sampled(e *hooks.Event) {
	if p.stopped.Load() {
		return
	}
	sh := &p.shards[collectorShardOf(e.Arena)]
lookup:
	h := collectorHash(e)
	sh.mu.Lock()
	var b *collectorBucket
	for x := sh.buckets[h]; x != nil; x = x.next {
		if x.matches(h, e) {
			b = x
			break
		}
	}
	if b == nil {
		if p.spanBuckets.Load() >= p.maxSpanBuckets() {
			// No new bucket for a span ID past the bound (an
			// existing one still takes its span's events).
			if hasRequestLabel(e.Labels) {
				sh.mu.Unlock()
				e = p.withoutSpanID(e)
				goto lookup
			}
		}
		b = p.newBucket(sh, h, e)
		if b == nil {
			sh.mu.Unlock()
			p.dropped.Add(1)
			return
		}
	}
	wB := b.weight
	wObj := 0.0
	if b.overflow {
		w, err := estimate.WeightedBytes(e.Size, e.MeanBytes)
		if err != nil {
			sh.mu.Unlock()
			p.dropped.Add(1)
			return
		}
		wB, wObj = w, w/float64(e.Size)
		if b.typeless {
			p.typelessMu.Lock()
		}
		b.allocO += wObj
		b.inuseO += wObj
	}
	b.allocN++
	b.allocTail += e.Size - e.Offset
	b.allocB += wB
	b.inuseN++
	b.inuseB += wB
	if b.typeless {
		p.typelessMu.Unlock()
	}
	lv := sh.lastLive
	if lv == nil || sh.lastArena != e.Arena {
		lv = sh.live[e.Arena]
		if lv == nil {
			if n := len(sh.free); n > 0 {
				lv = sh.free[n-1]
				sh.free = sh.free[:n-1]
			} else {
				lv = &collectorLive{}
			}
			sh.live[e.Arena] = lv
		}
		sh.lastArena, sh.lastLive = e.Arena, lv
	}
	lv.add(b, wB, wObj)
	sh.events++ // under the shard's lock: no cache line shared by all cores
	sh.liveBytes += wB
	sh.mu.Unlock()
}

// newBucket creates the bucket for e, or finds or creates the overflow
// bucket past the bound. It returns nil if the event's size and mean have
// no valid weight (hooks validates events, so this does not happen for
// events that came through hooks.Emit). sh.mu is held.
func (p *Profiler) newBucket(sh *collectorShard, h uint64, e *hooks.Event) *collectorBucket {
	w, err := estimate.WeightedBytes(e.Size, e.MeanBytes)
	if err != nil {
		return nil
	}
	if p.buckets.Add(1) > int64(p.maxBuckets) {
		p.buckets.Add(-1)
		p.overflowEvents.Add(1)
		oh := collectorOverflowHash(e.TypeName, e.MeanBytes)
		for x := sh.buckets[oh]; x != nil; x = x.next {
			if x.overflow && x.mean == e.MeanBytes && x.typeName == e.TypeName {
				return x
			}
		}
		if p.overflowBuckets.Add(1) > int64(p.maxOverflowBuckets()) {
			p.overflowBuckets.Add(-1)
			return p.typelessBucket(e.MeanBytes)
		}
		b := &collectorBucket{hash: oh, typeName: e.TypeName, mean: e.MeanBytes, overflow: true}
		b.next = sh.buckets[oh]
		sh.buckets[oh] = b
		return b
	}
	b := &collectorBucket{
		hash:     h,
		stack:    slices.Clone(e.Stack),
		typeName: e.TypeName,
		labels:   e.Labels,
		size:     e.Size,
		mean:     e.MeanBytes,
		weight:   w,
	}
	b.next = sh.buckets[h]
	sh.buckets[h] = b
	if hasRequestLabel(e.Labels) {
		b.span = true
		p.spanBuckets.Add(1)
	}
	return b
}

// spanIDLabel is the label tracing integrations (the module otelarena)
// put a request's span ID in: a value new on every request, so that each
// sampled request would make buckets of its own.
const spanIDLabel = "span_id"

// requestLabels are the labels whose values are new on every request: the
// span ID and the trace ID (otelarena puts both). A bucket with one of them
// is a span bucket; past the bound and when folded it loses all of them.
var requestLabels = [...]string{spanIDLabel, "trace_id"}

// hasRequestLabel reports whether l holds one of requestLabels.
func hasRequestLabel(l hooks.Labels) bool {
	for _, k := range requestLabels {
		if _, ok := l.Get(k); ok {
			return true
		}
	}
	return false
}

// isRequestLabel reports whether key is one of requestLabels.
func isRequestLabel(key string) bool {
	for _, k := range requestLabels {
		if key == k {
			return true
		}
	}
	return false
}

// maxSpanBuckets bounds the buckets whose labels carry a span ID: a
// quarter of the bucket bound, so that span IDs never take the buckets
// of the sites that recur. Past it, events keep their other labels (the
// span's name among them) and lose their span ID.
func (p *Profiler) maxSpanBuckets() int64 { return int64(max(1, p.maxBuckets/4)) }

// withoutSpanID returns a copy of e whose labels lack the span ID and the
// trace ID (requestLabels), and counts it.
func (p *Profiler) withoutSpanID(e *hooks.Event) *hooks.Event {
	p.spanIDsDropped.Add(1)
	var kv []string
	for k, v := range e.Labels.All {
		if !isRequestLabel(k) {
			kv = append(kv, k, v)
		}
	}
	c := *e
	c.Labels = hooks.NewLabels(kv...)
	return &c
}

// withoutRequestLabels returns l without requestLabels.
func withoutRequestLabels(l hooks.Labels) hooks.Labels {
	var kv []string
	for k, v := range l.All {
		if !isRequestLabel(k) {
			kv = append(kv, k, v)
		}
	}
	return hooks.NewLabels(kv...)
}

// spanFold is a span bucket a snapshot read with no live object: its
// shard, its record in the snapshot, and its events when read.
type spanFold struct {
	b      *collectorBucket
	shard  int32
	rec    int32
	allocN int64
}

// foldSpans folds the span buckets of folds (in shard order) whose
// records in recs hold no live object, none of their buckets in any
// shard, and that took no event since they were read: a span ID's buckets
// fold together, so that its record leaves the next snapshot whole, and
// folded bytes were all in the snapshot that read them. A bucket that
// missed the fold for either reason is folded by a later window's.
func (p *Profiler) foldSpans(folds []spanFold, recs []Record) {
	for _, f := range folds {
		recs[f.rec].folded = recs[f.rec].InuseSamples == 0
	}
	for i := 0; i < len(folds); {
		sh := &p.shards[folds[i].shard]
		sh.mu.Lock()
		for ; i < len(folds) && &p.shards[folds[i].shard] == sh; i++ {
			f := folds[i]
			if recs[f.rec].InuseSamples == 0 && f.b.inuseN == 0 && f.b.allocN == f.allocN {
				p.foldSpan(sh, f.b)
			} else {
				recs[f.rec].folded = false // in part at most: Delta's rule for a shrunk record applies
			}
		}
		sh.mu.Unlock()
	}
}

// foldSpan folds a span bucket, none of whose objects is live, into its
// twin, the bucket of its key without the span ID: it adds its sums to the
// twin, or becomes the twin when there is none (taking no new bucket of
// the bound). The span ID's buckets thereby live for the windows their
// events fell in (see [Profiler.Deltas]), and a long-running service's
// span IDs do not fill the bound: sums move within the site, so a
// cumulative snapshot's totals stay exact, and deltaInto gives each
// window its own (the twin's growth, less what the span records had
// before). sh.mu is held.
func (p *Profiler) foldSpan(sh *collectorShard, b *collectorBucket) {
	// Unlink b from its chain.
	if head := sh.buckets[b.hash]; head == b {
		if b.next == nil {
			delete(sh.buckets, b.hash)
		} else {
			sh.buckets[b.hash] = b.next
		}
	} else {
		for x := head; x != nil; x = x.next {
			if x.next == b {
				x.next = b.next
				break
			}
		}
	}
	b.next = nil
	p.spanBuckets.Add(-1)
	labels := withoutRequestLabels(b.labels)
	// The twin's hash as collectorHash makes it from an event of the
	// same stack hash: the events without a span ID past the bound
	// (withoutSpanID) find it.
	h := b.hash ^ collectorLabelsHash(b.labels) ^ collectorLabelsHash(labels)
	for x := sh.buckets[h]; x != nil; x = x.next {
		if x.hash == h && !x.overflow && x.size == b.size && x.mean == b.mean &&
			x.typeName == b.typeName && x.labels.Key() == labels.Key() && collectorSameStack(x.stack, b.stack) {
			x.allocN += b.allocN
			x.allocTail += b.allocTail
			x.allocB += b.allocB
			p.buckets.Add(-1)
			return
		}
	}
	b.labels, b.hash, b.span = labels, h, false
	b.next = sh.buckets[h]
	sh.buckets[h] = b
}

// typelessBucket returns the typeless bucket of a mean, creating it if
// there are fewer than maxTypelessMeans, else nil (the event is lost).
func (p *Profiler) typelessBucket(mean int64) *collectorBucket {
	p.typelessMu.Lock()
	defer p.typelessMu.Unlock()
	b := p.typeless[mean]
	if b == nil {
		if len(p.typeless) >= maxTypelessMeans {
			p.overflowEvents.Add(^uint64(0)) // undo: the event is not aggregated
			p.lost.Add(1)
			return nil
		}
		b = &collectorBucket{hash: collectorOverflowHash(pprofmt.TypelessTypeName, mean), typeName: pprofmt.TypelessTypeName, mean: mean, overflow: true, typeless: true}
		p.typeless[mean] = b
	}
	p.typelessEvents.Add(1)
	return b
}

const collectorLiveIndexAt = 8

// maxOverflowBuckets is the bound on overflow buckets (see WithMaxBuckets).
func (p *Profiler) maxOverflowBuckets() int { return max(1, p.maxBuckets/16) }

// collectorFreeMax bounds the released live lists a shard keeps for reuse.
const collectorFreeMax = 16

func (lv *collectorLive) add(b *collectorBucket, wB, wObj float64) {
	i := -1
	if lv.index != nil {
		if j, ok := lv.index[b]; ok {
			i = j
		}
	} else {
		for j := range lv.entries {
			if lv.entries[j].b == b {
				i = j
				break
			}
		}
	}
	if i < 0 {
		i = len(lv.entries)
		lv.entries = append(lv.entries, collectorLiveEntry{b: b})
		if lv.index != nil {
			lv.index[b] = i
		} else if len(lv.entries) > collectorLiveIndexAt {
			lv.index = make(map[*collectorBucket]int, 2*len(lv.entries))
			for j, en := range lv.entries {
				lv.index[en.b] = j
			}
		}
	}
	en := &lv.entries[i]
	en.n++
	en.wB += wB
	en.wObj += wObj
}

func (p *Profiler) released(arena uint64) {
	sh := &p.shards[collectorShardOf(arena)]
	sh.mu.Lock()
	lv := sh.live[arena]
	sh.mu.Unlock()
	if lv != nil {
		p.checkPeaks() // before the arena's objects leave the in-use view
	}
	sh.mu.Lock()
	if lv := sh.live[arena]; lv != nil {
		var gone float64
		delete(sh.live, arena)
		if sh.lastLive == lv {
			sh.lastLive = nil
		}
		for _, en := range lv.entries {
			b := en.b
			gone += en.wB
			if b.typeless {
				p.typelessMu.Lock()
			}
			b.inuseN -= en.n
			if b.inuseN <= 0 {
				// Exactly zero, without floating-point residue.
				b.inuseN, b.inuseB, b.inuseO = 0, 0, 0
			} else {
				b.inuseB = math.Max(0, b.inuseB-en.wB)
				b.inuseO = math.Max(0, b.inuseO-en.wObj)
			}
			if b.typeless {
				p.typelessMu.Unlock()
			}
		}
		if len(sh.free) < collectorFreeMax && len(lv.entries) <= collectorLiveIndexAt {
			clear(lv.entries)
			lv.entries = lv.entries[:0]
			sh.free = append(sh.free, lv)
		}
		sh.liveBytes -= gone
	}
	sh.mu.Unlock()
	p.releases.Add(1)
}

// Stats describes the state of a profiler.
type Stats struct {
	Events          uint64 // events aggregated since Start (overflowed ones included)
	Releases        uint64 // arena releases (resets and frees) seen
	Buckets         int    // regular buckets, across shards (at most MaxBuckets)
	MaxBuckets      int    // the bound set by WithMaxBuckets
	OverflowBuckets int    // overflow buckets (one per type and mean, per shard)
	OverflowEvents  uint64 // events that went to an overflow bucket (typeless included)
	TypelessEvents  uint64 // events that went to a typeless bucket and lost their type
	TypelessBuckets int    // typeless buckets (one per mean, at most 16)
	Lost            uint64 // events past every bound (no typeless bucket left for their mean)
	Dropped         uint64 // events not aggregated: without a valid weight, or Lost
	LiveArenas      int    // arenas with sampled objects not yet released
	// PoolGets counts the arenas handed out by arena.Pool.Get (all pools
	// of the process) while sampling was on, since Start (or in the
	// window of a delta): the requests a window served, for arenaprof diff
	// -per request.
	PoolGets uint64
	// SpanBuckets counts the regular buckets whose labels carry a span ID
	// (label span_id, set by tracing integrations); at most a quarter of
	// MaxBuckets. Past that bound events that would need a new one lose
	// their span_id label, keep the others, and are counted in
	// SpanIDsDropped. Profiler.Deltas folds them window by window (see
	// WithMaxBuckets).
	SpanBuckets    int
	SpanIDsDropped uint64
}

// Stats returns the profiler's counters.
func (p *Profiler) Stats() Stats {
	s := Stats{
		Releases:        p.releases.Load(),
		Buckets:         int(p.buckets.Load()),
		MaxBuckets:      p.maxBuckets,
		OverflowBuckets: int(p.overflowBuckets.Load()),
		OverflowEvents:  p.overflowEvents.Load(),
		TypelessEvents:  p.typelessEvents.Load(),
		Lost:            p.lost.Load(),
		Dropped:         p.dropped.Load(),
		PoolGets:        poolgets.Total() - p.gets,
		SpanBuckets:     int(p.spanBuckets.Load()),
		SpanIDsDropped:  p.spanIDsDropped.Load(),
	}
	if g := p.stopGets.Load(); g != nil {
		s.PoolGets = *g
	}
	p.typelessMu.Lock()
	s.TypelessBuckets = len(p.typeless)
	p.typelessMu.Unlock()
	for i := range p.shards {
		sh := &p.shards[i]
		sh.mu.Lock()
		s.LiveArenas += len(sh.live)
		s.Events += sh.events
		sh.mu.Unlock()
	}
	return s
}

// Record is the aggregate of one allocation site in a [Snapshot].
//
// Byte values are unbiased estimates: sums over the site's events of
// estimate.WeightedBytes(size, mean). Object values are those divided by the size.
type Record struct {
	// Stack is the allocating stack, leaf first, as the allocator captured
	// it (return program counters, see [hooks.Event]). Nil for an overflow
	// record.
	Stack     []uintptr
	TypeName  string
	Labels    hooks.Labels
	Size      int64 // object size in bytes; 0 for an overflow record (mixed sizes)
	MeanBytes int64 // the mean the events were drawn under
	// Overflow marks the aggregate of events past the bucket bound, for one
	// type and mean.
	Overflow bool

	AllocSamples int64   // raw number of sample events
	AllocTail    int64   // raw sum of size-offset over those events
	AllocBytes   float64 // estimated bytes allocated
	AllocObjects float64 // estimated objects allocated
	InuseSamples int64   // sample events whose objects are still live
	InuseBytes   float64 // estimated bytes still live
	InuseObjects float64 // estimated objects still live

	// folded marks a span ID's record whose buckets the snapshot folded
	// into their site's once it had read them (see foldSpans): Delta
	// from it knows that a record of the same key in the later snapshot
	// is new.
	folded bool
}

// Snapshot is an immutable view of a profiler's buckets: cumulative since
// Start (from [Profiler.Snapshot]), or the difference between two
// cumulative snapshots (from [Delta]). Its slices must not be modified.
type Snapshot struct {
	Start     time.Time // start of the window
	End       time.Time // when the snapshot was taken
	MeanBytes int64     // the sampling mean in force at End (0 if sampling was off)
	// Window tells whether the window starts and ends on a sample event:
	// estimate.WindowEnd for a cumulative snapshot (every arena's stream starts
	// fresh, the end falls between events), estimate.WindowBoth for a delta.
	Window estimate.Window
	// Means lists, in increasing order, every sampling mean in force
	// during the window, whether or not it produced events: each mean
	// configured with hooks.SetMeanBytes at some point in the window, and
	// each mean of the window's events (an arena that had not yet picked
	// up a change when the window started). A row of a profile that had no
	// event under one of them may still have allocated bytes under it;
	// its interval allows for them (see package report).
	Means []int64
	// InUseMeans lists the means in force since the profiler started: the
	// in-use values (of a delta too) count objects still live, allocated at
	// any time since then. It equals Means for a cumulative snapshot.
	InUseMeans []int64
	// MeansIncomplete is set when more distinct means were configured
	// than hooks remembers (1024), so that Means may lack some.
	MeansIncomplete bool
	Records         []Record
	Stats           Stats

	owner      uint64
	cumulative bool
	seq        uint64
	epoch      uint64           // samplingstate.Epoch before the records were read
	meanLast   map[int64]uint64 // for each mean in force since Start, its last epoch
	mem        *snapshotMem     // the memory the snapshot owns, for a reusing call
}

// snapshotMem is the memory a snapshot owns: its records, its means (and,
// for a cumulative snapshot, meanLast) and the scratch used to make them,
// which [Profiler.Deltas] (snapshot and deltaReuse) takes over from a
// snapshot the caller no longer uses. A delta borrows its InUseMeans and
// meanLast from cur: they are not its own.
type snapshotMem struct {
	recs     []Record
	byHash   map[uint64]int32
	chain    []int32
	idx      []int32
	means    []int64
	set      map[int64]bool
	meanLast map[int64]uint64
	folds    []spanFold       // the span buckets a snapshot may fold
	used     []bool           // Delta: the records of prev that cur has
	twins    map[uint64]int32 // Delta: the records of the result by hash, when span records moved
}

// takeMem returns the memory of old for a new snapshot: old's own, or a
// fresh one when old is nil or has none.
func takeMem(old *Snapshot) *snapshotMem {
	if old == nil || old.mem == nil {
		return &snapshotMem{}
	}
	m := old.mem
	// old gives up its memory: a stray use of it sees no records rather
	// than another snapshot's.
	*old = Snapshot{}
	return m
}

var collectorSeq atomic.Uint64

// Snapshot returns the cumulative aggregates since [Start]. In-use values
// are those at the time of the call. It works after Stop as well.
func (p *Profiler) Snapshot() *Snapshot { return p.snapshot(nil, false) }

// Deltas returns next, for a caller that takes the window of every
// interval, such as the agent's arena source: each call of next returns
// the snapshot of the window since the call before it (the first call:
// since Deltas was called), what [Delta] of the two cumulative snapshots
// returns, in the memory of the snapshots of the earlier calls, so that
// once the number of records has settled a call allocates little. A result
// is valid until the next call, which reuses its memory. next must not be
// called concurrently.
//
// Span IDs (the label span_id) live for the windows of next: each call,
// once it has read them, folds the buckets of a span ID whose objects are
// all released (in every arena of the span) into the bucket of their
// site without the span ID. A
// window's snapshot thus carries the span IDs of its own events, and the
// profiler keeps at most a quarter of its bucket bound of them at a time
// (see [WithMaxBuckets]), however long it runs. Totals stay exact: other
// readers' windows ([Delta] of two snapshots) that span a fold see the
// folded bytes under the site without the span ID.
func (p *Profiler) Deltas() (next func() *Snapshot) {
	prev := p.snapshot(nil, true)
	var spare, last *Snapshot
	return func() *Snapshot {
		// cur takes the memory of the snapshot before prev, which no
		// result uses any more (a delta shares memory with its cur
		// only), and the delta that of the last result.
		cur := p.snapshot(spare, true)
		d, err := deltaReuse(last, prev, cur)
		if err != nil {
			panic(err) // two snapshots of p, in order: cannot happen
		}
		spare, prev, last = prev, cur, d
		return d
	}
}

// snapshot is Snapshot in the memory of old (nil: fresh memory). With
// fold, it folds the span buckets it read whose objects are all released
// (see foldSpan).
func (p *Profiler) snapshot(old *Snapshot, fold bool) *Snapshot {
	mem := takeMem(old)
	snap := old
	if snap == nil {
		snap = new(Snapshot)
	}
	seq := collectorSeq.Add(1)
	epoch := samplingstate.Epoch()
	n := int(p.buckets.Load() + p.overflowBuckets.Load())
	recs := slices.Grow(mem.recs[:0], n)
	// Buckets with one key (from several shards, or with stack hashes of
	// different origin) merge into one record, found by a hash of the
	// key's content: a bucket's own hash may come from its events.
	// byHash holds the first record of each hash, chain the next.
	byHash := mem.byHash
	if byHash == nil {
		byHash = make(map[uint64]int32, n)
	} else {
		clear(byHash)
	}
	chain := slices.Grow(mem.chain[:0], n)
	folds := mem.folds[:0]
	for i := range p.shards {
		sh := &p.shards[i]
		sh.mu.Lock()
		for _, head := range sh.buckets {
			for b := head; b != nil; b = b.next {
				ch := b.hash
				if !b.overflow {
					ch = collectorHash(&hooks.Event{Stack: b.stack, TypeName: b.typeName, Labels: b.labels, Size: b.size, MeanBytes: b.mean})
				}
				j := -1
				first, ok := byHash[ch]
				for k := first; ok && k >= 0; k = chain[k] {
					r := &recs[k]
					if r.Overflow == b.overflow && r.Size == b.size && r.MeanBytes == b.mean &&
						r.TypeName == b.typeName && r.Labels.Key() == b.labels.Key() && collectorSameStack(r.Stack, b.stack) {
						j = int(k)
						break
					}
				}
				if j < 0 {
					j = len(recs)
					recs = append(recs, Record{
						Stack: b.stack, TypeName: b.typeName, Labels: b.labels,
						Size: b.size, MeanBytes: b.mean, Overflow: b.overflow,
					})
					next := int32(-1)
					if ok {
						next = first
					}
					chain = append(chain, next)
					byHash[ch] = int32(j)
				}
				r := &recs[j]
				r.AllocSamples += b.allocN
				r.AllocTail += b.allocTail
				r.AllocBytes += b.allocB
				r.InuseSamples += b.inuseN
				r.InuseBytes += b.inuseB
				if b.overflow {
					r.AllocObjects += b.allocO
					r.InuseObjects += b.inuseO
				}
				if fold && b.span && b.inuseN == 0 {
					folds = append(folds, spanFold{b: b, shard: int32(i), rec: int32(j), allocN: b.allocN})
				}
			}
		}
		sh.mu.Unlock()
	}
	if len(folds) > 0 {
		p.foldSpans(folds, recs)
		clear(folds)
	}
	mem.folds = folds[:0]
	for i := range recs {
		r := &recs[i]
		if !r.Overflow {
			r.AllocObjects = r.AllocBytes / float64(r.Size)
			r.InuseObjects = r.InuseBytes / float64(r.Size)
		}
	}
	p.typelessMu.Lock()
	for _, b := range p.typeless {
		recs = append(recs, Record{
			TypeName: b.typeName, Size: b.size, MeanBytes: b.mean, Overflow: true,
			AllocSamples: b.allocN, AllocTail: b.allocTail, AllocBytes: b.allocB, AllocObjects: b.allocO,
			InuseSamples: b.inuseN, InuseBytes: b.inuseB, InuseObjects: b.inuseO,
		})
	}
	p.typelessMu.Unlock()
	mem.idx = collectorSortRecords(recs, mem.idx)
	end := time.Now()
	if t := p.stopTime.Load(); t != nil {
		end = *t
	}
	mean := samplingstate.Current().MeanBytes
	if mean == 0 {
		mean = hooks.MeanBytes()
	}
	inForce, _, complete := samplingstate.MeansSince(p.epoch)
	meanLast := mem.meanLast
	if meanLast == nil {
		meanLast = make(map[int64]uint64, len(inForce))
	} else {
		clear(meanLast)
	}
	for _, m := range inForce {
		meanLast[m.MeanBytes] = m.LastEpoch
	}
	means := windowMeans(meanLast, 0, recs, mem)
	mem.recs, mem.byHash, mem.chain, mem.meanLast = recs, byHash, chain, meanLast
	*snap = Snapshot{
		Start:           p.start,
		End:             end,
		MeanBytes:       mean,
		Window:          estimate.WindowEnd,
		Means:           means,
		InUseMeans:      means,
		MeansIncomplete: !complete,
		Records:         recs,
		Stats:           p.Stats(),
		owner:           p.id,
		cumulative:      true,
		seq:             seq,
		epoch:           epoch,
		meanLast:        meanLast,
		mem:             mem,
	}
	return snap
}

// windowMeans returns, sorted, the means of meanLast whose last epoch is
// at least since, and the means of the records with events allocated in
// the window, in mem's means (and with its set).
func windowMeans(meanLast map[int64]uint64, since uint64, recs []Record, mem *snapshotMem) []int64 {
	set := mem.set
	if set == nil {
		set = make(map[int64]bool, len(meanLast)+2)
		mem.set = set
	} else {
		clear(set)
	}
	for m, e := range meanLast {
		if e >= since {
			set[m] = true
		}
	}
	for i := range recs {
		if recs[i].AllocSamples > 0 {
			set[recs[i].MeanBytes] = true
		}
	}
	out := mem.means[:0]
	for m := range set {
		out = append(out, m)
	}
	slices.Sort(out)
	mem.means = out
	return out
}

// collectorSortRecords orders records deterministically: by decreasing
// estimated bytes, then by key. Keys are unique, so the order is total. It
// sorts indices and then moves each record once, in place: records are
// large, and a sort of the records themselves spent most of a
// 100,000-record snapshot copying them. idx is scratch, returned grown to
// the records' number.
func collectorSortRecords(recs []Record, idx []int32) []int32 {
	idx = slices.Grow(idx[:0], len(recs))[:len(recs)]
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(i, j int32) int { return collectorCompare(&recs[i], &recs[j]) })
	// Position k takes the record at idx[k]: follow each cycle of the
	// permutation, marking the positions filled.
	for k := range idx {
		if idx[k] == int32(k) {
			continue
		}
		tmp := recs[k]
		j := k
		for {
			src := int(idx[j])
			idx[j] = int32(j)
			if src == k {
				recs[j] = tmp
				break
			}
			recs[j] = recs[src]
			j = src
		}
	}
	return idx
}

func collectorCompare(a, b *Record) int {
	switch {
	case a.AllocBytes > b.AllocBytes:
		return -1
	case a.AllocBytes < b.AllocBytes:
		return 1
	}
	if c := slices.Compare(a.Stack, b.Stack); c != 0 {
		return c
	}
	if a.TypeName != b.TypeName {
		if a.TypeName < b.TypeName {
			return -1
		}
		return 1
	}
	if a.Size != b.Size {
		return int(min(max(a.Size-b.Size, -1), 1))
	}
	if a.MeanBytes != b.MeanBytes {
		return int(min(max(a.MeanBytes-b.MeanBytes, -1), 1))
	}
	if a.Labels.Key() != b.Labels.Key() {
		if a.Labels.Key() < b.Labels.Key() {
			return -1
		}
		return 1
	}
	switch {
	case a.Overflow == b.Overflow:
		return 0
	case a.Overflow:
		return 1
	}
	return -1
}

// errSnapshotMismatch is returned by [Delta] for snapshots that do not come
// from the same profiler in the right order.
var errSnapshotMismatch = errors.New("profiler: snapshots are not two cumulative snapshots of one profiler in order")

// Delta returns the snapshot of the window between prev and cur, two
// cumulative snapshots of the same profiler, prev taken first. Alloc values
// and raw sums are differences; in-use values are cur's (absolute: what is
// live at the end of the window). Records with nothing allocated in the
// window and nothing live are left out. The window is marked WindowBoth.
// A span ID's record that shrank or left between the two (its buckets
// folded into its site's by [Profiler.Deltas]) gives what it lost back to
// its site's record without the span ID, which gained it in the fold, so
// that each event of the window counts once.
// prev == nil returns cur itself (the window since Start). It returns an
// error if prev and cur are not two cumulative snapshots (from
// [Profiler.Snapshot]) of one profiler, prev taken first.
func Delta(prev, cur *Snapshot) (*Snapshot, error) { return deltaInto(nil, prev, cur) }

// deltaReuse returns what [Delta] returns, in the memory of old, a delta
// (or snapshot) the caller no longer uses (nil: none). old must not be
// used afterwards; it is emptied. old is ignored when it is prev or cur.
// As with Delta, prev == nil returns cur itself. The result shares memory
// with cur: reuse cur (with snapshot) only once the result is no longer
// used.
func deltaReuse(old, prev, cur *Snapshot) (*Snapshot, error) {
	if old == prev || old == cur {
		old = nil
	}
	return deltaInto(old, prev, cur)
}

// deltaInto is Delta in the memory of old (nil: fresh memory).
func deltaInto(old, prev, cur *Snapshot) (*Snapshot, error) {
	if cur == nil {
		return nil, errors.New("profiler: Delta of a nil snapshot")
	}
	if prev == nil {
		return cur, nil
	}
	if !prev.cumulative || !cur.cumulative || prev.owner != cur.owner || prev.seq > cur.seq {
		return nil, errSnapshotMismatch
	}
	mem := takeMem(old)
	// The records of prev by hash: byHash holds the first of each hash,
	// chain the next, as in Snapshot.
	byHash := mem.byHash
	if byHash == nil {
		byHash = make(map[uint64]int32, len(prev.Records))
	} else {
		clear(byHash)
	}
	chain := slices.Grow(mem.chain[:0], len(prev.Records))[:len(prev.Records)]
	// Filled from the last record, so that each chain lists its records in
	// order, as the per-hash lists of index this replaced did.
	for i := len(prev.Records) - 1; i >= 0; i-- {
		h := collectorRecordHash(&prev.Records[i])
		next, ok := byHash[h]
		if !ok {
			next = -1
		}
		chain[i] = next
		byHash[h] = int32(i)
	}
	mem.byHash, mem.chain = byHash, chain
	// used marks the records of prev that cur has; moved collects what
	// span records lost to a fold (see foldSpan), which their twins
	// gained.
	used := slices.Grow(mem.used[:0], len(prev.Records))[:len(prev.Records)]
	clear(used)
	mem.used = used
	var moved []Record
	out := slices.Grow(mem.recs[:0], len(cur.Records))
	for _, r := range cur.Records {
		h := collectorRecordHash(&r)
		first, ok := byHash[h]
		for i := first; ok && i >= 0; i = chain[i] {
			q := &prev.Records[i]
			if collectorSameKey(q, &r) {
				used[i] = true
				if q.folded {
					// Folded whole after prev read it: r is new
					// since, and the twin has q's sums.
					moved = append(moved, *q)
					break
				}
				r.AllocSamples -= q.AllocSamples
				r.AllocTail -= q.AllocTail
				if (r.AllocSamples < 0 || r.AllocTail < 0) && isSpanRecord(&r) {
					// Some of its buckets were folded: the twin
					// has their sums, and gives back the loss.
					moved = append(moved, Record{Labels: r.Labels, Stack: r.Stack, TypeName: r.TypeName, Size: r.Size, MeanBytes: r.MeanBytes,
						AllocSamples: -r.AllocSamples, AllocTail: -r.AllocTail,
						AllocBytes: q.AllocBytes - r.AllocBytes, AllocObjects: q.AllocObjects - r.AllocObjects})
					r.AllocSamples, r.AllocTail = 0, 0
				}
				r.AllocBytes = math.Max(0, r.AllocBytes-q.AllocBytes)
				r.AllocObjects = math.Max(0, r.AllocObjects-q.AllocObjects)
				break
			}
		}
		if r.AllocSamples < 0 || r.AllocTail < 0 {
			return nil, errSnapshotMismatch
		}
		if r.AllocSamples == 0 {
			r.AllocBytes, r.AllocObjects = 0, 0
			if r.InuseSamples == 0 {
				continue
			}
		}
		r.folded = false // cur's: of no meaning in a delta
		out = append(out, r)
	}
	for i := range prev.Records {
		// Only a fold takes a record out of the cumulative snapshots.
		if q := &prev.Records[i]; !used[i] && q.AllocSamples > 0 && isSpanRecord(q) {
			moved = append(moved, *q)
		}
	}
	if len(moved) > 0 {
		var err error
		if out, err = takeFromTwins(out, moved, mem); err != nil {
			return nil, err
		}
	}
	mem.recs = out
	mem.idx = collectorSortRecords(out, mem.idx)
	st := cur.Stats
	st.Events -= min(st.Events, prev.Stats.Events)
	st.Releases -= min(st.Releases, prev.Stats.Releases)
	st.OverflowEvents -= min(st.OverflowEvents, prev.Stats.OverflowEvents)
	st.TypelessEvents -= min(st.TypelessEvents, prev.Stats.TypelessEvents)
	st.Lost -= min(st.Lost, prev.Stats.Lost)
	st.Dropped -= min(st.Dropped, prev.Stats.Dropped)
	st.PoolGets -= min(st.PoolGets, prev.Stats.PoolGets)
	st.SpanIDsDropped -= min(st.SpanIDsDropped, prev.Stats.SpanIDsDropped)
	snap := old
	if snap == nil {
		snap = new(Snapshot)
	}
	*snap = Snapshot{
		Start:     prev.End,
		End:       cur.End,
		MeanBytes: cur.MeanBytes,
		Window:    estimate.WindowBoth,
		// The means in force after prev's records were read, as cur saw them.
		Means:           windowMeans(cur.meanLast, prev.epoch, out, mem),
		InUseMeans:      cur.InUseMeans,
		MeansIncomplete: cur.MeansIncomplete,
		Records:         out,
		Stats:           st,
		owner:           cur.owner,
		seq:             cur.seq,
		epoch:           cur.epoch,
		meanLast:        cur.meanLast,
		mem:             mem,
	}
	return snap, nil
}

// isSpanRecord reports whether a record's labels carry a span ID or a
// trace ID (requestLabels).
func isSpanRecord(r *Record) bool {
	return !r.Overflow && hasRequestLabel(r.Labels)
}

// takeFromTwins takes from the records of a delta, out, what the span
// records of moved lost between the two snapshots to folds: the same sums
// their twins (the records of their keys without the span ID) gained in
// the fold, so that the window counts each event once. Twins left with
// nothing are removed. It returns errSnapshotMismatch if a twin lacks
// them, which two cumulative snapshots of one profiler in order cannot
// give.
func takeFromTwins(out, moved []Record, mem *snapshotMem) ([]Record, error) {
	twins := mem.twins
	if twins == nil {
		twins = make(map[uint64]int32, len(out))
		mem.twins = twins
	} else {
		clear(twins)
	}
	for i := range out {
		if !out[i].Overflow && !isSpanRecord(&out[i]) {
			twins[collectorRecordHash(&out[i])] = int32(i) // keys are unique; a hash collision is checked below
		}
	}
	for _, m := range moved {
		m.Labels = withoutRequestLabels(m.Labels)
		j, ok := twins[collectorRecordHash(&m)]
		if !ok || !collectorSameKey(&out[j], &m) {
			j = -1
			for k := range out { // a hash collision: rare
				if collectorSameKey(&out[k], &m) {
					j = int32(k)
					break
				}
			}
			if j < 0 {
				return nil, errSnapshotMismatch
			}
		}
		t := &out[j]
		t.AllocSamples -= m.AllocSamples
		t.AllocTail -= m.AllocTail
		t.AllocBytes = math.Max(0, t.AllocBytes-m.AllocBytes)
		t.AllocObjects = math.Max(0, t.AllocObjects-m.AllocObjects)
		if t.AllocSamples < 0 || t.AllocTail < 0 {
			return nil, errSnapshotMismatch
		}
	}
	kept := out[:0]
	for _, r := range out {
		if r.AllocSamples == 0 {
			r.AllocBytes, r.AllocObjects = 0, 0
			if r.InuseSamples == 0 {
				continue
			}
		}
		kept = append(kept, r)
	}
	clear(out[len(kept):])
	return kept, nil
}

func collectorRecordHash(r *Record) uint64 {
	e := hooks.Event{Stack: r.Stack, TypeName: r.TypeName, Labels: r.Labels, Size: r.Size, MeanBytes: r.MeanBytes}
	h := collectorHash(&e)
	if r.Overflow {
		h = ^h
	}
	return h
}

func collectorSameKey(a, b *Record) bool {
	return a.Overflow == b.Overflow && a.Size == b.Size && a.MeanBytes == b.MeanBytes &&
		a.TypeName == b.TypeName && a.Labels.Key() == b.Labels.Key() && slices.Equal(a.Stack, b.Stack)
}
