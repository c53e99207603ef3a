package pprofmt

import "github.com/google/pprof/profile"

// The raw Go heap counts of a merged profile.
//
// runtime/pprof writes a Go heap sample's values scaled by the inverse of
// the sampling probability and truncated to integers, and a reader
// recovers the raw count of sampled objects from them
// (internal/goheap.RawCount), allowing for the truncation of the few
// records one sample may sum. A merge of many profiles sums as many
// truncations, one per profile, past any fixed allowance: 100 copies of
// one profile no longer match any raw count. So report.Merge recovers the
// raw counts of each part before it sums them, and keeps them as four
// more sample types: the bounds lo <= raw count <= hi of the allocated
// and of the in-use objects of each Go heap sample (0 for an arena
// sample). Counts add up exactly across a merge. A part whose values
// match no raw count (e.g. the negative in-use values of a delta profile)
// gets hi < lo, by far (HeapRawUnreadable), which no sum of readable
// parts undoes: a reader of those values refuses them, as it would the
// part's.
const (
	IndexHeapAllocRaw   = iota // heap_alloc_samples/count
	IndexHeapAllocRawHi        // heap_alloc_samples_hi/count
	IndexHeapInUseRaw          // heap_inuse_samples/count
	IndexHeapInUseRawHi        // heap_inuse_samples_hi/count
	NumHeapRawTypes
)

// HeapRawUnreadable is the hi of a raw count that could not be recovered
// (its lo is 0): the sum of fewer than 2^23 such parts stays in int64,
// and no sum of readable counts (each at most a few above lo) lifts hi
// back to lo.
const HeapRawUnreadable = -(1 << 40)

// HeapRawSampleTypes returns the sample types of the raw Go heap counts
// of a merged profile, in the order of their indexes.
func HeapRawSampleTypes() []*profile.ValueType {
	return []*profile.ValueType{
		{Type: "heap_alloc_samples", Unit: "count"},
		{Type: "heap_alloc_samples_hi", Unit: "count"},
		{Type: "heap_inuse_samples", Unit: "count"},
		{Type: "heap_inuse_samples_hi", Unit: "count"},
	}
}

// heapRawPositions returns the positions of the raw Go heap counts among
// p's sample types, and whether p has all four.
func heapRawPositions(p *profile.Profile) (pos [NumHeapRawTypes]int, ok bool) {
	for i := range pos {
		pos[i] = -1
	}
	n := 0
	for j, st := range p.SampleType {
		for i, want := range HeapRawSampleTypes() {
			if pos[i] < 0 && st.Type == want.Type && st.Unit == want.Unit {
				pos[i] = j
				n++
			}
		}
	}
	return pos, n == NumHeapRawTypes
}

// HasHeapRaw reports whether p carries the raw Go heap counts of a merge.
func HasHeapRaw(p *profile.Profile) bool {
	_, ok := heapRawPositions(p)
	return ok
}
