package report

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/goheap"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// Merge merges compatible profiles with [profile.Merge]: values add up, and
// the window marking becomes the union of the parts' markings (a part
// without one counts as "both"; see the package documentation,
// Intervals). The parts must come from independent sampling streams or
// disjoint windows, as the windows of one process's agent do.
//
// Go heap samples (of runtime/pprof heap profiles, or of arenaprof's heap
// uploads) carry values scaled and truncated by the runtime, from which a
// reader recovers how many objects were sampled; a sum of many parts sums
// their truncations too, past what a reader can undo. So when a part holds
// Go heap samples, Merge recovers each part's raw counts before adding
// them up, and the merged profile keeps them as four more sample types
// (heap_alloc_samples, heap_alloc_samples_hi, heap_inuse_samples,
// heap_inuse_samples_hi: bounds on the raw counts of allocated and in-use
// objects), which merge exactly: the merge of N copies of a profile reads
// as one profile whose raw counts are N times its own. The parts are not
// modified.
//
// The arenas handed out in each part's window (the pool_gets comment each
// arena profile carries, see [DiffOptions].Per) add up: the merged
// profile keeps every part's comment when every part has one, and none
// otherwise (nor when two parts share a window, whose equal comments
// profile.Merge would keep once), so that a merge is never read as
// serving the requests of only some of its parts.
func Merge(ps ...*profile.Profile) (*profile.Profile, error) {
	if len(ps) == 0 {
		return nil, errors.New("report: no profiles to merge")
	}
	var w estimate.Window
	raw, gets, nGets := false, true, 0
	for _, p := range ps {
		if p == nil {
			return nil, errors.New("report: nil profile")
		}
		w |= pprofmt.WindowOf(p)
		if _, _, found, _ := pprofmt.PoolGetsOf(p); !found {
			gets = false
		}
		nGets += countPrefixed(p.Comments, pprofmt.PoolGetsCommentPrefix)
		raw = raw || pprofmt.HasHeapRaw(p)
	}
	if !raw {
		for _, p := range ps {
			if raw = needsHeapRaw(p); raw {
				break
			}
		}
	}
	if raw {
		parts := make([]*profile.Profile, len(ps))
		for i, p := range ps {
			q, err := withHeapRaw(p)
			if err != nil {
				return nil, fmt.Errorf("report: profile %d of %d: %w", i+1, len(ps), err)
			}
			parts[i] = q
		}
		ps = parts
	}
	m, err := profile.Merge(ps)
	if err != nil {
		return nil, err
	}
	gets = gets && countPrefixed(m.Comments, pprofmt.PoolGetsCommentPrefix) == nGets
	cs := m.Comments[:0]
	for _, c := range m.Comments {
		if !strings.HasPrefix(c, pprofmt.WindowCommentPrefix) && (gets || !strings.HasPrefix(c, pprofmt.PoolGetsCommentPrefix)) {
			cs = append(cs, c)
		}
	}
	m.Comments = append(cs, pprofmt.WindowComment(w))
	return m, nil
}

// needsHeapRaw reports whether p holds Go heap samples whose raw counts a
// merge must keep: a runtime heap profile, or an arenaprof profile with a
// sample labeled memory=heap.
func needsHeapRaw(p *profile.Profile) bool {
	if pprofmt.IsGoHeap(p) {
		return true
	}
	for _, s := range p.Sample {
		if isHeapSample(s) {
			return true
		}
	}
	return false
}

// withHeapRaw returns p with the raw Go heap counts (see Merge): p itself
// if it has them or if it is no profile of sampled memory (profile.Merge
// then says why it does not merge), else a copy with them appended to its
// sample types and to each sample's values, sharing the rest with p. A Go heap sample's raw counts
// are recovered from its scaled values (goheap.RawCount at its
// MemProfileRate: the period of a runtime profile, the memprofilerate
// label of an arenaprof profile's sample), its allocated count taken from
// alloc_samples in an arenaprof profile, which records it; one whose
// values match no raw count is marked unreadable
// (pprofmt.HeapRawUnreadable), for the reader to refuse if it reads them.
func withHeapRaw(p *profile.Profile) (*profile.Profile, error) {
	if pprofmt.HasHeapRaw(p) {
		return p, nil
	}
	f, _ := pprofmt.Describe(p)
	if f.Kind != pprofmt.KindGoHeap && f.Kind != pprofmt.KindArena {
		return p, nil
	}
	if f.BadValues >= 0 {
		return nil, f.ValuesErr
	}
	// A shallow copy: new sample types, samples and values; the rest
	// (locations, labels) shared with p, which profile.Merge only reads.
	q := &profile.Profile{
		SampleType:        append(slices.Clip(p.SampleType), pprofmt.HeapRawSampleTypes()...),
		DefaultSampleType: p.DefaultSampleType,
		Sample:            make([]*profile.Sample, len(p.Sample)),
		Mapping:           p.Mapping, Location: p.Location, Function: p.Function,
		Comments: p.Comments, DocURL: p.DocURL, DropFrames: p.DropFrames, KeepFrames: p.KeepFrames,
		TimeNanos: p.TimeNanos, DurationNanos: p.DurationNanos, PeriodType: p.PeriodType, Period: p.Period,
	}
	samples := make([]profile.Sample, len(p.Sample))
	for i, s := range p.Sample {
		var r [pprofmt.NumHeapRawTypes]int64
		if f.Kind == pprofmt.KindGoHeap || isHeapSample(s) {
			r = heapRawCounts(s, f)
		}
		samples[i] = *s
		samples[i].Value = append(slices.Clip(s.Value), r[:]...)
		q.Sample[i] = &samples[i]
	}
	return q, nil
}

// heapRawCounts recovers the raw counts of Go heap sample s of a profile
// whose facts are f, by pprofmt.IndexHeapAllocRaw ...
func heapRawCounts(s *profile.Sample, f *pprofmt.Facts) (r [pprofmt.NumHeapRawTypes]int64) {
	rate := f.Period
	if l := s.NumLabel[pprofmt.LabelHeapRate]; len(l) > 0 {
		rate = l[0]
	}
	size, _ := firstNumLabel(s, pprofmt.LabelBytes)
	count := func(objects, bytes int64) (lo, hi int64) {
		if rate <= 0 {
			return 0, pprofmt.HeapRawUnreadable
		}
		lo, hi, err := goheap.RawCount(objects, bytes, size, rate)
		if err != nil {
			return 0, pprofmt.HeapRawUnreadable
		}
		return lo, hi
	}
	v := s.Value
	if f.Kind == pprofmt.KindArena {
		c := v[f.Arena[pprofmt.IndexAllocSamples]]
		r[pprofmt.IndexHeapAllocRaw], r[pprofmt.IndexHeapAllocRawHi] = c, c
	} else {
		r[pprofmt.IndexHeapAllocRaw], r[pprofmt.IndexHeapAllocRawHi] = count(v[f.Heap[0]], v[f.Heap[1]])
	}
	r[pprofmt.IndexHeapInUseRaw], r[pprofmt.IndexHeapInUseRawHi] = count(v[f.Heap[2]], v[f.Heap[3]])
	return r
}

// countPrefixed returns the number of comments cs that start with prefix.
func countPrefixed(cs []string, prefix string) int {
	n := 0
	for _, c := range cs {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}
