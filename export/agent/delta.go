package agent

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// windowComment is the prefix of the window marking in Profile.Comments
// (DESIGN.md, "Profile format"): "arenaprof window=W".
const windowComment = "arenaprof window="

// isInUse reports whether a sample type holds a level rather than a running
// total: a type whose name starts with "inuse" (inuse_space,
// inuse_objects). profileDelta keeps such values absolute.
func isInUse(sampleType string) bool { return strings.HasPrefix(sampleType, "inuse") }

// profileDelta returns the profile of the window between two snapshots of the
// same cumulative profile (the runtime's heap profile, or the arena profile
// since its profiler started): for every sample type but the in-use ones
// (see isInUse) the value is cur minus prev; in-use values are cur's,
// absolute (subtracting levels gives meaningless negative memory, see
// golang/go#57765). A running total that went down (a profile reset, a
// bucket evicted) is clamped at zero. Samples whose values are all zero are
// removed.
//
// The window runs from the end of prev (TimeNanos+DurationNanos) to the end
// of cur. When cur carries an arenaprof window marking, the delta is
// marked "arenaprof window=both": neither end of the window lies on a
// sample event. prev and cur are not modified.
func profileDelta(prev, cur *profile.Profile) (*profile.Profile, error) {
	if cur == nil {
		return nil, errors.New("agent: delta of a nil profile")
	}
	if prev == nil {
		return cur.Copy(), nil
	}
	if len(prev.SampleType) != len(cur.SampleType) {
		return nil, fmt.Errorf("agent: delta: %d sample types before, %d now", len(prev.SampleType), len(cur.SampleType))
	}
	ratios := make([]float64, len(cur.SampleType))
	for i, st := range cur.SampleType {
		if prev.SampleType[i].Type != st.Type || prev.SampleType[i].Unit != st.Unit {
			return nil, fmt.Errorf("agent: delta: sample type %d changed from %s/%s to %s/%s", i,
				prev.SampleType[i].Type, prev.SampleType[i].Unit, st.Type, st.Unit)
		}
		if !isInUse(st.Type) {
			ratios[i] = -1
		}
	}
	neg := prev.Copy()
	if err := neg.ScaleN(ratios); err != nil {
		return nil, fmt.Errorf("agent: delta: %w", err)
	}
	start := prev.TimeNanos + prev.DurationNanos
	end := cur.TimeNanos + cur.DurationNanos
	merged, err := profile.Merge([]*profile.Profile{cur.Copy(), neg})
	if err != nil {
		return nil, fmt.Errorf("agent: delta: %w", err)
	}
	takeFoldedSpans(merged.Sample, ratios)
	kept := merged.Sample[:0]
	for _, s := range merged.Sample {
		nonzero := false
		for i, v := range s.Value {
			if v < 0 && ratios[i] < 0 {
				s.Value[i], v = 0, 0
			}
			nonzero = nonzero || v != 0
		}
		if nonzero {
			kept = append(kept, s)
		}
	}
	clear(merged.Sample[len(kept):])
	merged.Sample = kept
	merged = merged.Compact()
	merged.TimeNanos = start
	merged.DurationNanos = max(end-start, 0)
	merged.Period = cur.Period
	merged.Comments = deltaPoolGets(markWindow(cur.Comments), prev, cur, start, merged.DurationNanos)
	return merged, nil
}

// spanIDLabel and traceIDLabel are the labels of a request's span and
// trace IDs (see docs/spans.md): the profiler folds both away together.
const (
	spanIDLabel  = "span_id"
	traceIDLabel = "trace_id"
)

// isSpanSample reports whether s carries a span ID or a trace ID.
func isSpanSample(s *profile.Sample) bool {
	return len(s.Label[spanIDLabel]) > 0 || len(s.Label[traceIDLabel]) > 0
}

// takeFoldedSpans moves to its twin (the sample of the same site and
// labels without the span ID) what a sample with a span ID lost between
// prev and cur in running totals: the profiler folds a span ID's bucket
// into its twin once its window is uploaded (profiler.Profiler.Deltas),
// so that the twin gained what the span's sample lost. Without the move
// the twin's gain would count the span's events a second time and the
// loss be clamped away. A loss with no twin is left to the clamp.
func takeFoldedSpans(samples []*profile.Sample, ratios []float64) {
	var lost []*profile.Sample
	for _, s := range samples {
		if !isSpanSample(s) {
			continue
		}
		for i, v := range s.Value {
			if v < 0 && ratios[i] < 0 {
				lost = append(lost, s)
				break
			}
		}
	}
	if len(lost) == 0 {
		return
	}
	twins := make(map[string]*profile.Sample)
	for _, s := range samples {
		if !isSpanSample(s) {
			twins[sampleKey(s)] = s
		}
	}
	for _, s := range lost {
		t := twins[sampleKey(s)]
		if t == nil {
			continue
		}
		for i, v := range s.Value {
			if v < 0 && ratios[i] < 0 {
				t.Value[i] += v
				s.Value[i] = 0
			}
		}
	}
}

// sampleKey is what tells a sample of a merged profile from another, its
// locations and labels, the span and trace IDs left out.
func sampleKey(s *profile.Sample) string {
	var b strings.Builder
	for _, l := range s.Location {
		fmt.Fprintf(&b, "%d,", l.ID)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Label)) {
		if k != spanIDLabel && k != traceIDLabel {
			fmt.Fprintf(&b, "|%q=%q", k, s.Label[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.NumLabel)) {
		fmt.Fprintf(&b, "|%q#%v%q", k, s.NumLabel[k], s.NumUnit[k])
	}
	return b.String()
}

// deltaPoolGets returns comments without cur's count of arenas handed out
// (cumulative, like its alloc values) and, when prev and cur both record
// one, with the count of the window instead: cur's minus prev's, over the
// window of length ns from start. A count that went down (a profiler
// restarted) gives none: diff -per request then refuses the delta rather
// than divide by a wrong number.
func deltaPoolGets(comments []string, prev, cur *profile.Profile, start, ns int64) []string {
	var out []string
	for _, c := range comments {
		if !strings.HasPrefix(c, pprofmt.PoolGetsCommentPrefix) {
			out = append(out, c)
		}
	}
	pg, _, okPrev, errPrev := pprofmt.PoolGetsOf(prev)
	cg, _, okCur, errCur := pprofmt.PoolGetsOf(cur)
	if okPrev && okCur && errPrev == nil && errCur == nil && cg >= pg {
		out = append(out, pprofmt.PoolGetsComment(uint64(cg-pg), start, ns))
	}
	return out
}

// markWindow returns comments with any window marking replaced by
// "arenaprof window=both"; comments without a marking are returned as is.
func markWindow(comments []string) []string {
	var out []string
	marked := false
	for _, c := range comments {
		if strings.HasPrefix(c, windowComment) {
			marked = true
			continue
		}
		out = append(out, c)
	}
	if marked {
		out = append(out, windowComment+"both")
	}
	return out
}
