package export

import (
	"bytes"
	"fmt"
	"runtime/pprof"
	"slices"

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

// combineMemory merges an arena profile and a runtime heap profile into
// arena, as profile.Merge would merge them, without its copy of every
// sample (label maps and a string key each: about 30 MB for a full
// collector). The two profiles share no sample: arena samples get the label
// memory=arena, heap samples memory=heap. Their mappings and locations stay
// apart (a location belongs to its mapping, and the arena profile's has no
// address range); functions are shared by key, as Merge shares them.
func combineMemory(arena, heap *profile.Profile) (*profile.Profile, error) {
	h, err := goheap.Convert(heap)
	if err != nil {
		return nil, fmt.Errorf("export: the runtime's allocs profile: %w", err)
	}
	if !slices.EqualFunc(arena.SampleType, h.SampleType, func(a, b *profile.ValueType) bool { return a.Type == b.Type && a.Unit == b.Unit }) {
		return nil, fmt.Errorf("export: combining the arena and heap profiles: sample types %v and %v", arena.SampleType, h.SampleType)
	}
	// Samples share their label maps: one labelled copy per shared map.
	labelled := make(map[uintptr]map[string][]string)
	for _, smp := range arena.Sample {
		k := mapPointer(smp.Label)
		m, ok := labelled[k]
		if !ok {
			m = withLabel(smp.Label, pprofmt.LabelMemory, pprofmt.MemoryArena)
			labelled[k] = m
		}
		smp.Label = m
	}

	// The heap part's samples, and the mappings, locations and functions
	// they use, renumbered after the arena part's (unused ones left out, as
	// Merge leaves them out).
	funcs := make(map[functionKey]*profile.Function, len(arena.Function)+len(h.Function))
	for _, f := range arena.Function {
		funcs[keyOf(f)] = f
	}
	// The arena part's ids are unique but not 1..n (Build shares its
	// symbols between profiles): the heap part's come after the largest.
	var lastMap, lastLoc, lastFunc uint64
	for _, m := range arena.Mapping {
		lastMap = max(lastMap, m.ID)
	}
	for _, l := range arena.Location {
		lastLoc = max(lastLoc, l.ID)
	}
	for _, f := range arena.Function {
		lastFunc = max(lastFunc, f.ID)
	}
	seenMap := make(map[*profile.Mapping]bool, len(h.Mapping))
	seenLoc := make(map[*profile.Location]bool, len(h.Location))
	for _, smp := range h.Sample {
		if !slices.ContainsFunc(smp.Value, func(v int64) bool { return v != 0 }) {
			continue // as Merge drops samples whose values are all 0
		}
		for _, l := range smp.Location {
			if seenLoc[l] {
				continue
			}
			seenLoc[l] = true
			if m := l.Mapping; m != nil && !seenMap[m] {
				seenMap[m] = true
				lastMap++
				m.ID = lastMap
				arena.Mapping = append(arena.Mapping, m)
			}
			for i := range l.Line {
				f := l.Line[i].Function
				if f == nil {
					continue
				}
				shared, ok := funcs[keyOf(f)]
				if !ok {
					shared = f
					lastFunc++
					f.ID = lastFunc
					funcs[keyOf(f)] = f
					arena.Function = append(arena.Function, f)
				}
				l.Line[i].Function = shared
			}
			lastLoc++
			l.ID = lastLoc
			arena.Location = append(arena.Location, l)
		}
		arena.Sample = append(arena.Sample, smp)
	}
	// The header: the two parts cover one window side by side (not one
	// after the other, as the profiles Merge adds up), so the combined
	// profile spans from the earlier start to the later end. The period
	// stays the arena's mean and the comments the arena's: the heap's rate
	// is in the numeric label memprofilerate.
	arena.TimeNanos, arena.DurationNanos = spanOf(arena.TimeNanos, arena.DurationNanos, h.TimeNanos, h.DurationNanos)
	arena.Comments = append(arena.Comments, fmt.Sprintf("arenaprof memory: arena samples (memory=arena) and the Go heap's allocs profile at MemProfileRate %d (memory=heap)", heap.Period))
	for _, v := range pprofmt.GoVersionsOf(h) {
		arena.Comments = append(arena.Comments, pprofmt.GoVersionComment(v))
	}
	if err := arena.CheckValid(); err != nil {
		return nil, fmt.Errorf("export: combining the arena and heap profiles: %w", err)
	}
	return arena, nil
}

// spanOf returns the start and length of the smallest window holding the
// windows (t1, d1) and (t2, d2); a window with no start (0) adds nothing
// but its length when neither has one.
func spanOf(t1, d1, t2, d2 int64) (start, length int64) {
	switch {
	case t1 == 0 && t2 == 0:
		return 0, max(d1, d2)
	case t2 == 0:
		return t1, d1
	case t1 == 0:
		return t2, d2
	}
	start = min(t1, t2)
	return start, max(t1+d1, t2+d2) - start
}

// functionKey identifies a function as profile.Merge does.
type functionKey struct {
	startLine                  int64
	name, systemName, fileName string
}

func keyOf(f *profile.Function) functionKey {
	return functionKey{f.StartLine, f.Name, f.SystemName, f.Filename}
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
