package pyroread

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
)

// Query says what [Client.Read] reads.
type Query struct {
	// Selector chooses the series. Without a matcher on memory, it gets
	// memory=~"arena|heap": the arena and Go heap uploads of the agent.
	Selector Selector
	// From and To bound the time range.
	From, To time.Time
	// Labels are the series labels to keep on the samples (type, or the
	// key of a -by label grouping); the labels a model needs are always
	// kept.
	Labels []string
	// Stacks asks for the stacks (grouping by function or stack): one
	// SelectMergeProfile per sample type and combination of the model's
	// labels, instead of the series' sums alone.
	Stacks bool
}

// MaxRange is the longest range one query asks the server for: Pyroscope's
// default max_query_length (24h). Longer ranges are read in pieces and
// added up: the sums are additive over time.
const MaxRange = 24 * time.Hour

// allocTypes are the sample types read, as the end of their profile type
// IDs (after the name), with their position among the arenaprof sample
// types and the variance sums (pprofmt.VarianceSums) after them. In-use values are levels, not amounts, and do not add up over
// uploads: they are not read.
var allocTypes = []allocType{
	{"alloc_objects:count:space:bytes", pprofmt.IndexAllocObjects},
	{"alloc_space:bytes:space:bytes", pprofmt.IndexAllocSpace},
	{"alloc_samples:count:space:bytes", pprofmt.IndexAllocSamples},
	{"alloc_tail:bytes:space:bytes", pprofmt.IndexAllocTail},
	{"alloc_var:bytes:space:bytes", pprofmt.IndexAllocVar},
	{"alloc_wbound:bytes:space:bytes", pprofmt.IndexAllocWBound},
}

// allocType is a sample type read: the end of its profile type IDs and
// its position among the arenaprof sample types.
type allocType struct {
	suffix string
	idx    int
}

// typeNames are the names under which Pyroscope v1.19.3 stores the agent's
// memory profiles, the first part of their profile type IDs: "memory" for
// pprof uploads (named as pyroscope-go's), "space" for OTLP profiles
// (named after their period type). One stored profile has one name, so
// the sums under both names add up without counting a profile twice.
var typeNames = []string{"memory", "space"}

// typeID is the profile type ID of an alloc type under a name.
func typeID(name, suffix string) string { return name + ":" + suffix }

// namesWithData returns the names among typeNames under which the server
// lists any alloc type, in typeNames' order.
func namesWithData(ids []string) []string {
	var out []string
	for _, n := range typeNames {
		for _, t := range allocTypes {
			if slices.Contains(ids, typeID(n, t.suffix)) {
				out = append(out, n)
				break
			}
		}
	}
	return out
}

// typeRead is one query of a read: an alloc type under one name over one
// piece of the range.
type typeRead struct {
	id       string
	idx      int
	from, to time.Time
}

// typeReads lists the queries of a read: one per name, alloc type and
// piece, in that order.
func typeReads(names []string, chunks [][2]time.Time) []typeRead {
	var out []typeRead
	for _, n := range names {
		for _, t := range allocTypes {
			for _, ch := range chunks {
				out = append(out, typeRead{typeID(n, t.suffix), t.idx, ch[0], ch[1]})
			}
		}
	}
	return out
}

// storedNames returns the names (of typeNames) under which the server
// holds alloc types of the series sel matches over the pieces: the values
// of its __profile_type__ label (LabelValues, one call per piece).
func (c *Client) storedNames(ctx context.Context, sel Selector, chunks [][2]time.Time) ([]string, error) {
	vals := make([][]string, len(chunks))
	err := c.each(ctx, len(chunks), func(ctx context.Context, i int) error {
		var err error
		vals[i], err = c.labelValues(ctx, profileTypeLabel, sel, chunks[i][0], chunks[i][1])
		return err
	})
	if err != nil {
		return nil, err
	}
	return namesWithData(slices.Concat(vals...)), nil
}

// profileTypeLabel is the server's label holding a series' profile type
// ID.
const profileTypeLabel = "__profile_type__"

// modelLabels are the series labels the arena and Go heap models need:
// LabelVarFormat keeps the series that carry the variance sums apart from
// older ones, whose sums of the same stacks lack them.
var modelLabels = []string{pprofmt.LabelMemory, pprofmt.LabelMean, pprofmt.LabelHeapRate, pprofmt.LabelBytes, pprofmt.LabelVarFormat}

// ErrNoData is returned, wrapped, when nothing matches the query.
var ErrNoData = errors.New("no arena or Go heap uploads match")

// Read rebuilds an arenaprof profile (window "both") from the server's
// sums over every series the query selects and its whole range: one
// sample per combination of the kept labels (and per stack with
// q.Stacks), with alloc_objects, alloc_space, alloc_samples and alloc_tail
// as the server sums them, and the numeric labels sampling_mean,
// memprofilerate and bytes restored from the string labels the agent's
// uploads carry. Arena series need sampling_mean, Go heap series
// memprofilerate and bytes: uploads without them (from before those labels
// were sent) are refused, naming the series.
//
// The server stores pprof uploads under the profile types "memory:..."
// and OTLP profiles under "space:..." (typeNames); Read asks it which of
// the two hold the selected series in the range and adds up the sums of
// those that do, so an application pushing either way, or moving from
// one to the other within the range, is read whole.
//
// With q.Stacks, each stack profile's total is checked against the
// series' sum: a server that truncates SelectMergeProfile (its
// max_flamegraph_nodes limits, when enforced on that API) is an error, not
// a silent undercount.
//
// A read holds its bounds: it sends at most the client's MaxRequests
// queries, refusing before it sends them when the range's pieces need
// more, and it keeps what it reads under MaxMemory, adding up the
// answers as they arrive (see retainedDiv); either refusal is a
// *[LimitError]. Peak uploads (memory="peak") are refused with
// [ErrPeak]: their sum is no quantity.
func (c *Client) Read(ctx context.Context, q Query) (*profile.Profile, error) {
	var sent int
	p, err := c.read(ctx, q, &sent)
	var se *ServerError
	if errors.As(err, &se) {
		// A server whose max_query_length is below MaxRange names it:
		// read again in pieces of that length.
		if d, ok := queryLengthLimit(se.Message); ok && d < c.pieceLength() {
			c.maxRange = d
			return c.read(ctx, q, &sent)
		}
	}
	return p, err
}

// pieceLength is the longest range one query asks for.
func (c *Client) pieceLength() time.Duration {
	if c.maxRange > 0 {
		return c.maxRange
	}
	return MaxRange
}

// queryLengthLimit reads the limit out of the server's answer to a query
// longer than its max_query_length: "the query time range exceeds the
// limit (max_query_length, actual: 48h, limit: 12h)".
func queryLengthLimit(msg string) (time.Duration, bool) {
	_, after, ok := strings.Cut(msg, "max_query_length")
	if !ok {
		return 0, false
	}
	_, lim, ok := strings.Cut(after, "limit: ")
	if !ok {
		return 0, false
	}
	lim, _, _ = strings.Cut(lim, ")")
	d, err := parsePromDuration(strings.TrimSpace(lim))
	if err != nil || d < time.Minute {
		return 0, false
	}
	return d, true
}

// parsePromDuration reads a duration as Prometheus writes one: units y, w,
// d, h, m, s, ms, in that order, e.g. "1d12h".
func parsePromDuration(s string) (time.Duration, error) {
	var d time.Duration
	units := []struct {
		suffix string
		unit   time.Duration
	}{{"y", 365 * 24 * time.Hour}, {"w", 7 * 24 * time.Hour}, {"d", 24 * time.Hour}}
	for _, u := range units {
		if n, rest, ok := strings.Cut(s, u.suffix); ok && n != "" && !strings.ContainsAny(n, "hmsµn") {
			x, err := strconv.Atoi(n)
			if err != nil || x < 0 || x > 200 { // 200 years fit in a Duration
				return 0, fmt.Errorf("bad duration %q", s)
			}
			d += time.Duration(x) * u.unit
			s = rest
		}
	}
	if s == "" {
		return d, nil
	}
	x, err := time.ParseDuration(s)
	return d + x, err
}

// ErrPeak is returned, wrapped, for a read that selects the agent's peak
// uploads (memory="peak").
var ErrPeak = errors.New(`peak uploads (memory="peak") cannot be read from Pyroscope`)

// peakErr says why a read of peak uploads is refused.
func peakErr(sel Selector) error {
	return fmt.Errorf("%w: %s selects them; each holds the in-use memory at one interval's peak, and a read from Pyroscope adds up what it selects over the range: a sum of peaks is no quantity, and SelectSeries aggregates by sum or average only (Pyroscope v1.19 and v2.2), not by maximum, which would give each group's highest; read a pod's peak from its /debug/arenaprof/peak, and leave memory=\"peak\" out of the selector", ErrPeak, sel)
}

// selectsPeak reports whether sel asks for the peak uploads by name.
func selectsPeak(sel Selector) bool {
	return slices.Contains(sel, Matcher{pprofmt.LabelMemory, "=", memoryPeak})
}

// memoryPeak is the memory label of the agent's peak uploads.
const memoryPeak = "peak"

// set is the sums of one combination of the kept labels.
type set struct {
	labels map[string]string // the kept labels
	values [pprofmt.NumVarSampleTypes]int64
}

// sums adds up, as the answers arrive, the series of a read per
// combination of the kept labels, counting what it keeps against the
// read's retained memory.
type sums struct {
	keep []string
	mem  *retained

	mu    sync.Mutex
	sets  map[string]*set
	order []string
}

// errRetained is sums.add's refusal at the retained memory bound.
var errRetained = errors.New("retained memory bound")

// add adds the sum of one series to the sample type idx of its
// combination.
func (a *sums) add(idx int, s series) error {
	if s.labels[pprofmt.LabelMemory] == memoryPeak {
		return ErrPeak
	}
	if idx >= pprofmt.NumSampleTypes && s.labels[pprofmt.LabelVarFormat] == "" {
		return nil // variance sums count only under the format's label
	}
	k := labelsKey(s.labels, a.keep)
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.sets[k]
	if st == nil {
		st = &set{labels: make(map[string]string, len(a.keep))}
		cost := int64(len(k)) + setOverhead
		for _, l := range a.keep {
			if v, ok := s.labels[l]; ok {
				st.labels[l] = v
				cost += int64(len(l)+len(v)) + labelOverhead
			}
		}
		if !a.mem.add(cost) {
			return errRetained
		}
		a.sets[k] = st
		a.order = append(a.order, k)
	}
	v := st.values[idx] + int64(s.sum)
	if v < st.values[idx] {
		return errors.New("the server's sums overflow")
	}
	st.values[idx] = v
	return nil
}

// Estimates of the memory kept per combination (the set, its map entry,
// its labels' map) and per label in it, beyond the strings' bytes.
const (
	setOverhead   = 320
	labelOverhead = 64
)

// maxRequestsErr is the refusal of a read whose queries would pass
// MaxRequests: need of them (at least, with more), suggest being enough.
func (c *Client) maxRequestsErr(q Query, pieces, need, suggest int, more string) error {
	limit := "Pyroscope's default max_query_length, 24h"
	if c.maxRange > 0 {
		limit = "the server's max_query_length, " + c.maxRange.String()
	}
	return &LimitError{
		Flag: FlagMaxRequests, Limit: int64(c.maxRequests), Suggest: int64(niceAbove(suggest)),
		What: fmt.Sprintf("reading %s (%s to %s) takes %d pieces of at most %s and %d queries%s, more than %s %d allows: narrow -from and -to",
			q.To.Sub(q.From), q.From.Format(time.RFC3339), q.To.Format(time.RFC3339), pieces, limit, need, more, FlagMaxRequests, c.maxRequests),
	}
}

// niceAbove is the smallest of 1, 2 and 5 times a power of ten above n.
func niceAbove(n int) int {
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if m*p > n || m*p > math.MaxInt/20 {
				return m * p
			}
		}
	}
}

// memorySelector checks a read's range and selector, and gives the
// selector the memory matcher of arena and Go heap series unless it has
// one: a peak's series are refused (peakErr).
func memorySelector(sel Selector, from, to time.Time) (Selector, error) {
	if !to.After(from) {
		return sel, fmt.Errorf("empty time range: %s is not before %s", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	if selectsPeak(sel) {
		return sel, peakErr(sel)
	}
	if !sel.Constrains(pprofmt.LabelMemory) {
		sel = sel.With(Matcher{pprofmt.LabelMemory, "=~", pprofmt.MemoryArena + "|" + pprofmt.MemoryHeap})
	}
	return sel, nil
}

func (c *Client) read(ctx context.Context, q Query, sent *int) (*profile.Profile, error) {
	sel, err := memorySelector(q.Selector, q.From, q.To)
	if err != nil {
		return nil, err
	}
	keep := slices.Clone(modelLabels)
	for _, l := range q.Labels {
		if !slices.Contains(keep, l) {
			keep = append(keep, l)
		}
	}
	// SelectSeries asks for one millisecond more than its piece.
	chunks := splitRange(q.From, q.To, c.pieceLength()-time.Millisecond)
	// A LabelValues per piece, then at least the alloc types under one
	// name; at most under every name.
	if need := *sent + len(chunks)*(1+len(allocTypes)); need > c.maxRequests {
		return nil, c.maxRequestsErr(q, len(chunks), need, *sent+len(chunks)*(1+len(allocTypes)*len(typeNames)), " or more")
	}
	*sent += len(chunks)
	names, err := c.storedNames(ctx, sel, chunks)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w %s between %s and %s", ErrNoData, sel, q.From.Format(time.RFC3339), q.To.Format(time.RFC3339))
	}
	reads := typeReads(names, chunks)
	if need := *sent + len(reads); need > c.maxRequests {
		return nil, c.maxRequestsErr(q, len(chunks), need, need, "")
	}
	*sent += len(reads)

	mem := &retained{limit: c.retainedShare()}
	acc := &sums{keep: keep, mem: mem, sets: map[string]*set{}}
	// One query per name, type and piece, side by side; each answer is
	// added up as it is decoded.
	var done atomic.Int64
	err = c.each(ctx, len(reads), func(ctx context.Context, i int) error {
		err := c.selectSeries(ctx, reads[i].id, sel, reads[i].from, reads[i].to, keep, func(s series) error {
			return acc.add(reads[i].idx, s)
		})
		if err == nil {
			done.Add(1)
		}
		return err
	})
	switch {
	case errors.Is(err, errRetained):
		return nil, c.retainedError(fmt.Sprintf("reading %s, %d combinations of the labels %s", sel, len(acc.order), strings.Join(keep, ", ")), mem.used, int(done.Load()), len(reads))
	case errors.Is(err, ErrPeak):
		return nil, peakErr(sel)
	case err != nil:
		return nil, err
	}
	order := acc.order
	slices.Sort(order)
	p := &profile.Profile{
		SampleType:        append(pprofmt.SampleTypes(), pprofmt.VarianceSampleTypes()...),
		DefaultSampleType: "alloc_space",
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		TimeNanos:         q.From.UnixNano(),
		DurationNanos:     q.To.Sub(q.From).Nanoseconds(),
	}
	if q.Stacks {
		n := 0
		for _, k := range order {
			if acc.sets[k].values != ([pprofmt.NumVarSampleTypes]int64{}) {
				n++
			}
		}
		if need := *sent + n*len(reads); need > c.maxRequests {
			return nil, c.maxRequestsErr(q, len(chunks), need, need, fmt.Sprintf(" (%d for the stacks of %d combinations of the labels %s)", n*len(reads), n, strings.Join(keep, ", ")))
		}
		*sent += n * len(reads)
	}
	var means []int64
	for _, k := range order {
		st := acc.sets[k]
		if st.values == ([pprofmt.NumVarSampleTypes]int64{}) {
			continue
		}
		smp, err := sampleFor(st.labels, keep, sel)
		if err != nil {
			return nil, err
		}
		if m := smp.NumLabel[pprofmt.LabelMean]; len(m) > 0 && !slices.Contains(means, m[0]) {
			means = append(means, m[0])
		}
		if !q.Stacks {
			smp.Value = st.values[:]
			p.Sample = append(p.Sample, smp)
			continue
		}
		stacks, err := c.readStacks(ctx, sel, st.labels, keep, reads, st.values, mem)
		if err != nil {
			return nil, err
		}
		for _, s := range stacks {
			s.Label, s.NumLabel, s.NumUnit = smp.Label, smp.NumLabel, smp.NumUnit
			p.Sample = append(p.Sample, s)
		}
	}
	if len(p.Sample) == 0 {
		return nil, fmt.Errorf("%w %s between %s and %s", ErrNoData, sel, q.From.Format(time.RFC3339), q.To.Format(time.RFC3339))
	}
	slices.Sort(means)
	if len(means) > 0 {
		p.Period = means[0]
		p.Comments = append(p.Comments, pprofmt.MeansComment(pprofmt.MeansCommentPrefix, means))
	} else {
		p.Period = 1
	}
	p.Comments = append(p.Comments, pprofmt.WindowComment(estimate.WindowBoth))
	renumber(p)
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("rebuilding the profile: %v", err)
	}
	return p, nil
}

// splitRange cuts [from, to] into pieces of at most piece that neither
// overlap nor leave a gap at the server's millisecond resolution.
func splitRange(from, to time.Time, piece time.Duration) [][2]time.Time {
	var out [][2]time.Time
	for from.Before(to) {
		end := from.Add(piece)
		if !end.Before(to) {
			out = append(out, [2]time.Time{from, to})
			break
		}
		out = append(out, [2]time.Time{from, end.Add(-time.Millisecond)})
		from = end
	}
	return out
}

// labelsKey identifies a combination of the kept labels.
func labelsKey(m map[string]string, keep []string) string {
	var b strings.Builder
	for _, k := range keep {
		b.WriteString(strconv.Quote(m[k]))
		b.WriteByte(',')
	}
	return b.String()
}

// sampleFor returns a sample (without values or stack) carrying the kept
// labels of one series combination: the string labels as they are, the
// model's numeric labels parsed back.
func sampleFor(labels map[string]string, keep []string, sel Selector) (*profile.Sample, error) {
	s := &profile.Sample{Label: map[string][]string{}, NumLabel: map[string][]int64{}, NumUnit: map[string][]string{}}
	for _, k := range keep {
		v := labels[k]
		if v == "" {
			continue
		}
		switch k {
		case pprofmt.LabelMean, pprofmt.LabelHeapRate, pprofmt.LabelBytes:
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 || n > math.MaxInt32*int64(1<<20) {
				return nil, fmt.Errorf("series %s has %s=%q, not a positive whole number", sel, k, v)
			}
			s.NumLabel[k] = []int64{n}
			s.NumUnit[k] = []string{"bytes"}
		default:
			s.Label[k] = []string{v}
		}
	}
	switch labels[pprofmt.LabelMemory] {
	case pprofmt.MemoryHeap:
		if len(s.NumLabel[pprofmt.LabelHeapRate]) == 0 || len(s.NumLabel[pprofmt.LabelBytes]) == 0 {
			//lint:ignore ST1005 starts with the proper noun Go
			return nil, fmt.Errorf("Go heap series of %s without the memprofilerate and bytes labels: uploaded by an older agent or another client; narrow the range to newer uploads", sel)
		}
		s.Label[pprofmt.LabelMemory] = []string{pprofmt.MemoryHeap}
	default:
		m := s.NumLabel[pprofmt.LabelMean]
		if len(m) == 0 {
			return nil, fmt.Errorf("arena series of %s (memory=%q) without the sampling_mean label: uploaded by an older agent or another client; narrow the selector or the range to newer uploads", sel, labels[pprofmt.LabelMemory])
		}
		if m[0] > samplingstate.MaxMeanBytes {
			return nil, fmt.Errorf("series %s has sampling_mean %d, above %d", sel, m[0], int64(samplingstate.MaxMeanBytes))
		}
		// Arena sizes are not uploaded as labels (their cardinality is
		// the number of distinct sizes); the report reads the sample as
		// one of mixed sizes.
		delete(s.NumLabel, pprofmt.LabelBytes)
		delete(s.NumUnit, pprofmt.LabelBytes)
	}
	return s, nil
}

// readStacks returns the samples, one per stack, of one series
// combination: each alloc type's merged profiles over every name and
// piece, added up by stack as they arrive, checked against the series'
// sums. What the stacks keep is counted against mem.
func (c *Client) readStacks(ctx context.Context, sel Selector, labels map[string]string, keep []string, reads []typeRead, want [pprofmt.NumVarSampleTypes]int64, mem *retained) ([]*profile.Sample, error) {
	if labels[pprofmt.LabelVarFormat] == "" { // no variance sums to read
		reads = slices.DeleteFunc(slices.Clone(reads), func(t typeRead) bool { return t.idx >= pprofmt.NumSampleTypes })
	}
	one := slices.Clone(sel)
	for _, k := range keep {
		one = append(one, Matcher{k, "=", labels[k]})
	}
	type stack struct {
		s        *profile.Sample
		read, at int // where it was first seen: the order of the samples
	}
	var mu sync.Mutex
	byStack := map[string]*stack{}
	var total [pprofmt.NumVarSampleTypes]int64
	var done atomic.Int64
	err := c.each(ctx, len(reads), func(ctx context.Context, i int) error {
		t := reads[i]
		mp, err := c.selectMergeProfile(ctx, t.id, one, t.from, t.to)
		if err != nil {
			return err
		}
		if len(mp.SampleType) != 1 && len(mp.Sample) > 0 {
			return fmt.Errorf("SelectMergeProfile %s: %d sample types, want 1", t.id, len(mp.SampleType))
		}
		mu.Lock()
		defer mu.Unlock()
		for j, s := range mp.Sample {
			s.Location = dropTypeFrames(s.Location)
			if len(s.Value) != 1 || s.Value[0] < 0 {
				return fmt.Errorf("SelectMergeProfile %s: a sample has values %v", t.id, s.Value)
			}
			k := stackKey(s)
			d := byStack[k]
			if d == nil {
				if !mem.add(int64(len(k)) + stackOverhead + locationOverhead*int64(len(s.Location))) {
					return errRetained
				}
				d = &stack{&profile.Sample{Location: s.Location, Value: make([]int64, pprofmt.NumVarSampleTypes)}, i, j}
				byStack[k] = d
			}
			d.s.Value[t.idx] += s.Value[0]
			total[t.idx] += s.Value[0]
		}
		done.Add(1)
		return nil
	})
	if errors.Is(err, errRetained) {
		return nil, c.retainedError(fmt.Sprintf("reading the stacks of %s, %d stacks", one, len(byStack)), mem.used, int(done.Load()), len(reads))
	}
	if err != nil {
		return nil, err
	}
	for _, t := range allocTypes {
		if t.idx >= pprofmt.NumSampleTypes && labels[pprofmt.LabelVarFormat] == "" {
			continue // not read: see above
		}
		if total[t.idx] != want[t.idx] {
			return nil, fmt.Errorf("the stacks of %s under %s sum to %d, the series to %d: the server truncated its answer (max_flamegraph_nodes enforced on SelectMergeProfile?) or changed between the queries; read with -by type, or again", t.suffix, one, total[t.idx], want[t.idx])
		}
	}
	stacks := slices.Collect(maps.Values(byStack))
	slices.SortFunc(stacks, func(a, b *stack) int { return cmp.Or(cmp.Compare(a.read, b.read), cmp.Compare(a.at, b.at)) })
	out := make([]*profile.Sample, len(stacks))
	for i, d := range stacks {
		out[i] = d.s
	}
	return out, nil
}

// Estimates of the memory a stack keeps: its sample, its map entry and
// values, beyond its key's bytes, and each of its locations (with its
// line and function).
const (
	stackOverhead    = 256
	locationOverhead = 192
)

// typeFrameFile marks the frames the agent adds as the leaf of arena
// stacks in Pyroscope uploads (PyroscopeConfig.NoTypeFrames): a function named after the type,
// in a file named "type", without a line.
const typeFrameFile = pprofmt.LabelType

// dropTypeFrames removes the type frames at the leaf of a stack: the type
// is a label of its own, and the leaf function is the caller of arena.New.
func dropTypeFrames(locs []*profile.Location) []*profile.Location {
	for len(locs) > 0 && isTypeFrame(locs[0]) {
		locs = locs[1:]
	}
	return locs
}

func isTypeFrame(l *profile.Location) bool {
	if len(l.Line) != 1 || l.Line[0].Line != 0 || l.Line[0].Function == nil {
		return false
	}
	return l.Line[0].Function.Filename == typeFrameFile
}

// stackKey identifies a stack by its frames' functions, files and lines,
// which stay the same across answers (location IDs do not).
func stackKey(s *profile.Sample) string {
	var b strings.Builder
	for _, l := range s.Location {
		for _, ln := range l.Line {
			if ln.Function != nil {
				b.WriteString(ln.Function.Name)
				b.WriteByte('\x00')
				b.WriteString(ln.Function.Filename)
			}
			b.WriteByte('\x00')
			b.WriteString(strconv.FormatInt(ln.Line, 10))
			b.WriteByte('\x01')
		}
		fmt.Fprintf(&b, "%x\x02", l.Address)
	}
	return b.String()
}

// renumber gives p the locations, functions and mappings its samples use,
// with fresh IDs: they come from several answers, whose IDs collide.
func renumber(p *profile.Profile) {
	locs := map[*profile.Location]bool{}
	fns := map[*profile.Function]bool{}
	maps := map[*profile.Mapping]bool{}
	for _, s := range p.Sample {
		for _, l := range s.Location {
			if locs[l] {
				continue
			}
			locs[l] = true
			p.Location = append(p.Location, l)
			l.ID = uint64(len(p.Location))
			if l.Mapping != nil && !maps[l.Mapping] {
				maps[l.Mapping] = true
				p.Mapping = append(p.Mapping, l.Mapping)
				l.Mapping.ID = uint64(len(p.Mapping))
			}
			for _, ln := range l.Line {
				if ln.Function != nil && !fns[ln.Function] {
					fns[ln.Function] = true
					p.Function = append(p.Function, ln.Function)
					ln.Function.ID = uint64(len(p.Function))
				}
			}
		}
	}
}
