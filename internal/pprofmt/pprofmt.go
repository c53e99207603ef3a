// Package pprofmt holds the definitions of arenaprof's pprof profile format
// that both the writer (package export) and the reader (package report)
// need: the sample types and their order, the label keys, the synthetic
// overflow frame and the window comment.
package pprofmt

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
)

// Sample value indexes, in the order of the profile's sample types.
const (
	IndexAllocObjects = iota // alloc_objects/count: estimated objects allocated
	IndexAllocSpace          // alloc_space/bytes: estimated bytes allocated
	IndexInuseObjects        // inuse_objects/count: estimated objects live
	IndexInuseSpace          // inuse_space/bytes: estimated bytes live
	IndexAllocSamples        // alloc_samples/count: raw number of sample events
	IndexAllocTail           // alloc_tail/bytes: raw sum of size-offset
	NumSampleTypes
)

// Label keys of the profile's samples.
const (
	// LabelType is the string label holding the Go type of the objects.
	LabelType = "type"
	// LabelBytes is the numeric label (unit bytes) holding the object size
	// as the arena takes it: the requested size rounded up to a multiple of
	// 8 bytes. Overflow samples, which mix sizes, have none.
	LabelBytes = "bytes"
	// LabelMean is the numeric label (unit bytes) holding the sampling mean
	// the sample's events were drawn under.
	LabelMean = "sampling_mean"
	// ReservedLabelPrefix is put in front of an arena label whose key is one
	// of the keys above, so that it cannot be confused with them: an arena
	// label "type" is exported as "arena_type".
	ReservedLabelPrefix = "arena_"
)

// OverflowFunction is the name of the synthetic frame that stands for the
// stacks of events past the profiler's bucket bound.
const OverflowFunction = "[arenaprof: bucket limit reached, stack dropped]"

// WindowCommentPrefix starts the comment that marks a profile's window.
const WindowCommentPrefix = "arenaprof window="

// SampleTypes returns the profile's sample types, in order.
func SampleTypes() []*profile.ValueType {
	return []*profile.ValueType{
		{Type: "alloc_objects", Unit: "count"},
		{Type: "alloc_space", Unit: "bytes"},
		{Type: "inuse_objects", Unit: "count"},
		{Type: "inuse_space", Unit: "bytes"},
		{Type: "alloc_samples", Unit: "count"},
		{Type: "alloc_tail", Unit: "bytes"},
	}
}

// WindowComment returns the profile comment that marks window w:
// "arenaprof window=W".
func WindowComment(w estimate.Window) string {
	return WindowCommentPrefix + (w & estimate.WindowBoth).String()
}

// WindowOf returns the window marking of a profile: the union of the flags
// of every "arenaprof window=W" comment (a merged profile carries the
// comments of its parts), or WindowBoth, the conservative choice, if there
// is none or one cannot be read.
//
// How the marking is used: the interval of a group of samples is computed
// from its raw sums (alloc_samples, alloc_tail per sampling_mean) with
// estimate.GroupInterval at this window. A window whose start is not on a
// sample event lowers the lower bound as if one event fewer had been seen;
// one whose end is not on an event raises the upper bound as if one more had.
func WindowOf(p *profile.Profile) estimate.Window {
	found := false
	var w estimate.Window
	for _, c := range p.Comments {
		name, ok := strings.CutPrefix(c, WindowCommentPrefix)
		if !ok {
			continue
		}
		x, err := estimate.ParseWindow(name)
		if err != nil || x.String() != name { // only the exact spellings
			return estimate.WindowBoth
		}
		w |= x
		found = true
	}
	if !found {
		return estimate.WindowBoth
	}
	return w
}

// Labels of the combined memory profile (see export.BuildMemory): every
// sample says which memory it counts, and samples of the Go heap carry the
// runtime's sampling rate.
const (
	// LabelMemory is the string label that tells arena samples from Go heap
	// samples in a combined memory profile.
	LabelMemory = "memory"
	// MemoryHeap and MemoryArena are the values of LabelMemory.
	MemoryHeap  = "heap"
	MemoryArena = "arena"
	// LabelHeapRate is the numeric label (unit bytes) holding the
	// runtime.MemProfileRate a Go heap sample was drawn under.
	LabelHeapRate = "memprofilerate"
)

// Comments that list the sampling means in force during a profile's window
// (see profiler.Snapshot.Means and InUseMeans): "arenaprof means=M1,M2,..."
// for the allocated values and "arenaprof inuse_means=M1,..." for the
// in-use values, the means in increasing order. A merged profile carries
// the comments of its parts; the means in force are their union.
const (
	MeansCommentPrefix      = "arenaprof means="
	InUseMeansCommentPrefix = "arenaprof inuse_means="
)

// MeansComment returns the comment listing means after prefix
// ([MeansCommentPrefix] or [InUseMeansCommentPrefix]), or "" if means is
// empty.
func MeansComment(prefix string, means []int64) string {
	if len(means) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(prefix)
	for i, m := range means {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(m, 10))
	}
	return b.String()
}

// MeansOf returns the union, sorted, of the means listed by every comment
// of p that starts with prefix, and whether there was one. It is an error
// if such a comment is malformed or lists a mean outside [1, 2^40].
func MeansOf(p *profile.Profile, prefix string) ([]int64, bool, error) {
	set := map[int64]bool{}
	found := false
	for _, c := range p.Comments {
		list, ok := strings.CutPrefix(c, prefix)
		if !ok {
			continue
		}
		found = true
		for f := range strings.SplitSeq(list, ",") {
			m, err := strconv.ParseInt(f, 10, 64)
			if err != nil || m < 1 || m > samplingstate.MaxMeanBytes {
				return nil, false, fmt.Errorf("malformed profile comment %q: %q is not a sampling mean in [1, %d]", c, f, int64(samplingstate.MaxMeanBytes))
			}
			set[m] = true
		}
	}
	out := make([]int64, 0, len(set))
	for m := range set {
		out = append(out, m)
	}
	slices.Sort(out)
	return out, found, nil
}

// GoVersionCommentPrefix starts the profile comment that names the Go
// release whose runtime sampled a profile's Go heap samples:
// "arenaprof go=go1.26.8" (runtime.Version()). The runtime's heap sampler
// changed in Go 1.24 (internal/goheap.Rule), and runtime/pprof records no
// version, so the profiles arenaprof writes say it.
const GoVersionCommentPrefix = "arenaprof go="

// GoVersionComment returns the comment naming Go release v.
func GoVersionComment(v string) string { return GoVersionCommentPrefix + v }

// GoVersionsOf returns the distinct Go releases p's comments name, in
// order (a merged profile carries the comments of its parts); none for a
// profile arenaprof did not write.
func GoVersionsOf(p *profile.Profile) []string {
	var vs []string
	for _, c := range p.Comments {
		if v, ok := strings.CutPrefix(c, GoVersionCommentPrefix); ok && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	return vs
}
