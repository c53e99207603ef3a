package pprofmt

import "github.com/google/pprof/profile"

// The resident-memory profile (internal/rss writes and reads it): every
// resident byte of a process in one class, the class in the string label
// LabelClass and in the root frames.
const (
	// LabelClass is the string label naming a sample's class.
	LabelClass = "class"
)

// RSSSampleTypes returns the sample types of the resident-memory
// profile: resident/bytes (the default, summing to the RSS), then
// heap_samples/count, the raw count of sampled objects of a go/heap/live
// row (0 on other samples), from which intervals are computed.
func RSSSampleTypes() []*profile.ValueType {
	return []*profile.ValueType{{Type: "resident", Unit: "bytes"}, {Type: "heap_samples", Unit: "count"}}
}

// IsRSS reports whether p is a resident-memory profile: its sample types
// are those of RSSSampleTypes.
func IsRSS(p *profile.Profile) bool {
	want := RSSSampleTypes()
	if len(p.SampleType) != len(want) {
		return false
	}
	for i, st := range p.SampleType {
		if st.Type != want[i].Type || st.Unit != want[i].Unit {
			return false
		}
	}
	return true
}
