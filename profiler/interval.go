package profiler

// Window says whether the observation window of a group of events starts
// and ends on a sample event. See reference 000, "Compensating for bytes
// allocated ... in between events".
type Window uint8

const (
	WindowAligned Window = 0                       // starts and ends on events
	WindowStart   Window = 1 << 0                  // start not on an event: lower bound as if s-1
	WindowEnd     Window = 1 << 1                  // end not on an event: upper bound as if s+1
	WindowBoth           = WindowStart | WindowEnd // neither
)

// Stratum is the raw sums of the events of one group drawn under one mean.
type Stratum struct {
	Samples   int64 // s: number of sample events
	Tail      int64 // u: sum of size-offset over those events
	MeanBytes int64 // the mean they were drawn under
}

// Interval is a confidence interval for the bytes allocated by a group.
type Interval struct {
	Samples    int64
	Tail       int64
	MeanBytes  int64 // 0 if the group mixes means
	Confidence float64
	Window     Window
	Estimate   float64 // failed-trials estimate s*q/p + u, in bytes
	FailuresLo int64   // k_lo: negative-binomial lower quantile of failed trials
	FailuresHi int64   // k_hi: upper quantile
	Lo, Hi     float64 // bytes: [k_lo + u, k_hi + u]
}

// ComputeInterval returns the interval for s events with tail sum u drawn
// under one mean, at the given confidence, with the window correction.
func ComputeInterval(s, u, mean int64, confidence float64, w Window) (Interval, error) {
	return Interval{}, errTODO
}

// GroupInterval returns a sound interval for a group whose events were
// drawn under several means (one Stratum per mean).
func GroupInterval(strata []Stratum, confidence float64, w Window) (Interval, error) {
	return Interval{}, errTODO
}
