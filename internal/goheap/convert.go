package goheap

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// Convert returns a Go runtime heap or allocs profile in arenaprof's
// format: the six sample types of an arena profile, Go's scaled values
// kept, the raw number of sampled objects in alloc_samples (recovered from
// the scaled values; alloc_tail is 0, the runtime does not record it), the
// label memory=heap and the numeric label memprofilerate on every sample.
// Raw counts are additive, so deltas and merges of converted profiles keep
// them exact. The comment "arenaprof go=VERSION" names this process's Go
// release (runtime.Version()), whose sampler rule the estimates need
// (Rule): heap must be this process's own profile. heap is not modified.
func Convert(heap *profile.Profile) (*profile.Profile, error) {
	rate := heap.Period
	if rate <= 0 {
		return nil, errors.New("runtime.MemProfileRate is 0: the Go heap is not sampled")
	}
	idx := map[string]int{}
	for i, st := range heap.SampleType {
		idx[st.Type] = i
	}
	for _, t := range []string{"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"} {
		if _, ok := idx[t]; !ok {
			return nil, fmt.Errorf("not a Go heap profile: no %s sample type", t)
		}
	}
	h := heap.Copy()
	if len(pprofmt.GoVersionsOf(h)) == 0 {
		h.Comments = append(h.Comments, pprofmt.GoVersionComment(runtime.Version()))
	}
	h.SampleType = pprofmt.SampleTypes()
	h.DefaultSampleType = "alloc_space"
	h.PeriodType = &profile.ValueType{Type: "space", Unit: "bytes"}
	for _, smp := range h.Sample {
		v := smp.Value
		ao, ab, io, ib := v[idx["alloc_objects"]], v[idx["alloc_space"]], v[idx["inuse_objects"]], v[idx["inuse_space"]]
		var size int64
		if l := smp.NumLabel[pprofmt.LabelBytes]; len(l) > 0 {
			size = l[0]
		}
		raw, _, err := RawCount(ao, ab, size, rate)
		if err != nil {
			return nil, err
		}
		smp.Value = []int64{ao, ab, io, ib, raw, 0}
		labels := make(map[string][]string, len(smp.Label)+1)
		for k, x := range smp.Label {
			labels[k] = x
		}
		labels[pprofmt.LabelMemory] = []string{pprofmt.MemoryHeap}
		smp.Label = labels
		nl := make(map[string][]int64, len(smp.NumLabel)+1)
		for k, x := range smp.NumLabel {
			nl[k] = x
		}
		nl[pprofmt.LabelHeapRate] = []int64{rate}
		smp.NumLabel = nl
		nu := make(map[string][]string, len(smp.NumUnit)+2)
		for k, x := range smp.NumUnit {
			nu[k] = x
		}
		nu[pprofmt.LabelHeapRate] = []string{"bytes"}
		if _, ok := nl[pprofmt.LabelBytes]; ok {
			nu[pprofmt.LabelBytes] = []string{"bytes"}
		}
		smp.NumUnit = nu
	}
	return h, nil
}
