package agent

import (
	"bytes"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofenc"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// seriesLabel is the series label that tells apart the memory profiles one
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
const seriesLabel = pprofmt.LabelMemory

// seriesLabels returns the labels of u's ingest name: Config.Labels and,
// for a memory profile, memory=SOURCE.
func seriesLabels(u *Upload) map[string]string {
	if !isMemoryProfile(u.sampleTypes) || u.Profile == "" {
		return u.Labels
	}
	m := make(map[string]string, len(u.Labels)+1)
	for k, v := range u.Labels {
		m[k] = v
	}
	m[seriesLabel] = u.Profile
	return m
}

// isMemoryProfile reports whether Pyroscope v1.19 names a profile of these
// sample types "memory" (pkg/og/convert/pprof, RawProfile.metricName): no
// sample type is named wall, none holds "cpu", and one holds alloc_ or
// inuse_ or is space or objects.
func isMemoryProfile(types map[string]sampleTypeConfig) bool {
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

// pyroscopeOptions returns what a Pyroscope upload of a memory profile
// adds to it: the numeric labels a reader needs repeated as string labels
// (see stringLabelKeys; the object size of Go heap samples as well), the
// variance sums of arena samples (alloc_var and alloc_wbound, with the
// label arenaprof_var="1": pprofmt.VarianceSums; the server drops the
// size, these keep what a ratio interval needs of it) and, with
// typeFrames, the type of each arena sample as the leaf frame of its
// stack: the frames `go tool pprof -tagleaf=type` adds, so that
// Pyroscope's and Grafana's flame graphs end in types. A reader of the
// stacks drops them by their mark, a function without a line in the file
// pprofenc.TypeFrameFile ("type"). It leaves out the label trace_id
// (pyroscopeDropLabels). The agent writes them when it encodes the
// profile.
func pyroscopeOptions(typeFrames bool) *pprofenc.Options {
	return &pprofenc.Options{
		NumAsString:     stringLabelKeys,
		HeapNumAsString: []string{pprofmt.LabelBytes},
		TypeFrames:      typeFrames,
		ArenaVariance:   true,
		DropLabels:      pyroscopeDropLabels,
	}
}

// pyroscopeDropLabels are the labels Pyroscope uploads leave out: trace_id
// (otelarena's, a request's trace ID) would be a series label per request
// on Pyroscope v1.19, and Pyroscope joins profiles to traces by span_id
// alone; OTLP uploads put it in their links instead.
var pyroscopeDropLabels = []string{traceIDLabel}

// pyroscopeData returns u's profile as Pyroscope should receive it (see
// pyroscopeEncoding): the encoding the agent made when it collected the
// profile. An Upload made by hand has none: its profile is decoded
// and encoded again. Data that does not decode is sent as it is.
func pyroscopeData(u *Upload, typeFrames bool) []byte {
	opts := pyroscopeEncoding(u.sampleTypes, typeFrames)
	if b := u.pyroscope[pyroscopeVariant(typeFrames)]; b != nil {
		return b
	}
	p, err := profile.ParseData(u.Data)
	if err != nil {
		return u.Data
	}
	var buf bytes.Buffer
	if err := pprofenc.WriteGzip(&buf, p, opts); err != nil {
		return u.Data
	}
	return buf.Bytes()
}

// pyroscopeVariant indexes Upload.pyroscope.
func pyroscopeVariant(typeFrames bool) int {
	if typeFrames {
		return 1
	}
	return 0
}
