package main

import (
	"strings"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/report"
)

// checkGrouping refuses to group an unsymbolized profile (a legacy text
// heap profile, or one of raw addresses) by function or stack: its rows
// would be raw addresses. The error names go tool pprof -proto as the fix.
func checkGrouping(src string, p *profile.Profile, by report.GroupBy) error {
	if by != "func" && by != "stack" {
		return nil
	}
	if err := pprofmt.CheckSymbolized(p); err != nil {
		return topInputErr("%s: %s", src, strings.TrimPrefix(err.Error(), "report: "))
	}
	return nil
}

// holdsGoHeap reports whether p holds Go heap memory: a heap or allocs
// profile of the runtime, or an arenaprof profile with Go heap samples (a
// combined memory profile, or a heap upload of the agent). Go heap samples
// record no types, so such a profile is grouped by function by default.
func holdsGoHeap(p *profile.Profile) bool {
	if goHeap, _ := pprofmt.CheckSampledMemory(p); goHeap {
		return true
	}
	for _, s := range p.Sample {
		if v := s.Label[pprofmt.LabelMemory]; len(v) > 0 && v[0] == pprofmt.MemoryHeap {
			return true
		}
	}
	return false
}
