package export

import (
	"bytes"
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
	for _, smp := range arena.Sample {
		smp.Label = withLabel(smp.Label, pprofmt.LabelMemory, pprofmt.MemoryArena)
	}
	h, err := goheap.Convert(heap)
	if err != nil {
		return nil, fmt.Errorf("export: the runtime's allocs profile: %w", err)
	}
	h.DefaultSampleType = arena.DefaultSampleType
	h.Period = arena.Period
	h.Comments = nil
	m, err := profile.Merge([]*profile.Profile{arena, h})
	if err != nil {
		return nil, fmt.Errorf("export: combining the arena and heap profiles: %w", err)
	}
	m.Comments = append(m.Comments, fmt.Sprintf("arenaprof memory: arena samples (memory=arena) and the Go heap's allocs profile at MemProfileRate %d (memory=heap)", heap.Period))
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
