package agent

import (
	"context"
	"fmt"
	"maps"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofenc"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/rss"
)

// RSSSource returns the resident-memory profile source, named "rss": at
// each interval's end, the profile [export.RSSHandler] serves (every
// resident byte of the process in one class, the Go heap's live objects
// by site with their raw counts of sampled objects, the arenas by site).
// It is a level, read at one moment, not a delta.
//
// Where /proc/self/smaps cannot be read, every sample carries the string
// label smaps="unread" as well as the profile's comment, since Pyroscope
// keeps labels and drops comments: a fleet read then tells those
// snapshots apart, whose classes do not sum to an RSS.
//
// Each read walks smaps and the runtime's heap profile: about 6 ms of
// CPU and 0.3 MiB allocated on a process of 10,000 goroutines and 500
// mappings, 14 ms and 2.1 MiB with the profile of 1,000 heap sites built
// (docs/rss.md, "Cost"), where the Go heap's upload allocates about
// 10 KiB; so arenaprof.Start uploads it only when Config.Profiles names
// "rss".
func RSSSource() Source { return rssSource{} }

type rssSource struct{}

func (rssSource) Name() string { return "rss" }

func (rssSource) Collect(context.Context) (*profile.Profile, error) {
	rd := rss.Read()
	p, err := rss.Profile(rd, rss.Classify(rd))
	if err != nil {
		return nil, fmt.Errorf("rss profile: %w", err)
	}
	if rd.SmapsErr != nil {
		markSmapsUnread(p)
	}
	return p, nil
}

// markSmapsUnread gives every sample the string label smaps="unread".
// The profile's label maps are shared between samples: each is copied.
func markSmapsUnread(p *profile.Profile) {
	for _, s := range p.Sample {
		m := maps.Clone(s.Label)
		if m == nil {
			m = map[string][]string{}
		}
		m[pprofmt.LabelSmaps] = []string{pprofmt.SmapsUnread}
		s.Label = m
	}
}

// isRSSProfile reports whether a profile of these sample types is a
// resident-memory profile (pprofmt.RSSSampleTypes).
func isRSSProfile(types map[string]sampleTypeConfig) bool {
	_, ok := types[rss.SampleResident]
	_, counts := types[rss.SampleHeapCount]
	return ok && counts && len(types) == 2
}

// rssPyroscopeOptions is what a Pyroscope upload of a resident-memory
// profile adds to it: the object size and the MemProfileRate of its
// go/heap/live rows as string labels, which the server keeps (it drops
// numeric labels), so that a fleet read gives the rows' estimates. It
// leaves out trace_id (pyroscopeDropLabels).
var rssPyroscopeOptions = &pprofenc.Options{NumAsString: []string{pprofmt.LabelBytes, pprofmt.LabelHeapRate}, DropLabels: pyroscopeDropLabels}

// otherPyroscopeOptions is what a Pyroscope upload of any other profile
// (cpu, wall, a source of the user's) changes: it leaves out trace_id
// (pyroscopeDropLabels), which CPU samples carry where a goroutine's
// labels hold it (pprof.Do or a tracing integration that sets it).
var otherPyroscopeOptions = &pprofenc.Options{DropLabels: pyroscopeDropLabels}

// pyroscopeEncoding returns the additions of a Pyroscope upload of a
// profile of these sample types: memory profiles' (pyroscopeOptions),
// resident-memory profiles' (rssPyroscopeOptions), and for every other
// profile otherPyroscopeOptions. Every Pyroscope upload leaves out
// trace_id.
func pyroscopeEncoding(types map[string]sampleTypeConfig, typeFrames bool) *pprofenc.Options {
	switch {
	case isMemoryProfile(types):
		return pyroscopeOptions(typeFrames)
	case isRSSProfile(types):
		return rssPyroscopeOptions
	}
	return otherPyroscopeOptions
}
