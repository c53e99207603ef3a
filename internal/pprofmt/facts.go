package pprofmt

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
)

// Kind is what a profile holds, decided by its sample types.
type Kind int

const (
	// KindOther is a profile of no sampled memory (CPU, goroutines,
	// contention, or an arenaprof profile lacking sample types): see
	// Facts.Missing.
	KindOther Kind = iota
	// KindArena is an arenaprof profile: arena samples, and Go heap
	// samples beside them in a combined memory profile or a heap upload
	// (Facts.HeapSamples).
	KindArena
	// KindGoHeap is a heap or allocs profile as runtime/pprof writes it.
	KindGoHeap
	// KindHoldings is a live-arenas profile: exact counts, not samples.
	KindHoldings
	// KindRSS is a resident-memory profile (RSSSampleTypes): read by
	// arenaprof rss, not by the sampled-memory tables.
	KindRSS
)

// Facts are what a profile is, derived once from its sample types, its
// comments and one pass over its samples by [Describe], for every reader
// (the model, the grouping, the formatters) to read instead of asking the
// profile again.
type Facts struct {
	Kind Kind
	// Period is the profile's Period: the sampling mean of arena samples
	// without a sampling_mean label, the MemProfileRate of a Go heap
	// profile.
	Period int64
	// DurationNanos is the profile's DurationNanos: its window's length,
	// 0 for a profile that counts since the process started.
	DurationNanos int64
	// Arena holds the value positions of the arenaprof sample types
	// (IndexAllocObjects ... IndexAllocTail), -1 for one the profile lacks;
	// Missing lists those it lacks as type/unit (for a KindOther profile).
	Arena   [NumSampleTypes]int
	Missing []string
	// Var holds the positions of the variance sums (VarianceSampleTypes),
	// -1 for one the profile lacks.
	Var [2]int
	// Heap holds the positions of alloc_objects, alloc_space,
	// inuse_objects and inuse_space.
	Heap [4]int
	// HeapRaw holds the positions of the raw Go heap counts a merge keeps
	// (HeapRawSampleTypes, by IndexHeapAllocRaw ...), all -1 when the
	// profile lacks one of them.
	HeapRaw [NumHeapRawTypes]int
	// HeapSamples says an arenaprof profile holds Go heap samples (label
	// memory=heap); HeapRates are the MemProfileRates they, or a Go heap
	// profile's samples, were drawn at, in the order first seen.
	HeapSamples bool
	HeapRates   []int64
	// Window is the window marking (WindowOf).
	Window estimate.Window
	// PoolGets is the number of arenas arena.Pool.Get handed out in the
	// window and PoolGetsNanos the window's length, as the pool_gets
	// comments record them (PoolGetsOf); both -1 without one.
	// PoolGetsErr is PoolGetsOf's error.
	PoolGets, PoolGetsNanos int64
	PoolGetsErr             error
	// Means are the sampling means listed as in force for the allocated
	// values ("arenaprof means="), InUseMeans those for the in-use values
	// ("arenaprof inuse_means="), HasInUseMeans whether the latter comment
	// was there (see MeansOf).
	Means, InUseMeans []int64
	HasInUseMeans     bool
	// GoVersions are the Go releases the profile's comments name
	// (GoVersionsOf).
	GoVersions []string
	// Peak says the profile is a peak profile (PeakCommentPrefix).
	Peak bool
	// HasSamples says the profile has a sample.
	HasSamples bool
	// Labels and NumLabels are the keys of the string and numeric labels
	// its samples carry.
	Labels, NumLabels map[string]bool
	// TypeNames are the sample types as type/unit, PeriodType the type
	// of the period ("" without one).
	TypeNames  []string
	PeriodType string
	// Types is the number of sample types; BadValues is the number of
	// values of the first sample whose values do not match them one for
	// one, -1 if none (see CheckValues).
	Types, BadValues int
	// NotMemory says why a KindOther profile carries nothing to estimate
	// (nil for the other kinds); ValuesErr that a sample's values do not
	// match the sample types (nil if all do); MeansErr is Describe's
	// error, kept for a reader that checks the means after other things.
	NotMemory, ValuesErr, MeansErr error
}

// Describe derives the facts of p (nil for a nil profile). Its error is
// that of [CheckMeans]: a sampling mean the samples are read under is 0,
// negative, too large or missing, or a means comment is malformed; the
// facts are returned with it, so that a caller may first say what else is
// wrong.
func Describe(p *profile.Profile) (*Facts, error) {
	if p == nil {
		return nil, nil
	}
	f := &Facts{Period: p.Period, DurationNanos: p.DurationNanos, Types: len(p.SampleType), BadValues: -1, Var: [2]int{-1, -1}, Window: WindowOf(p),
		Labels: map[string]bool{}, NumLabels: map[string]bool{}}
	f.kindOf(p)
	if g, ns, found, err := PoolGetsOf(p); found && err == nil {
		f.PoolGets, f.PoolGetsNanos = g, ns
	} else {
		f.PoolGets, f.PoolGetsNanos, f.PoolGetsErr = -1, -1, err
	}
	var meansErr error
	var found bool
	if f.Means, _, meansErr = MeansOf(p, MeansCommentPrefix); meansErr == nil {
		f.InUseMeans, found, meansErr = MeansOf(p, InUseMeansCommentPrefix)
		f.HasInUseMeans = found
	}
	for _, c := range p.Comments {
		if v, ok := strings.CutPrefix(c, GoVersionCommentPrefix); ok && !slices.Contains(f.GoVersions, v) {
			f.GoVersions = append(f.GoVersions, v)
		}
		if strings.HasPrefix(c, PeakCommentPrefix) {
			f.Peak = true
		}
	}
	if f.Kind == KindGoHeap {
		f.HeapRates = []int64{p.Period}
	}
	sampleErr := f.scan(p)
	if f.BadValues >= 0 {
		f.ValuesErr = fmt.Errorf("report: malformed profile: a sample has %d values for %d sample types", f.BadValues, f.Types)
	}
	if f.Kind == KindOther {
		f.NotMemory = f.notMemoryError()
	}
	switch {
	case f.Kind == KindGoHeap:
		f.MeansErr = firstErr(f.checkGoHeap(p), sampleErr)
	case f.Kind != KindArena:
	case meansErr != nil:
		f.MeansErr = fmt.Errorf("report: %w", meansErr)
	default:
		f.MeansErr = sampleErr
	}
	return f, f.MeansErr
}

// kindOf sets the kind and the value positions from p's sample types.
func (f *Facts) kindOf(p *profile.Profile) {
	for i := range f.Arena {
		f.Arena[i] = -1
	}
	if p.PeriodType != nil {
		f.PeriodType = p.PeriodType.Type
	}
	for j, st := range p.SampleType {
		f.TypeNames = append(f.TypeNames, st.Type+"/"+st.Unit)
		for i, want := range SampleTypes() {
			if f.Arena[i] < 0 && st.Type == want.Type && st.Unit == want.Unit {
				f.Arena[i] = j
			}
		}
		for i, want := range VarianceSampleTypes() {
			if f.Var[i] < 0 && st.Type == want.Type && st.Unit == want.Unit {
				f.Var[i] = j
			}
		}
		switch st.Type {
		case "alloc_objects":
			f.Heap[0] = j
		case "alloc_space":
			f.Heap[1] = j
		case "inuse_objects":
			f.Heap[2] = j
		case "inuse_space":
			f.Heap[3] = j
		}
	}
	var raw bool
	if f.HeapRaw, raw = heapRawPositions(p); !raw {
		f.HeapRaw = [NumHeapRawTypes]int{-1, -1, -1, -1}
	}
	switch {
	case isGoHeap(p, raw):
		f.Kind = KindGoHeap
	case IsHoldings(p):
		f.Kind = KindHoldings
	case IsRSS(p):
		f.Kind = KindRSS
	default:
		for i, want := range SampleTypes() {
			if f.Arena[i] < 0 {
				f.Missing = append(f.Missing, want.Type+"/"+want.Unit)
			}
		}
		if len(f.Missing) == 0 {
			f.Kind = KindArena
		}
	}
}

// scan reads every sample once: the label keys, the value counts, the Go
// heap samples and their rates, and (for an arenaprof profile) the first
// sample whose mean cannot be read, whose error it returns.
func (f *Facts) scan(p *profile.Profile) error {
	const maxMean = int64(samplingstate.MaxMeanBytes)
	var err error
	f.HasSamples = len(p.Sample) > 0
	for _, s := range p.Sample {
		if f.BadValues < 0 && len(s.Value) != len(p.SampleType) {
			f.BadValues = len(s.Value)
		}
		for k := range s.Label {
			f.Labels[k] = true
		}
		for k := range s.NumLabel {
			f.NumLabels[k] = true
		}
		if f.Kind != KindArena && f.Kind != KindGoHeap {
			continue
		}
		if err == nil {
			err = checkSampleLabels(s)
		}
		if f.Kind != KindArena {
			continue
		}
		if isHeapSample(s) {
			f.HeapSamples = true
			r, ok := firstNumLabel(s, LabelHeapRate)
			if !ok {
				err = firstErr(err, fmt.Errorf("report: a Go heap sample (label %s=%s) has no %s label: the MemProfileRate it was drawn at is unknown", LabelMemory, MemoryHeap, LabelHeapRate))
				continue
			}
			if r <= 0 {
				err = firstErr(err, fmt.Errorf("report: a Go heap sample has the label %s=%d: a MemProfileRate of %d samples nothing", LabelHeapRate, r, r))
				continue
			}
			if !slices.Contains(f.HeapRates, r) {
				f.HeapRates = append(f.HeapRates, r)
			}
			continue
		}
		if m, ok := firstNumLabel(s, LabelMean); ok {
			if m < 1 || m > maxMean {
				err = firstErr(err, fmt.Errorf("report: a sample has the label %s=%d: a sampling mean is in [1, %d] bytes", LabelMean, m, maxMean))
			}
			continue
		}
		if p.Period < 1 || p.Period > maxMean {
			err = firstErr(err, fmt.Errorf("report: a sample has no %s label and the profile's period (the sampling mean of such samples) is %d, outside [1, %d] bytes", LabelMean, p.Period, maxMean))
		}
	}
	return err
}

// checkSampleLabels returns an error naming the label when a numeric
// label of s that the estimates read makes no sense, whatever the kind of
// the sample: a sampling_mean outside [1, 2^40] bytes, a memprofilerate
// below 1, or, on a sample with a value, a bytes (object size) below 1.
// (A Go heap sample without values may carry bytes=0: the legacy text
// parser writes it on the records with no allocations.)
func checkSampleLabels(s *profile.Sample) error {
	const maxMean = int64(samplingstate.MaxMeanBytes)
	for _, m := range s.NumLabel[LabelMean] {
		if m < 1 || m > maxMean {
			return fmt.Errorf("report: a sample has the label %s=%d: a sampling mean is in [1, %d] bytes", LabelMean, m, maxMean)
		}
	}
	for _, r := range s.NumLabel[LabelHeapRate] {
		if r <= 0 {
			return fmt.Errorf("report: a sample has the label %s=%d: a MemProfileRate of %d samples nothing", LabelHeapRate, r, r)
		}
	}
	for _, b := range s.NumLabel[LabelBytes] {
		if b < 1 && slices.ContainsFunc(s.Value, func(v int64) bool { return v != 0 }) {
			return fmt.Errorf("report: a sample has the label %s=%d: an object size is at least 1 byte", LabelBytes, b)
		}
	}
	return nil
}

func firstErr(err, next error) error {
	if err != nil {
		return err
	}
	return next
}

// checkGoHeap returns CheckMeans' error for a Go heap profile: a period
// that is no MemProfileRate.
func (f *Facts) checkGoHeap(p *profile.Profile) error {
	if pt := p.PeriodType; pt != nil && (pt.Type != "space" || pt.Unit != "bytes") {
		return fmt.Errorf("report: a Go heap profile with the period type %s/%s: its period is no MemProfileRate (runtime/pprof writes space/bytes)", pt.Type, pt.Unit)
	}
	if p.Period <= 0 {
		return fmt.Errorf("report: the period of a Go heap profile (its MemProfileRate) is %d: a profile written with MemProfileRate 0 sampled nothing, and one without a period cannot be read; set runtime.MemProfileRate above 0 before allocating", p.Period)
	}
	return nil
}

// InForce returns the sampling means the profile lists as in force during
// its window, for the in-use values when inuse (falling back to those of
// the allocated values when it lists none for them), or nil when it lists
// none.
func (f *Facts) InForce(inuse bool) []int64 {
	if inuse && f.HasInUseMeans {
		return f.InUseMeans
	}
	return f.Means
}

// IsGoHeap reports whether p is a heap or allocs profile as runtime/pprof
// writes it: the four alloc/inuse sample types and no arenaprof raw sums,
// or such profiles merged (report.Merge), which adds the raw Go heap
// counts (HeapRawSampleTypes).
func IsGoHeap(p *profile.Profile) bool { return isGoHeap(p, HasHeapRaw(p)) }

// isGoHeap is IsGoHeap for a profile that carries the raw Go heap counts
// or not (raw).
func isGoHeap(p *profile.Profile, raw bool) bool {
	want := map[string]string{"alloc_objects": "count", "alloc_space": "bytes", "inuse_objects": "count", "inuse_space": "bytes"}
	n := len(want)
	if raw {
		for _, st := range HeapRawSampleTypes() {
			want[st.Type] = st.Unit
		}
		n += NumHeapRawTypes
	}
	if len(p.SampleType) != n {
		return false
	}
	seen := map[string]bool{}
	for _, st := range p.SampleType {
		if want[st.Type] != st.Unit || seen[st.Type] {
			return false
		}
		seen[st.Type] = true
	}
	return true
}

// What names what the profile is by its period type, with its sample
// types, for messages: "a CPU profile (sample types samples/count,
// cpu/nanoseconds)", "a profile (sample types none)".
func (f *Facts) What() string {
	what := "a profile"
	if f.Kind == KindRSS {
		return "a resident-memory profile (arenaprof rss reads it)"
	}
	switch f.PeriodType {
	case "cpu":
		what = "a CPU profile"
	case "goroutine":
		what = "a goroutine profile"
	case "contentions":
		what = "a contention profile"
	case "wallclock":
		what = "a wall-clock profile"
	}
	h := strings.Join(f.TypeNames, ", ")
	if h == "" {
		h = "none"
	}
	return what + " (sample types " + h + ")"
}

// notMemoryError says why the profile, which lacks the arenaprof sample
// types f.Missing and is no Go heap profile, carries nothing to estimate.
func (f *Facts) notMemoryError() error {
	return fmt.Errorf("report: %s carries no sampled memory to estimate: it lacks the sample types %s; give an arenaprof profile or a Go heap or allocs profile", f.What(), strings.Join(f.Missing, ", "))
}

// CheckSampledMemory returns an error saying why the profile cannot be
// given intervals: a profile of something other than sampled memory (CPU,
// goroutines, contention) or a Go heap profile written with
// MemProfileRate 0, which sampled nothing. A live-arenas profile passes.
func (f *Facts) CheckSampledMemory() error {
	switch f.Kind {
	case KindGoHeap:
		if f.Period <= 0 {
			return fmt.Errorf("report: a Go heap profile written with MemProfileRate %d, which samples nothing; set runtime.MemProfileRate above 0 before allocating", f.Period)
		}
	case KindOther:
		return f.NotMemory
	case KindRSS:
		return fmt.Errorf("report: %s: its classes are read with arenaprof rss", f.What())
	}
	return nil
}

// IsHoldings reports whether p is a live-arenas profile: its sample types
// are those of HoldingTypes.
func IsHoldings(p *profile.Profile) bool { return sameTypes(p, HoldingTypes()) }

// IsRSS reports whether p is a resident-memory profile: its sample types
// are those of RSSSampleTypes, in either order (RSSIndex).
func IsRSS(p *profile.Profile) bool {
	_, _, ok := RSSIndex(p)
	return ok
}

// sameTypes reports whether p's sample types are want, in order.
func sameTypes(p *profile.Profile, want []*profile.ValueType) bool {
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

// PoolGetsOf returns the arenas handed out and the window length in
// nanoseconds that p's pool_gets comments record, summed over the
// comments (one per merged part); found is false without one. A malformed
// comment is an error.
func PoolGetsOf(p *profile.Profile) (gets, ns int64, found bool, err error) {
	for _, c := range p.Comments {
		rest, ok := strings.CutPrefix(c, PoolGetsCommentPrefix)
		if !ok {
			continue
		}
		n, length, ok := parsePoolGets(rest)
		if !ok {
			return 0, 0, false, errors.New("malformed comment " + strconv.Quote(c) + ": want " + PoolGetsCommentPrefix + "N window_ns=START+LENGTH, N and LENGTH not negative")
		}
		if gets > math.MaxInt64-n || ns > math.MaxInt64-length {
			return 0, 0, false, errors.New("the comments " + PoolGetsCommentPrefix + "... sum past 2^63")
		}
		gets, ns, found = gets+n, ns+length, true
	}
	return gets, ns, found, nil
}

// parsePoolGets parses "N window_ns=START+LENGTH", digits only but
// START's sign.
func parsePoolGets(s string) (n, length int64, ok bool) {
	ns, w, ok1 := strings.Cut(s, " window_ns=")
	start, l, ok2 := strings.Cut(w, "+")
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	n, err1 := strconv.ParseInt(ns, 10, 64)
	_, err2 := strconv.ParseInt(start, 10, 64)
	length, err3 := strconv.ParseInt(l, 10, 64)
	digits := func(x string) bool { return x != "" && strings.Trim(x, "0123456789") == "" }
	return n, length, err1 == nil && err2 == nil && err3 == nil && digits(ns) && digits(l) && digits(strings.TrimPrefix(start, "-"))
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

// CheckMeans returns an error naming the field when a sampling mean p's
// samples are read under is 0, negative, too large or missing: the
// sampling_mean label of an arena sample (or, for a sample without one,
// the profile's period), the memprofilerate label of a Go heap sample of
// an arenaprof profile, the period of a Go heap profile (its
// MemProfileRate, under the period type space/bytes), and the means listed
// by the comments "arenaprof means=" and "arenaprof inuse_means="; and a
// sample label that makes no sense on any sample of an arenaprof or Go
// heap profile (a sampling_mean outside [1, 2^40], a memprofilerate below
// 1, a bytes below 1 on a sample with values). A profile of exact counts (a live-arenas profile) and one of no sampled
// memory have no means to check: it returns nil for them. report's Table,
// Diff, Flame and Advise call it on every profile they read; a reader
// (the command's) calls it to refuse such a profile as soon as it is
// read, before any merge. Its errors start "report: ", as the errors of
// report's functions that return them do.
func CheckMeans(p *profile.Profile) error {
	_, err := Describe(p)
	return err
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
