package profiler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/testkit/simalloc"
)

// TestSpanIDsPerWindow runs 300 windows of Deltas, each with 8 requests
// of new span IDs (3 sampled objects each, two span names; 100 in one
// window), one request in 10 living 3 windows with objects live
// throughout, with a bucket bound of 256 (64 span buckets): every window's
// delta carries the span IDs of its own events and no other's, none is
// dropped but past the 64 of the window of 100, the buckets stay
// bounded, and the totals are exact: in every window, over every 7
// windows through Delta of cumulative snapshots (a reader whose windows
// span folds), and in the last cumulative snapshot. The requests carry a
// trace_id too: it goes with span_id, past the bound and when folded.
// Deterministic (mean 1: every allocation is sampled).
func TestSpanIDsPerWindow(t *testing.T) {
	setMeanBytes(t, 1)
	p := startCollector(t, WithMaxBuckets(256))
	next := p.Deltas()
	type long struct {
		a    *simalloc.Arena
		id   string
		born int // its window
	}
	var longs []*long
	var seed uint64
	var total, sinceSnap int64
	snap := p.Snapshot()
	const windows = 300
	for w := range windows {
		want := map[string]int64{} // span ID: samples in this window
		n := 8
		if w == 150 {
			n = 100 // past the 64 span buckets: 36 requests lose their span ID
		}
		var events int64
		for i := range n {
			id := fmt.Sprintf("%08x%08x", w, i)
			name := []string{"GET /a", "GET /b"}[i%2]
			seed++
			a := newCollectorTestArena(t, seed, hooks.NewLabels("span_id", id, "span_name", name, "trace_id", id+id))
			for range 3 {
				collectorAllocSized(a, 32)
			}
			events += 3
			if i < 64 {
				want[id] += 3
			}
			if i == 0 && w%10 == 0 {
				longs = append(longs, &long{a: a, id: id, born: w})
				continue
			}
			a.Reset()
		}
		for _, l := range longs {
			if w == l.born+1 || w == l.born+2 { // one more object each window, released in the third
				collectorAllocSized(l.a, 32)
				want[l.id]++
				events++
				if w == l.born+2 {
					l.a.Reset()
				}
			}
		}
		total += events
		sinceSnap += events
		d := next()
		got := map[string]int64{}
		var samples int64
		var bytes float64
		for _, r := range d.Records {
			samples += r.AllocSamples
			bytes += r.AllocBytes
			if id, ok := r.Labels.Get("span_id"); ok && r.AllocSamples > 0 {
				got[id] += r.AllocSamples
			}
			// The trace ID goes and stays with the span ID.
			id, hasSpan := r.Labels.Get("span_id")
			tid, hasTrace := r.Labels.Get("trace_id")
			if hasSpan != hasTrace || tid != id+id {
				t.Fatalf("window %d: record labels %v: want span_id and trace_id together or neither", w, r.Labels)
			}
		}
		for id, n := range want {
			if got[id] != n {
				t.Fatalf("window %d: span %s has %d samples, want %d", w, id, got[id], n)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("window %d: %d span IDs, want %d: %v", w, len(got), len(want), got)
		}
		// Each 32-byte event at mean 1 weighs 32 bytes (estimate.WeightedBytes).
		if samples != events || math.Abs(bytes-32*float64(events)) > 1e-6*bytes {
			t.Fatalf("window %d: %d samples, %.1f bytes, want %d and %d", w, samples, bytes, events, 32*events)
		}
		// The twins, one per span name in each shard the arenas fell in,
		// and the live requests' span buckets.
		dropped := uint64(0)
		if w == 150 {
			dropped = 36 * 3
		}
		if st := d.Stats; st.SpanIDsDropped != dropped || st.Buckets > 2*collectorShards+64 || st.OverflowEvents != 0 {
			t.Fatalf("window %d: stats %+v: want %d span IDs dropped, at most %d buckets, no overflow", w, st, dropped, 2*collectorShards+64)
		}
		if w%7 == 6 {
			cur := p.Snapshot()
			dd, err := Delta(snap, cur)
			if err != nil {
				t.Fatalf("window %d: %v", w, err)
			}
			if s := collectorSum(dd); s.samples != sinceSnap || math.Abs(s.bytes-32*float64(sinceSnap)) > 1e-6*s.bytes {
				t.Fatalf("window %d: Delta of cumulative snapshots over 7 windows: %d samples, %.1f bytes, want %d", w, s.samples, s.bytes, sinceSnap)
			}
			snap, sinceSnap = cur, 0
		}
	}
	s := p.Snapshot()
	if sum := collectorSum(s); sum.samples != total || sum.inuseN != 0 {
		t.Errorf("cumulative: %d samples, %d live, want %d and 0", sum.samples, sum.inuseN, total)
	}
	// A site per span name, and the long requests' later objects' site.
	if len(s.Records) != 3 {
		t.Errorf("cumulative: %d records after %d windows of new span IDs, want 3 (two sites, two span names)", len(s.Records), windows)
	}
}

// TestDeltaSpanPartlyFolded takes a span's objects from two arenas of
// different shards at one site, releases one and keeps the other's live:
// Deltas folds neither (the span's record holds a live object), and when
// one is folded all the same (as a bucket that took an event between a
// snapshot's read and its fold may be left out), so that the span's
// record shrinks between two cumulative snapshots, Delta of them counts
// the window's one event once, under the site without the span ID.
func TestDeltaSpanPartlyFolded(t *testing.T) {
	setMeanBytes(t, 1)
	p := startCollector(t)
	labels := hooks.NewLabels("span_id", "00000000000000aa", "span_name", "GET /x")
	a := newCollectorTestArena(t, 1, labels)
	b := newCollectorTestArena(t, 2, labels)
	for seed := uint64(3); collectorShardOf(a.ID()) == collectorShardOf(b.ID()); seed++ {
		b = newCollectorTestArena(t, seed, labels)
	}
	// All objects from one line: one site.
	var s0 *Snapshot
	for i, step := range [][]*simalloc.Arena{{a, a, a, b, b}, {b}} {
		if i == 1 {
			a.Reset()
			s0 = p.Snapshot()
			p.Deltas()
			if st := p.Stats(); st.SpanBuckets != 2 {
				t.Fatalf("%d span buckets after Deltas, want 2: b's objects are live", st.SpanBuckets)
			}
			sh := &p.shards[collectorShardOf(a.ID())]
			sh.mu.Lock()
		walk:
			for _, head := range sh.buckets {
				for x := head; x != nil; x = x.next {
					if x.span {
						p.foldSpan(sh, x) // a's bucket
						break walk
					}
				}
			}
			sh.mu.Unlock()
		}
		for _, x := range step {
			collectorAllocSized(x, 32)
		}
	}
	b.Reset()
	s1 := p.Snapshot()
	d, err := Delta(s0, s1)
	if err != nil {
		t.Fatal(err)
	}
	var withID int64
	for _, r := range d.Records {
		if _, ok := r.Labels.Get("span_id"); ok {
			withID += r.AllocSamples
		}
	}
	if s := collectorSum(d); s.samples != 1 || s.bytes != 32 || withID != 0 {
		t.Errorf("delta: %d samples (%d with the span ID), %.1f bytes, want 1 sample of 32 bytes, under the site", s.samples, withID, s.bytes)
	}
	if s := collectorSum(s1); s.samples != 6 {
		t.Errorf("cumulative: %d samples, want 6", s.samples)
	}
}

// spanTestAlloc allocates one 32-byte object in a at one of two sites.
func spanTestAlloc(a *simalloc.Arena, site int) {
	if site == 0 {
		collectorAllocSized(a, 32)
	} else {
		collectorAllocSized(a, 32)
	}
}

// TestSpanFoldsRandom runs 200 windows of Deltas over requests drawn at
// random (seeded): new spans each window, 1 to 3 arenas each (in shards
// of their own, mostly), living up to 4 windows, some reset and used
// again, objects at two sites; and snapshots taken between at random by a
// second reader. Every window of Deltas gives each span ID exactly its
// own samples of the window, and every Delta of two of the reader's
// snapshots, whatever folds happened between, exactly the samples taken
// between them. Deterministic (mean 1, fixed seeds).
func TestSpanFoldsRandom(t *testing.T) {
	setMeanBytes(t, 1)
	p := startCollector(t, WithMaxBuckets(4096))
	rng := rand.New(rand.NewPCG(45, 1))
	next := p.Deltas()
	type span struct {
		id     string
		arenas []*simalloc.Arena
		left   int
	}
	var live []*span
	var seed uint64
	var events int64
	snaps := []*Snapshot{p.Snapshot()}
	at := []int64{0}
	for w := range 200 {
		for i := range rng.IntN(6) {
			s := &span{id: fmt.Sprintf("%08x%08x", w, i), left: rng.IntN(4)}
			labels := hooks.NewLabels("span_id", s.id, "span_name", "GET /r", "trace_id", s.id+s.id)
			for range 1 + rng.IntN(3) {
				seed++
				s.arenas = append(s.arenas, newCollectorTestArena(t, seed, labels))
			}
			live = append(live, s)
		}
		want := map[string]int64{}
		kept := live[:0]
		for _, s := range live {
			for _, a := range s.arenas {
				for range rng.IntN(4) {
					spanTestAlloc(a, rng.IntN(2))
					want[s.id]++
					events++
				}
				if rng.IntN(5) == 0 {
					a.Reset() // used again later, under the same span
				}
			}
			if rng.IntN(3) == 0 {
				snaps, at = append(snaps, p.Snapshot()), append(at, events)
			}
			if s.left == 0 {
				for _, a := range s.arenas {
					a.Reset()
				}
				continue
			}
			s.left--
			kept = append(kept, s)
		}
		live = kept
		d := next()
		got := map[string]int64{}
		for _, r := range d.Records {
			if r.AllocSamples < 0 {
				t.Fatalf("window %d: record %+v", w, r)
			}
			if id, ok := r.Labels.Get("span_id"); ok && r.AllocSamples > 0 {
				got[id] += r.AllocSamples
			}
			// The trace ID goes and stays with the span ID.
			id, hasSpan := r.Labels.Get("span_id")
			tid, hasTrace := r.Labels.Get("trace_id")
			if hasSpan != hasTrace || tid != id+id {
				t.Fatalf("window %d: record labels %v: want span_id and trace_id together or neither", w, r.Labels)
			}
		}
		for id, n := range want {
			if n > 0 && got[id] != n {
				t.Fatalf("window %d: span %s has %d samples, want %d", w, id, got[id], n)
			}
		}
		for id, n := range got {
			if want[id] != n {
				t.Fatalf("window %d: span %s has %d samples, want %d", w, id, n, want[id])
			}
		}
	}
	for range 300 {
		i := rng.IntN(len(snaps))
		j := i + rng.IntN(len(snaps)-i)
		d, err := Delta(snaps[i], snaps[j])
		if err != nil {
			t.Fatal(err)
		}
		if s := collectorSum(d); s.samples != at[j]-at[i] || math.Abs(s.bytes-32*float64(at[j]-at[i])) > 1e-6*s.bytes {
			t.Fatalf("Delta of snapshots %d and %d: %d samples, %.1f bytes, want %d", i, j, s.samples, s.bytes, at[j]-at[i])
		}
	}
	if s := collectorSum(p.Snapshot()); s.samples != events {
		t.Errorf("cumulative: %d samples, want %d", s.samples, events)
	}
}

// BenchmarkDeltasSpans is one window of Profiler.Deltas with spans new
// spans (one sampled object each, one site, arenas released) and, beside
// them, 200 sites without span IDs: the window's cost with the folds of
// the window before (spans=0: none). ns/op and allocs/op are per window.
func BenchmarkDeltasSpans(b *testing.B) {
	for _, spans := range []int{0, 100, 1000} {
		b.Run(fmt.Sprintf("spans=%d", spans), func(b *testing.B) {
			setMeanBytes(b, 1)
			p := startCollector(b)
			plain := newCollectorTestArena(b, 1, hooks.NewLabels("span_name", "GET /x"))
			for size := range int64(200) {
				collectorAllocSized(plain, 8*(size+1))
			}
			arenas := make([]*simalloc.Arena, spans)
			for i := range arenas {
				arenas[i] = newCollectorTestArena(b, uint64(2+i), hooks.Labels{})
			}
			next := p.Deltas()
			window := func(w int) {
				for i, a := range arenas {
					*a = *newCollectorTestArena(b, uint64(2+i), hooks.NewLabels("span_id", fmt.Sprintf("%08x%08x", w, i), "span_name", "GET /x"))
					collectorAllocSized(a, 32)
					a.Reset()
				}
			}
			for w := range 3 {
				window(w)
				next()
			}
			b.ReportAllocs()
			w := 3
			for b.Loop() {
				b.StopTimer()
				window(w)
				w++
				b.StartTimer()
				next()
			}
		})
	}
}
