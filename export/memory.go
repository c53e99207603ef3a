package export

import (
	"bytes"
	"errors"
	"fmt"
	"runtime/pprof"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/goheap"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/profiler"
)

// BuildMemory returns one profile of all of a service's memory: the arena
// profile of s (see [Build]) and the Go runtime's allocs profile, with
// the same sample types. The string label "memory" tells the two apart
// ("arena" or "heap"), so that go tool pprof shows both in one flame graph
// (-tagfocus=memory=heap keeps one) and package report gives intervals for
// both.
//
// Go heap samples keep the runtime's scaled values; their alloc_samples
// hold the raw number of sampled objects (recovered from those values),
// their alloc_tail is 0 (the runtime does not record it), and the numeric
// label "memprofilerate" holds runtime.MemProfileRate. The heap part covers
// the whole life of the process up to its last garbage collection,
// whatever s's window.
func BuildMemory(s *profiler.Snapshot) (*profile.Profile, error) {
	arena, err := Build(s)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := pprof.Lookup("allocs").WriteTo(&buf, 0); err != nil {
		return nil, fmt.Errorf("export: the runtime's allocs profile: %w", err)
	}
	heap, err := profile.Parse(&buf)
	if err != nil {
		return nil, fmt.Errorf("export: the runtime's allocs profile: %w", err)
	}
	return combineMemory(arena, heap)
}

// combineMemory merges an arena profile and a runtime heap profile.
func combineMemory(arena, heap *profile.Profile) (*profile.Profile, error) {
	rate := heap.Period
	if rate <= 0 {
		return nil, errors.New("export: runtime.MemProfileRate is 0: the Go heap is not sampled")
	}
	for _, smp := range arena.Sample {
		smp.Label = withLabel(smp.Label, pprofmt.LabelMemory, pprofmt.MemoryArena)
	}
	idx := map[string]int{}
	for i, st := range heap.SampleType {
		idx[st.Type] = i
	}
	h := heap.Copy()
	h.SampleType = SampleTypes()
	h.DefaultSampleType = arena.DefaultSampleType
	h.PeriodType = arena.PeriodType
	h.Period = arena.Period
	h.Comments = nil
	for _, smp := range h.Sample {
		v := smp.Value
		ao, ab, io, ib := v[idx["alloc_objects"]], v[idx["alloc_space"]], v[idx["inuse_objects"]], v[idx["inuse_space"]]
		var size int64
		if l := smp.NumLabel[pprofmt.LabelBytes]; len(l) > 0 {
			size = l[0]
		}
		raw, _, err := goheap.RawCount(ao, ab, size, rate)
		if err != nil {
			return nil, fmt.Errorf("export: the runtime's allocs profile: %w", err)
		}
		smp.Value = []int64{ao, ab, io, ib, raw, 0}
		smp.Label = withLabel(smp.Label, pprofmt.LabelMemory, pprofmt.MemoryHeap)
		nl := make(map[string][]int64, len(smp.NumLabel)+1)
		for k, x := range smp.NumLabel {
			nl[k] = x
		}
		nl[pprofmt.LabelHeapRate] = []int64{rate}
		smp.NumLabel = nl
		nu := make(map[string][]string, len(smp.NumUnit)+1)
		for k, x := range smp.NumUnit {
			nu[k] = x
		}
		nu[pprofmt.LabelHeapRate] = []string{"bytes"}
		nu[pprofmt.LabelBytes] = []string{"bytes"}
		smp.NumUnit = nu
	}
	m, err := profile.Merge([]*profile.Profile{arena, h})
	if err != nil {
		return nil, fmt.Errorf("export: combining the arena and heap profiles: %w", err)
	}
	m.Comments = append(m.Comments, fmt.Sprintf("arenaprof memory: arena samples (memory=arena) and the Go heap's allocs profile at MemProfileRate %d (memory=heap)", rate))
	return m, nil
}

// withLabel returns a copy of labels with key set to value (samples may
// share their label maps).
func withLabel(labels map[string][]string, key, value string) map[string][]string {
	out := make(map[string][]string, len(labels)+1)
	for k, v := range labels {
		out[k] = v
	}
	out[key] = []string{value}
	return out
}
