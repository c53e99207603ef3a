package pprofmt

import (
	"fmt"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/samplingstate"
)

// CheckMeans returns an error naming the field when a sampling mean p's
// samples are read under is 0, negative, too large or missing: the
// sampling_mean label of an arena sample (or, for a sample without one,
// the profile's period), the memprofilerate label of a Go heap sample of
// an arenaprof profile, the period of a Go heap profile (its
// MemProfileRate, under the period type space/bytes), and the means listed
// by the comments "arenaprof means=" and "arenaprof inuse_means=". A
// profile of exact counts (a live-arenas profile) and one of no sampled
// memory have no means to check: it returns nil for them. report's Table,
// Diff, Flame and Advise call it on every profile they read; a reader
// (the command's) calls it to refuse such a profile as soon as it is
// read, before any merge. Its errors start "report: ", as the errors of
// report's functions that return them do.
func CheckMeans(p *profile.Profile) error {
	if p == nil || IsHoldings(p) {
		return nil
	}
	const maxMean = int64(samplingstate.MaxMeanBytes)
	if IsGoHeap(p) {
		if pt := p.PeriodType; pt != nil && (pt.Type != "space" || pt.Unit != "bytes") {
			return fmt.Errorf("report: a Go heap profile with the period type %s/%s: its period is no MemProfileRate (runtime/pprof writes space/bytes)", pt.Type, pt.Unit)
		}
		if p.Period <= 0 {
			return fmt.Errorf("report: the period of a Go heap profile (its MemProfileRate) is %d: a profile written with MemProfileRate 0 sampled nothing, and one without a period cannot be read; set runtime.MemProfileRate above 0 before allocating", p.Period)
		}
		return nil
	}
	if len(MissingTypes(p)) > 0 {
		return nil // no sampled memory: the model's error says so
	}
	for _, prefix := range []string{MeansCommentPrefix, InUseMeansCommentPrefix} {
		if _, _, err := MeansOf(p, prefix); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	for _, s := range p.Sample {
		if isHeapSample(s) {
			r, ok := firstNumLabel(s, LabelHeapRate)
			if !ok {
				return fmt.Errorf("report: a Go heap sample (label %s=%s) has no %s label: the MemProfileRate it was drawn at is unknown", LabelMemory, MemoryHeap, LabelHeapRate)
			}
			if r <= 0 {
				return fmt.Errorf("report: a Go heap sample has the label %s=%d: a MemProfileRate of %d samples nothing", LabelHeapRate, r, r)
			}
			continue
		}
		if m, ok := firstNumLabel(s, LabelMean); ok {
			if m < 1 || m > maxMean {
				return fmt.Errorf("report: a sample has the label %s=%d: a sampling mean is in [1, %d] bytes", LabelMean, m, maxMean)
			}
			continue
		}
		if p.Period < 1 || p.Period > maxMean {
			return fmt.Errorf("report: a sample has no %s label and the profile's period (the sampling mean of such samples) is %d, outside [1, %d] bytes", LabelMean, p.Period, maxMean)
		}
	}
	return nil
}

// firstNumLabel is the first value of s's numeric label key.
func firstNumLabel(s *profile.Sample, key string) (int64, bool) {
	if v := s.NumLabel[key]; len(v) > 0 {
		return v[0], true
	}
	return 0, false
}

// isHeapSample reports whether s is a Go heap sample of a combined memory
// profile (label memory=heap).
func isHeapSample(s *profile.Sample) bool {
	v := s.Label[LabelMemory]
	return len(v) > 0 && v[0] == MemoryHeap
}
