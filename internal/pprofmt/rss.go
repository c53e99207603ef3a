package pprofmt

import "github.com/google/pprof/profile"

// The resident-memory profile (internal/rss writes and reads it): every
// resident byte of a process in one class, the class in the string label
// LabelClass and in the root frames.
const (
	// LabelClass is the string label naming a sample's class.
	LabelClass = "class"
	// LabelSmaps is the string label the agent's uploads give every
	// sample of a profile read without /proc/self/smaps, with the value
	// SmapsUnread: Pyroscope keeps labels and drops comments.
	LabelSmaps = "smaps"
	// SmapsUnread is LabelSmaps' value.
	SmapsUnread = "unread"
)

// RSSSampleTypes returns the sample types of the resident-memory
// profile: resident/bytes (the default, summing to the RSS), then
// heap_samples/count, the raw count of sampled objects of a go/heap/live
// row (0 on other samples), from which intervals are computed.
func RSSSampleTypes() []*profile.ValueType {
	return []*profile.ValueType{{Type: "resident", Unit: "bytes"}, {Type: "heap_samples", Unit: "count"}}
}
