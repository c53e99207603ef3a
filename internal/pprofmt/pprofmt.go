// Package pprofmt holds the definitions of arenaprof's pprof profile format
// that both the writer (package export) and the reader (package report)
// need: the sample types and their order, the label keys, the synthetic
// overflow frame and the window comment.
package pprofmt

import (
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/estimate"
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

// GoVersionCommentPrefix starts the profile comment that names the Go
// release whose runtime sampled a profile's Go heap samples:
// "arenaprof go=go1.26.8" (runtime.Version()). The runtime's heap sampler
// changed in Go 1.24 (internal/goheap.Rule), and runtime/pprof records no
// version, so the profiles arenaprof writes say it.
const GoVersionCommentPrefix = "arenaprof go="

// GoVersionComment returns the comment naming Go release v.
func GoVersionComment(v string) string { return GoVersionCommentPrefix + v }

// PoolGetsCommentPrefix starts the comment in which an arena profile
// records the arenas arena.Pool.Get handed out during its window
// (profiler.Stats.PoolGets) and the window's length:
// "arenaprof pool_gets=N window_ns=START+LENGTH", the window's start and
// length in nanoseconds. They are the divisors of arenaprof diff -per
// request and -per second. The window makes the comment of each window
// its own, so that a merge (which keeps one copy of equal comments)
// keeps one per part; the reader sums them (see PoolGetsOf).
const PoolGetsCommentPrefix = "arenaprof pool_gets="

// PoolGetsComment returns the comment recording n arenas handed out in
// the window of length ns starting at start (Unix nanoseconds).
func PoolGetsComment(n uint64, start, ns int64) string {
	return PoolGetsCommentPrefix + strconv.FormatUint(n, 10) + " window_ns=" + strconv.FormatInt(start, 10) + "+" + strconv.FormatInt(ns, 10)
}
