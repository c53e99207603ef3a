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
// profile: heap_samples/count, the raw count of sampled objects of a
// go/heap/live row (0 on other samples), from which intervals are
// computed, then resident/bytes (the default, summing to the RSS).
// resident comes last because Pyroscope names a profile type it does not
// know after its last sample type, and tools that ignore the default
// sample type show the last one. Profiles written before held resident
// first: readers find the two by name (RSSIndex), never by position.
func RSSSampleTypes() []*profile.ValueType {
	return []*profile.ValueType{{Type: "heap_samples", Unit: "count"}, {Type: "resident", Unit: "bytes"}}
}

// RSSIndex returns the indices in p's values of the resident bytes and
// of the heap_samples counts; ok is false unless p's sample types are
// exactly those two, in either order.
func RSSIndex(p *profile.Profile) (resident, count int, ok bool) {
	if len(p.SampleType) != 2 {
		return 0, 0, false
	}
	resident, count = -1, -1
	for i, st := range p.SampleType {
		switch {
		case st.Type == "resident" && st.Unit == "bytes":
			resident = i
		case st.Type == "heap_samples" && st.Unit == "count":
			count = i
		}
	}
	if resident < 0 || count < 0 {
		return 0, 0, false
	}
	return resident, count, true
}
