package pprofmt

import (
	"time"

	"github.com/google/pprof/profile"
)

// The live-arenas profile: what the process's arenas hold at one moment,
// exact counts and bytes, not samples. The count comes last: Pyroscope
// names a profile it does not know after its last sample type, so that the
// profile types read arenas:reserved_space:bytes:space:bytes,
// arenas:used_space:..., arenas:arenas:count:...
const (
	// IndexReserved is the index of reserved_space/bytes, the bytes of
	// chunks and large buffers the arenas hold.
	IndexReserved = iota
	// IndexUsed is the index of used_space/bytes, the bytes handed out
	// since the arenas' last Reset.
	IndexUsed
	// IndexArenas is the index of arenas/count, the number of arenas.
	IndexArenas
	// NumHoldingTypes is the number of sample types.
	NumHoldingTypes
)

// Labels of the live-arenas profile.
const (
	// LabelAge is the string label holding the age bucket of a live arena
	// (see AgeBuckets).
	LabelAge = "age"
	// LabelPoolIdle is the string label "true" of the sample of a pool's
	// idle arenas.
	LabelPoolIdle = "pool_idle"
	// LabelPool is the string label naming the pool of idle arenas.
	LabelPool = "pool"
)

// HoldingsComment marks a live-arenas profile.
const HoldingsComment = "arenaprof live arenas: exact counts and bytes, not sampled"

// HoldingTypes returns the sample types of the live-arenas profile.
func HoldingTypes() []*profile.ValueType {
	return []*profile.ValueType{
		{Type: "reserved_space", Unit: "bytes"},
		{Type: "used_space", Unit: "bytes"},
		{Type: "arenas", Unit: "count"},
	}
}

// AgeBuckets are the values of the age label, youngest first, with the
// upper bound of each (the last has none).
var AgeBuckets = []struct {
	Name  string
	Below time.Duration
}{
	{"<1s", time.Second},
	{"1s-10s", 10 * time.Second},
	{"10s-1m", time.Minute},
	{"1m-10m", 10 * time.Minute},
	{"10m-1h", time.Hour},
	{">1h", 0},
}

// AgeBucket returns the age bucket of an arena of age d.
func AgeBucket(d time.Duration) string {
	for _, b := range AgeBuckets[:len(AgeBuckets)-1] {
		if d < b.Below {
			return b.Name
		}
	}
	return AgeBuckets[len(AgeBuckets)-1].Name
}

// AgeAtLeast reports whether every arena of age bucket name is at least d
// old: whether the bucket starts at or after d.
func AgeAtLeast(name string, d time.Duration) bool {
	start := time.Duration(0)
	for _, b := range AgeBuckets {
		if b.Name == name {
			return start >= d
		}
		start = b.Below
	}
	return false
}
