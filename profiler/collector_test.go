package profiler

import (
	"fmt"
	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/pprofmt"

	"errors"
	"maps"
	"strconv"
	"sync"
	"testing"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/sampling"
	"github.com/arenaprof/arenaprof/internal/testkit/simalloc"
)

// newCollectorTestArena returns a seeded allocator that drives events
// through hooks as package arena does.
func newCollectorTestArena(t testing.TB, seed uint64, labels hooks.Labels) *simalloc.Arena {
	g, err := sampling.NewGapSamplerSeeded(0, seed, seed^0x5eed)
	if err != nil {
		t.Fatal(err)
	}
	return simalloc.New(g, labels)
}

func startCollector(t testing.TB, opts ...Option) *Profiler {
	t.Helper()
	p, err := Start(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

type collectorTotals struct {
	samples, tail, inuseN int64
	bytes, inuse          float64
}

func collectorSum(s *Snapshot) collectorTotals {
	var t collectorTotals
	for _, r := range s.Records {
		t.samples += r.AllocSamples
		t.tail += r.AllocTail
		t.bytes += r.AllocBytes
		t.inuseN += r.InuseSamples
		t.inuse += r.InuseBytes
	}
	return t
}

func collectorSiteA(a *simalloc.Arena, n int) {
	for range n {
		a.Alloc(16, "main.small")
	}
}

func collectorSiteB(a *simalloc.Arena, n int) {
	for range n {
		a.Alloc(96, "main.big")
	}
}

// With mean 1 every object is sampled at offset 0 and weighs its size, so
// every value is exact.
func TestCollectorAggregatesAndInuse(t *testing.T) {
	setMeanBytes(t, 1)
	p := startCollector(t)
	a := newCollectorTestArena(t, 1, hooks.NewLabels("handler", "x"))
	collectorSiteA(a, 100)
	collectorSiteB(a, 10)

	s := p.Snapshot()
	if len(s.Records) != 2 {
		t.Fatalf("got %d records, want 2: %+v", len(s.Records), s.Records)
	}
	want := map[string]struct{ n, size int64 }{"main.small": {100, 16}, "main.big": {10, 96}}
	for _, r := range s.Records {
		w := want[r.TypeName]
		if r.AllocSamples != w.n || r.AllocTail != w.n*w.size || r.AllocBytes != float64(w.n*w.size) ||
			r.AllocObjects != float64(w.n) || r.InuseSamples != w.n || r.InuseBytes != float64(w.n*w.size) ||
			r.InuseObjects != float64(w.n) || r.Size != w.size || r.MeanBytes != 1 || len(r.Stack) == 0 {
			t.Errorf("%s: %+v, want %d objects of %d bytes", r.TypeName, r, w.n, w.size)
		}
		if v, _ := r.Labels.Get("handler"); v != "x" {
			t.Errorf("%s: labels %v", r.TypeName, r.Labels)
		}
	}
	if s.Window != estimate.WindowEnd || !s.cumulative || s.MeanBytes != 1 {
		t.Errorf("window %v cumulative %v mean %d", s.Window, s.cumulative, s.MeanBytes)
	}

	a.Reset()
	s = p.Snapshot()
	if tot := collectorSum(s); tot.inuseN != 0 || tot.inuse != 0 || tot.samples != 110 {
		t.Errorf("after reset: %+v", tot)
	}
	// The arena keeps its identity after the release: new objects are live.
	collectorSiteA(a, 5)
	if tot := collectorSum(p.Snapshot()); tot.inuseN != 5 || tot.inuse != 80 || tot.samples != 115 {
		t.Errorf("after reuse: %+v", tot)
	}
	st := p.Stats()
	// Three buckets: the second call of collectorSiteA is another stack.
	if st.Events != 115 || st.Releases != 1 || st.Buckets != 3 || st.LiveArenas != 1 || st.OverflowEvents != 0 {
		t.Errorf("stats %+v", st)
	}

	p.Stop()
	p.Stop()
	collectorSiteA(a, 5)
	if tot := collectorSum(p.Snapshot()); tot.samples != 115 {
		t.Errorf("events after Stop were counted: %+v", tot)
	}
}

func TestCollectorOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  Option
	}{
		{"buckets 0", WithMaxBuckets(0)},
		{"buckets -5", WithMaxBuckets(-5)},
	} {
		if p, err := Start(tc.opt); err == nil {
			p.Stop()
			t.Errorf("%s: no error", tc.name)
		}
	}
	p := startCollector(t, nil, WithMaxBuckets(7))
	if p.Stats().MaxBuckets != 7 {
		t.Errorf("MaxBuckets = %d", p.Stats().MaxBuckets)
	}
}

//go:noinline
func collectorAllocSized(a *simalloc.Arena, size int64) { a.Alloc(size, "main.t") }

func TestCollectorBucketBound(t *testing.T) {
	setMeanBytes(t, 1)
	p := startCollector(t, WithMaxBuckets(3))
	a := newCollectorTestArena(t, 2, hooks.Labels{})
	var total int64
	for size := int64(8); size <= 80; size += 8 { // 10 distinct buckets
		for range 3 {
			collectorAllocSized(a, size)
			total += size
		}
	}
	st := p.Stats()
	if st.Buckets != 3 || st.OverflowEvents != 7*3 || st.OverflowBuckets != 1 || st.Events != 30 {
		t.Errorf("stats %+v", st)
	}
	s := p.Snapshot()
	tot := collectorSum(s)
	if tot.samples != 30 || tot.bytes != float64(total) || tot.inuse != float64(total) {
		t.Errorf("totals %+v, want 30 samples and %d bytes", tot, total)
	}
	var over *Record
	for i := range s.Records {
		if s.Records[i].Overflow {
			over = &s.Records[i]
		}
	}
	if over == nil || over.Size != 0 || over.Stack != nil || over.AllocSamples != 21 || over.TypeName != "main.t" {
		t.Fatalf("overflow record %+v", over)
	}
	wantObj := 21.0
	if over.AllocObjects != wantObj || over.InuseObjects != wantObj {
		t.Errorf("overflow objects %v / %v, want %v", over.AllocObjects, over.InuseObjects, wantObj)
	}
	a.Reset()
	if tot := collectorSum(p.Snapshot()); tot.inuseN != 0 || tot.inuse != 0 {
		t.Errorf("after reset %+v", tot)
	}
}

func TestCollectorDelta(t *testing.T) {
	setMeanBytes(t, 1)
	p := startCollector(t)
	a := newCollectorTestArena(t, 3, hooks.Labels{})
	b := newCollectorTestArena(t, 4, hooks.Labels{})
	collectorSiteB(b, 4)
	var s1, s2 *Snapshot
	for i, n := range []int{40, 10} {
		collectorSiteA(a, n) // one stack for both halves
		if i == 0 {
			s1 = p.Snapshot()
			b.Reset()
		}
	}
	s2 = p.Snapshot()

	d, err := Delta(s1, s2)
	if err != nil {
		t.Fatal(err)
	}
	if d.Window != estimate.WindowBoth || d.cumulative || !d.Start.Equal(s1.End) || !d.End.Equal(s2.End) {
		t.Errorf("delta header %+v", d)
	}
	// Site B allocated nothing in the window and has nothing live: gone.
	if len(d.Records) != 1 {
		t.Fatalf("delta records %+v", d.Records)
	}
	r := d.Records[0]
	if r.TypeName != "main.small" || r.AllocSamples != 10 || r.AllocBytes != 160 || r.AllocObjects != 10 ||
		r.InuseSamples != 50 || r.InuseBytes != 800 {
		t.Errorf("delta record %+v", r)
	}
	if d.Stats.Events != 10 || d.Stats.Releases != 1 {
		t.Errorf("delta stats %+v", d.Stats)
	}
	if same, err := Delta(nil, s2); err != nil || same != s2 {
		t.Errorf("Delta(nil, s) = %v, %v", same, err)
	}

	q := startCollector(t)
	for _, tc := range []struct {
		name      string
		prev, cur *Snapshot
	}{
		{"reversed", s2, s1},
		{"other profiler", q.Snapshot(), s2},
		{"delta as input", d, s2},
		{"nil cur", s1, nil},
	} {
		if _, err := Delta(tc.prev, tc.cur); err == nil {
			t.Errorf("%s: no error", tc.name)
		} else if tc.cur != nil && !errors.Is(err, errSnapshotMismatch) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// Many goroutines allocate, reset and snapshot at once; run with -race.
func TestCollectorConcurrent(t *testing.T) {
	setMeanBytes(t, 1)
	p := startCollector(t)
	workers, rounds, per := 16, 20, 50
	if testing.Short() {
		rounds = 5
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				p.Snapshot()
				p.Stats()
			}
		}
	}()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := newCollectorTestArena(t, uint64(w)+100, hooks.NewLabels("worker", string(rune('a'+w%4))))
			for range rounds {
				collectorSiteA(a, per)
				collectorSiteB(a, per/10)
				a.Reset()
			}
			collectorSiteA(a, 1) // one live object per worker
		}()
	}
	wg.Wait()
	close(stop)
	tot := collectorSum(p.Snapshot())
	wantN := int64(workers * (rounds*(per+per/10) + 1))
	if tot.samples != wantN || tot.inuseN != int64(workers) || tot.inuse != float64(16*workers) {
		t.Errorf("totals %+v, want %d samples and %d live", tot, wantN, workers)
	}
	// 4 label sets x 3 stacks; a site seen in several shards has a bucket
	// in each.
	if n := len(p.Snapshot().Records); n != 12 {
		t.Errorf("%d records, want 12", n)
	}
	if st := p.Stats(); st.Buckets < 12 || st.Buckets > 12*workers || st.LiveArenas != workers {
		t.Errorf("stats %+v", st)
	}
}

// With a larger mean, the weights are unbiased: the estimated bytes of a
// site lie inside its exact interval at 1-1e-6 confidence (so this check
// fails by chance with probability below 1e-6 per site).
func TestCollectorEstimateWithinInterval(t *testing.T) {
	setMeanBytes(t, 512)
	p := startCollector(t)
	a := newCollectorTestArena(t, 5, hooks.Labels{})
	collectorSiteA(a, 20000) // 320000 bytes
	collectorSiteB(a, 3000)  // 288000 bytes
	want := map[string]float64{"main.small": 320000, "main.big": 288000}
	for _, r := range p.Snapshot().Records {
		iv, err := estimate.SingleMeanInterval(r.AllocSamples, r.AllocTail, r.MeanBytes, 1-1e-6, estimate.WindowEnd)
		if err != nil {
			t.Fatal(err)
		}
		if w := want[r.TypeName]; w < iv.Lo || w > iv.Hi {
			t.Errorf("%s: true %v outside [%v, %v] (s=%d)", r.TypeName, w, iv.Lo, iv.Hi, r.AllocSamples)
		}
	}
}

// FuzzCollectorOptions checks that Start accepts exactly the documented
// range of its numeric option.
func FuzzCollectorOptions(f *testing.F) {
	for _, n := range []int{1, 5, 0, -1, defaultMaxBuckets, 1 << 30} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, buckets int) {
		p, err := Start(WithMaxBuckets(buckets))
		if (err == nil) != (buckets >= 1) {
			t.Fatalf("Start(buckets %d): err %v", buckets, err)
		}
		if err == nil {
			if p.Stats().MaxBuckets != buckets {
				t.Fatalf("buckets %d not applied", buckets)
			}
			p.Stop()
		}
	})
}

// TestBucketHardCap: with many types past both bounds, the profiler holds
// at most maxBuckets + max(1, maxBuckets/16) buckets plus one typeless per
// mean and shard, and every event is still counted (none dropped).
func TestBucketHardCap(t *testing.T) {
	const maxBuckets = 32
	setMeanBytes(t, 1)
	p, err := Start(WithMaxBuckets(maxBuckets))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	const events = 5000
	for i := range events {
		p.sampled(&hooks.Event{
			Arena:     uint64(i % 4),
			TypeName:  "t" + strconv.Itoa(i),
			Size:      8,
			Offset:    0,
			MeanBytes: 1,
		})
	}
	st := p.Stats()
	snap := p.Snapshot()
	typeless := 0
	var n int64
	for _, r := range snap.Records {
		n += r.AllocSamples
		if r.TypeName == pprofmt.TypelessTypeName {
			typeless++
		}
	}
	if limit := maxBuckets + max(1, maxBuckets/16) + 1; len(snap.Records) > limit || typeless != 1 || st.TypelessBuckets != 1 {
		t.Errorf("%d records (%d typeless), want at most %d", len(snap.Records), typeless, limit)
	}
	if n != events || st.Events != events || st.Dropped != 0 {
		t.Errorf("%d events in records, stats %+v", n, st)
	}
	if st.TypelessEvents != events-maxBuckets-uint64(max(1, maxBuckets/16)) {
		t.Errorf("typeless events %d", st.TypelessEvents)
	}
}

// TestCollectorStackHash feeds the collector events whose allocator gave a
// stack hash, and events without one: a stack's record is the same
// whichever hash found its bucket, and stacks that share a hash keep
// their own records.
func TestCollectorStackHash(t *testing.T) {
	setMeanBytes(t, 1)
	stackA := []uintptr{0x1000, 0x2000, 0x3000}
	stackB := []uintptr{0x1000, 0x2000, 0x4000}
	for _, c := range []struct {
		name   string
		events []hooks.Event
		want   map[uintptr]int64 // samples by the stack's last pc
	}{
		{"one stack, hash and none", []hooks.Event{
			{Stack: stackA, StackHash: 77}, {Stack: stackA}, {Stack: stackA, StackHash: 77}, {Stack: stackA, StackHash: 78},
		}, map[uintptr]int64{0x3000: 4}},
		{"two stacks, one hash", []hooks.Event{
			{Stack: stackA, StackHash: 77}, {Stack: stackB, StackHash: 77}, {Stack: stackB, StackHash: 77},
		}, map[uintptr]int64{0x3000: 1, 0x4000: 2}},
	} {
		p := startCollector(t)
		for i, e := range c.events {
			e.TypeName, e.Size, e.MeanBytes = "main.t", 16, 1
			e.Arena = uint64(1000 + i) // spread over shards
			hooks.Emit(&e)
		}
		p.Stop()
		got := map[uintptr]int64{}
		for _, r := range p.Snapshot().Records {
			if _, dup := got[r.Stack[len(r.Stack)-1]]; dup {
				t.Errorf("%s: two records of stack %x", c.name, r.Stack)
			}
			got[r.Stack[len(r.Stack)-1]] = r.AllocSamples
		}
		if !maps.Equal(got, c.want) {
			t.Errorf("%s: samples by stack %v, want %v", c.name, got, c.want)
		}
	}
}

// TestBucketGlobalCap checks the hard bound on all buckets: with many types
// and more means than typeless buckets, the profiler holds at most
// n + n/16 + maxTypelessMeans buckets, and the events past every bound are
// counted as lost (and dropped), never silently.
func TestBucketGlobalCap(t *testing.T) {
	const maxBuckets = 64
	setMeanBytes(t, 1)
	p, err := Start(WithMaxBuckets(maxBuckets))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	const events = 20000
	for i := range events {
		p.sampled(&hooks.Event{
			Arena:     uint64(i % 64),
			TypeName:  "t" + strconv.Itoa(i),
			Size:      8,
			MeanBytes: int64(1 + i%40), // 40 means: more than maxTypelessMeans
		})
	}
	st := p.Stats()
	snap := p.Snapshot()
	var n int64
	for _, r := range snap.Records {
		n += r.AllocSamples
	}
	if limit := maxBuckets + maxBuckets/16 + maxTypelessMeans; len(snap.Records) > limit || st.Buckets+st.OverflowBuckets+st.TypelessBuckets > limit {
		t.Errorf("%d records, stats %+v: above the bound %d", len(snap.Records), st, limit)
	}
	if st.TypelessBuckets != maxTypelessMeans || st.Lost == 0 || st.Dropped != st.Lost {
		t.Errorf("stats %+v: want %d typeless buckets and lost events counted as dropped", st, maxTypelessMeans)
	}
	if uint64(n)+st.Lost != events || st.Events != events-st.Lost {
		t.Errorf("%d events aggregated + %d lost, want %d; stats %+v", n, st.Lost, events, st)
	}
}

// TestCollectorSpanIDBound takes one sampled object under each of 100 span
// IDs with a bucket bound of 200: the first 50 span IDs (a quarter of the
// bound) get buckets of their own, the others lose their span_id label and
// keep span_name, and no byte is lost.
func TestCollectorSpanIDBound(t *testing.T) {
	setMeanBytes(t, 1)
	p := startCollector(t, WithMaxBuckets(200))
	for i := range 100 {
		a := newCollectorTestArena(t, uint64(1000+i), hooks.NewLabels("span_id", fmt.Sprintf("%016x", i), "span_name", "GET /x"))
		collectorAllocSized(a, 32)
	}
	st := p.Stats()
	if st.SpanBuckets != 50 || st.SpanIDsDropped != 50 || st.Events != 100 || st.OverflowEvents != 0 {
		t.Errorf("stats %+v, want 50 span buckets, 50 span IDs dropped, 100 events, no overflow", st)
	}
	s := p.Snapshot()
	withID, without := 0, int64(0)
	for _, r := range s.Records {
		if r.AllocSamples == 0 {
			continue // a mean's empty row
		}
		if name, _ := r.Labels.Get("span_name"); name != "GET /x" {
			t.Errorf("record %+v", r)
		}
		if _, ok := r.Labels.Get("span_id"); ok {
			withID++
		} else {
			without += r.AllocSamples
		}
	}
	if withID != 50 || without != 50 || collectorSum(s).samples != 100 {
		t.Errorf("%d records with a span ID, %d samples without, want 50 and 50", withID, without)
	}
}
