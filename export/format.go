package export

import (
	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// Sample value indexes, in the order of the profile's sample types.
const (
	IndexAllocObjects = pprofmt.IndexAllocObjects // alloc_objects/count: estimated objects allocated
	IndexAllocSpace   = pprofmt.IndexAllocSpace   // alloc_space/bytes: estimated bytes allocated
	IndexInuseObjects = pprofmt.IndexInuseObjects // inuse_objects/count: estimated objects live
	IndexInuseSpace   = pprofmt.IndexInuseSpace   // inuse_space/bytes: estimated bytes live
	IndexAllocSamples = pprofmt.IndexAllocSamples // alloc_samples/count: raw number of sample events
	IndexAllocTail    = pprofmt.IndexAllocTail    // alloc_tail/bytes: raw sum of size-offset
)

const numSampleTypes = pprofmt.NumSampleTypes

// Label keys of the profile's samples.
const (
	// LabelType is the string label holding the Go type of the objects.
	LabelType = pprofmt.LabelType
	// LabelBytes is the numeric label (unit bytes) holding the object size
	// as the arena takes it: the requested size rounded up to a multiple of
	// 8 bytes. Overflow samples, which mix sizes, have none.
	LabelBytes = pprofmt.LabelBytes
	// LabelMean is the numeric label (unit bytes) holding the sampling mean
	// the sample's events were drawn under.
	LabelMean = pprofmt.LabelMean
	// ReservedLabelPrefix is put in front of an arena label whose key is one
	// of the keys above, so that it cannot be confused with them: an arena
	// label "type" is exported as "arena_type".
	ReservedLabelPrefix = pprofmt.ReservedLabelPrefix
)

// OverflowFunction is the name of the synthetic frame that stands for the
// stacks of events past the profiler's bucket bound.
const OverflowFunction = pprofmt.OverflowFunction

// SampleTypes returns the profile's sample types, in order.
func SampleTypes() []*profile.ValueType { return pprofmt.SampleTypes() }
