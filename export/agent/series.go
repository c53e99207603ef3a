package agent

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// SeriesLabel is the series label that tells apart the memory profiles one
// application uploads to Pyroscope: "arena" for arena memory, "heap" for
// the Go heap, the source's name for any other source of memory profiles.
//
// Pyroscope (v1.19) names a profile type after its sample types: every
// profile with alloc_* or inuse_* sample types is "memory", so arena and Go
// heap uploads share the type ID memory:alloc_space:bytes:space:bytes. Its
// service_name is the application name of the upload, as pyroscope-go sends
// it for all its profile types; so each upload of the agent names the
// application alone and, if its profile is a memory profile, adds
// memory=SOURCE:
//
//	memory:alloc_space:bytes:space:bytes{service_name="shop", memory="arena"}
//	memory:alloc_space:bytes:space:bytes{service_name="shop", memory="heap"}
//	process_cpu:cpu:nanoseconds:cpu:nanoseconds{service_name="shop"}
//	wall:wall:nanoseconds:wallclock:nanoseconds{service_name="shop"}
//
// The label takes precedence over a Config.Labels entry of the same key.
const SeriesLabel = pprofmt.LabelMemory

// seriesLabels returns the labels of u's ingest name: Config.Labels and,
// for a memory profile, memory=SOURCE.
func seriesLabels(u *Upload) map[string]string {
	if !isMemoryProfile(u.SampleTypes) || u.Profile == "" {
		return u.Labels
	}
	m := make(map[string]string, len(u.Labels)+1)
	for k, v := range u.Labels {
		m[k] = v
	}
	m[SeriesLabel] = u.Profile
	return m
}

// isMemoryProfile reports whether Pyroscope v1.19 names a profile of these
// sample types "memory" (pkg/og/convert/pprof, RawProfile.metricName): no
// sample type is named wall, none holds "cpu", and one holds alloc_ or
// inuse_ or is space or objects.
func isMemoryProfile(types map[string]SampleTypeConfig) bool {
	memory := false
	for t := range types {
		switch {
		case t == "wall", strings.Contains(t, "cpu"):
			return false
		case strings.Contains(t, "alloc_"), strings.Contains(t, "inuse_"), t == "space", t == "objects":
			memory = true
		}
	}
	return memory
}

// Pyroscope keeps a sample's string labels as series labels and drops its
// numeric ones (pkg/model/pprofsplit). A reader of the server's sums needs
// the sampling mean of arena samples, and the MemProfileRate and object
// size of Go heap samples, to give them intervals; so uploads to Pyroscope
// carry them as string labels too, under the same keys.
var stringLabelKeys = []string{pprofmt.LabelMean, pprofmt.LabelHeapRate}

// pyroscopeData returns u's profile as Pyroscope should receive it: for a
// memory profile, with the numeric labels a reader needs repeated as string
// labels (see stringLabelKeys; the object size of Go heap samples as
// well). Other profiles, and data that does not decode, are sent as they
// are.
func pyroscopeData(u *Upload) []byte {
	if !isMemoryProfile(u.SampleTypes) {
		return u.Data
	}
	p, err := profile.ParseData(u.Data)
	if err != nil {
		return u.Data
	}
	changed := false
	for _, s := range p.Sample {
		// Samples may share their label maps: each gets its own.
		s.Label = copyLabels(s.Label)
		add := func(k string) {
			if v := s.NumLabel[k]; len(v) > 0 && len(s.Label[k]) == 0 {
				s.Label[k] = []string{strconv.FormatInt(v[0], 10)}
				changed = true
			}
		}
		for _, k := range stringLabelKeys {
			add(k)
		}
		if m := s.Label[pprofmt.LabelMemory]; len(m) > 0 && m[0] == pprofmt.MemoryHeap {
			add(pprofmt.LabelBytes)
		}
	}
	if !changed {
		return u.Data
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		return u.Data
	}
	return buf.Bytes()
}

func copyLabels(m map[string][]string) map[string][]string {
	c := make(map[string][]string, len(m)+2)
	for k, v := range m {
		c[k] = v
	}
	return c
}
