package export

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/profiler"
)

// GroupKind is what [Table] groups samples by.
type GroupKind string

// The kinds of grouping of [Table].
const (
	GroupByType  GroupKind = "type"  // the Go type (the "type" label)
	GroupByFunc  GroupKind = "func"  // the leaf function: the caller of arena.New
	GroupByStack GroupKind = "stack" // the whole stack, leaf first
	GroupByLabel GroupKind = "label" // the value of one string label
)

// GroupBy says how [Table] groups samples: by Go type, leaf function, whole
// stack, or the value of one string label (an arena label such as a pprof
// label "endpoint" given to [arena.Pool.Get]).
//
// The zero GroupBy groups by type.
type GroupBy struct {
	Kind  GroupKind
	Label string // the label key when Kind is GroupByLabel
}

// NoneKey is the key of the group of samples that lack the grouping
// attribute (no such label, no stack).
const NoneKey = "(none)"

// StackSep joins the frames of a stack key, leaf first.
const StackSep = " < "

// ParseGroupBy parses a grouping as the CLI's -by flag spells it: type,
// func, stack or label=KEY.
func ParseGroupBy(s string) (GroupBy, error) {
	switch GroupKind(s) {
	case GroupByType, GroupByFunc, GroupByStack:
		return GroupBy{Kind: GroupKind(s)}, nil
	}
	if k, ok := strings.CutPrefix(s, "label="); ok {
		if k == "" {
			return GroupBy{}, errors.New("export: grouping label= needs a label key, e.g. label=handler")
		}
		return GroupBy{Kind: GroupByLabel, Label: k}, nil
	}
	return GroupBy{}, fmt.Errorf("export: unknown grouping %q; use type, func, stack or label=KEY", s)
}

// String returns g as [ParseGroupBy] reads it.
func (g GroupBy) String() string {
	switch g.Kind {
	case "":
		return string(GroupByType)
	case GroupByLabel:
		return "label=" + g.Label
	}
	return string(g.Kind)
}

// key returns the group key of a sample (full, as in TableRow.Key) and, for
// functions and stacks, its shorter form for a table (function names without
// their import path; "" means the same as the key).
func (g GroupBy) key(s *profile.Sample) (key, display string) {
	switch g.Kind {
	case GroupByType, "":
		return tableFirstLabel(s, LabelType), ""
	case GroupByLabel:
		return tableFirstLabel(s, g.Label), ""
	case GroupByFunc:
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				if ln.Function != nil && ln.Function.Name != "" {
					return ln.Function.Name, ShortFuncName(ln.Function.Name)
				}
			}
			break // the leaf location has no symbolized function
		}
		if len(s.Location) > 0 && s.Location[0].Address != 0 {
			return fmt.Sprintf("0x%x", s.Location[0].Address), ""
		}
		return NoneKey, ""
	default: // stack
		var full, short []string
		for _, loc := range s.Location {
			n := 0
			for _, ln := range loc.Line {
				if ln.Function != nil && ln.Function.Name != "" {
					full = append(full, ln.Function.Name)
					short = append(short, ShortFuncName(ln.Function.Name))
					n++
				}
			}
			if n == 0 {
				a := fmt.Sprintf("0x%x", loc.Address)
				full, short = append(full, a), append(short, a)
			}
		}
		if len(full) == 0 {
			return NoneKey, ""
		}
		return strings.Join(full, StackSep), strings.Join(short, StackSep)
	}
}

// ShortFuncName drops the import path of a function name, keeping the last
// package name: "github.com/a/b/pkg.(*T).M" -> "pkg.(*T).M".
func ShortFuncName(name string) string {
	// The import path ends at the last slash before the first '.' that
	// follows it; generic brackets may hold slashes, so look before '['.
	head := name
	if i := strings.IndexByte(head, '['); i >= 0 {
		head = head[:i]
	}
	if i := strings.LastIndexByte(head, '/'); i >= 0 {
		return name[i+1:]
	}
	return name
}

func tableFirstLabel(s *profile.Sample, key string) string {
	if v := s.Label[key]; len(v) > 0 {
		return v[0]
	}
	return NoneKey
}

func tableFirstNumLabel(s *profile.Sample, key string) (int64, bool) {
	if v := s.NumLabel[key]; len(v) > 0 {
		return v[0], true
	}
	return 0, false
}

// TableOptions configure [Table].
type TableOptions struct {
	// By is the grouping; the zero value groups by type.
	By GroupBy
	// InUse selects the bytes of objects still in use instead of the bytes
	// allocated. In-use intervals are conservative: the profile does not
	// record the tail of in-use events, so they cover every possible tail.
	InUse bool
	// N keeps the N largest groups in TableResult.Rows; 0 keeps all. The
	// total always covers every group.
	N int
	// Confidence of the intervals, strictly between 0 and 1; 0 means 0.95.
	Confidence float64
}

// TableRow is one group of a [Table] (or its total).
type TableRow struct {
	// Key identifies the group: a type name, a full function name, a stack
	// of full function names joined by [StackSep] leaf first, a label value,
	// or [NoneKey]; "total" for the total row.
	Key string
	// Display is Key as a table shows it: function names without their
	// import path. It equals Key for types and labels.
	Display string
	// Samples is the number of sample events (for in-use: events whose
	// objects are still in use, recovered from the in-use bytes).
	Samples int64
	// SamplesMax equals Samples, except for in-use rows with overflow
	// samples (mixed object sizes, no size label), whose event count is
	// only bounded: Samples <= count <= SamplesMax.
	SamplesMax int64
	// Tail is the raw sum of size-offset over the events. For in-use rows
	// the profile does not record it: Tail and TailMax bound it.
	Tail, TailMax int64
	// Bytes and Objects are the estimates: sums of the profile's values.
	Bytes, Objects int64
	// Lo and Hi bound the true bytes at the table's confidence.
	Lo, Hi float64
	// Share is Bytes as a fraction of the total's bytes (0 if that is 0).
	Share float64
}

// TableResult is the outcome of [Table].
type TableResult struct {
	By         GroupBy
	InUse      bool
	Confidence float64
	// Window is the profile's window marking (see [WindowOf]).
	Window profiler.Window
	// Groups is the number of groups, Rows the largest of them (at most
	// TableOptions.N), sorted by bytes, largest first, ties by key.
	Groups int
	Rows   []TableRow
	// Total covers every group; its Key is "total".
	Total TableRow
}

// tableIndexes returns the position of each of the profile's sample types
// (see [SampleTypes]) in Sample.Value, looking them up by type and unit.
func tableIndexes(p *profile.Profile) ([numSampleTypes]int, error) {
	var idx [numSampleTypes]int
	var missing []string
	for i, want := range SampleTypes() {
		idx[i] = -1
		for j, st := range p.SampleType {
			if st.Type == want.Type && st.Unit == want.Unit {
				idx[i] = j
				break
			}
		}
		if idx[i] < 0 {
			missing = append(missing, want.Type+"/"+want.Unit)
		}
	}
	if len(missing) > 0 {
		return idx, fmt.Errorf("export: not an arenaprof profile: it lacks the sample types %s", strings.Join(missing, ", "))
	}
	for _, s := range p.Sample {
		if len(s.Value) != len(p.SampleType) {
			return idx, fmt.Errorf("export: malformed profile: a sample has %d values for %d sample types", len(s.Value), len(p.SampleType))
		}
	}
	return idx, nil
}

// tableStratum holds the raw sums of one group under one mean. For in-use
// samples the tail is only bounded: tailLo <= u <= tailHi.
type tableStratum struct {
	samples, samplesHi, tailLo, tailHi int64
}

// tableGroup accumulates one row.
type tableGroup struct {
	row    TableRow
	strata map[int64]*tableStratum // by sampling mean
}

// errTableOverflow reports sums too large for int64.
var errTableOverflow = errors.New("export: sums overflow int64")

func tableAdd(a *int64, b int64, err *error) {
	r := *a + b // wraps on overflow, which is detected below
	if (b > 0 && r < *a) || (b < 0 && r > *a) {
		*err = errTableOverflow
		return
	}
	*a = r
}

// tableSampleMean returns the mean a sample's events were drawn under: its
// sampling_mean label, else the profile's Period.
func tableSampleMean(s *profile.Sample, period int64) (int64, error) {
	m, ok := tableFirstNumLabel(s, LabelMean)
	if !ok {
		m = period
	}
	if m < 1 || m > profiler.MaxMeanBytes {
		if ok {
			return 0, fmt.Errorf("export: a sample has sampling_mean %d, outside [1, %d]", m, int64(profiler.MaxMeanBytes))
		}
		return 0, fmt.Errorf("export: a sample has no sampling_mean label and the profile's period %d is outside [1, %d]", m, int64(profiler.MaxMeanBytes))
	}
	return m, nil
}

// checkSampleMean refuses a sample whose allocated bytes contradict the
// mean it claims (its sampling_mean label, or the profile's period): a
// profile whose labels were rewritten, or merged from profiles of different
// means under one label, would otherwise give intervals for the wrong mean.
//
// The exporter writes alloc_space = round(n * WeightedBytes(size, mean))
// for n events of one size; merging or subtracting profiles adds at most
// one unit of rounding per event (and one for a subtraction), so a sample
// is refused when alloc_space is off by more than n+1. An overflow sample
// (mixed sizes, no size label) is refused when alloc_space is below
// n*mean - (n+1): every event's weight is at least the mean.
func checkSampleMean(s *profile.Sample, allocBytes, n, tail, mean int64) error {
	if n <= 0 || allocBytes < 0 || tail < 0 {
		return nil
	}
	tol := float64(n) + 1
	size, ok := tableFirstNumLabel(s, LabelBytes)
	if !ok {
		if want := float64(n) * float64(mean); float64(allocBytes) < want-tol {
			return fmt.Errorf("export: a sample contradicts its sampling mean %d: %d events weigh at least %.0f bytes at that mean, the sample has %d allocated bytes", mean, n, want, allocBytes)
		}
		return nil
	}
	w, err := profiler.WeightedBytes(size, mean)
	if err != nil {
		return fmt.Errorf("export: a sample has an unusable size or mean: %v", err)
	}
	if want := float64(n) * w; math.Abs(float64(allocBytes)-want) > tol {
		return fmt.Errorf("export: a sample contradicts its sampling mean %d: %d events of %d bytes weigh %.0f bytes at that mean, the sample has %d allocated bytes", mean, n, size, want, allocBytes)
	}
	if tail < n || float64(tail) > float64(n)*float64(size) {
		return fmt.Errorf("export: a sample's tail %d is outside [%d, %d] for %d events of %d bytes", tail, n, n*size, n, size)
	}
	return nil
}

// Table groups the samples of an arenaprof profile and returns, for each
// group, the sample events, the estimated bytes and objects and the interval
// of the true bytes at the chosen confidence, largest group first, with a
// total row.
//
// Intervals come from each group's raw sums (alloc_samples, alloc_tail),
// split by sampling_mean (a sample without one counts under the profile's
// Period), with [profiler.GroupInterval] at the profile's window marking
// ([WindowOf]). For in-use rows the event count is recovered exactly from
// the in-use bytes and the object size (the exporter sums one weight per
// event and rounds once), and the unrecorded tail is bounded by
// count <= tail <= count*size; the interval runs from the lower bound at the
// smallest tail to the upper bound at the largest.
//
// A group without events (only the total of an empty profile) gets the
// interval of zero events under the profile's period, whose upper bound is
// not zero when the window's end is not on an event.
//
// Table returns an error for a profile without the arenaprof sample types,
// negative values (a delta taken out of order), a sampling mean out of
// range, a sample whose values contradict its sampling mean (see
// checkSampleMean: labels rewritten, or profiles of different means merged
// under one label), or sums that overflow.
func Table(p *profile.Profile, opts TableOptions) (*TableResult, error) {
	if p == nil {
		return nil, errors.New("export: nil profile")
	}
	conf := opts.Confidence
	if conf == 0 {
		conf = 0.95
	}
	if !(conf > 0 && conf < 1) {
		return nil, fmt.Errorf("export: confidence %v is not strictly between 0 and 1", conf)
	}
	if opts.N < 0 {
		return nil, fmt.Errorf("export: negative number of rows %d", opts.N)
	}
	switch opts.By.Kind {
	case "", GroupByType, GroupByFunc, GroupByStack:
	case GroupByLabel:
		if opts.By.Label == "" {
			return nil, errors.New("export: grouping by label needs a label key")
		}
	default:
		return nil, fmt.Errorf("export: unknown grouping %q", string(opts.By.Kind))
	}
	by := opts.By
	if by.Kind == "" {
		by.Kind = GroupByType
	}
	idx, err := tableIndexes(p)
	if err != nil {
		return nil, err
	}
	groups, total, err := tableGroups(p, idx, by, opts.InUse)
	if err != nil {
		return nil, err
	}
	shown := groups
	if opts.N > 0 && len(shown) > opts.N {
		shown = shown[:opts.N]
	}
	w := WindowOf(p)
	res := &TableResult{By: by, InUse: opts.InUse, Confidence: conf, Window: w, Groups: len(groups)}
	for _, g := range append(shown[:len(shown):len(shown)], total) {
		if err := g.interval(conf, w, p.Period); err != nil {
			return nil, err
		}
		g.row.Share = tableShare(g.row.Bytes, total.row.Bytes)
	}
	res.Rows = make([]TableRow, len(shown))
	for i, g := range shown {
		res.Rows[i] = g.row
	}
	res.Total = total.row
	return res, nil
}

func tableShare(part, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return float64(part) / float64(total)
}

// tableGroups aggregates the samples of p by g and returns the groups,
// sorted, and the total over all of them.
func tableGroups(p *profile.Profile, idx [numSampleTypes]int, g GroupBy, inuse bool) ([]*tableGroup, *tableGroup, error) {
	byKey := map[string]*tableGroup{}
	total := &tableGroup{row: TableRow{Key: "total", Display: "total"}, strata: map[int64]*tableStratum{}}
	what := "alloc"
	if inuse {
		what = "inuse"
	}
	var err error
	for _, s := range p.Sample {
		v := func(i int) int64 { return s.Value[idx[i]] }
		var bytes, objects, samples, samplesHi, tailLo, tailHi int64
		if inuse {
			bytes, objects = v(IndexInuseSpace), v(IndexInuseObjects)
		} else {
			bytes, objects = v(IndexAllocSpace), v(IndexAllocObjects)
			samples, tailLo = v(IndexAllocSamples), v(IndexAllocTail)
			samplesHi, tailHi = samples, tailLo
		}
		if bytes == 0 && objects == 0 && samples == 0 && tailLo == 0 {
			continue // empty bucket, e.g. in a delta profile
		}
		if bytes < 0 || objects < 0 || samples < 0 || tailLo < 0 {
			return nil, nil, fmt.Errorf("export: a sample has negative values (%s bytes %d, objects %d, sample events %d, tail %d); subtract profiles only in time order", what, bytes, objects, samples, tailLo)
		}
		mean, merr := tableSampleMean(s, p.Period)
		if merr != nil {
			return nil, nil, merr
		}
		if err := checkSampleMean(s, v(IndexAllocSpace), v(IndexAllocSamples), v(IndexAllocTail), mean); err != nil {
			return nil, nil, err
		}
		if inuse {
			samples, samplesHi, tailLo, tailHi, err = inuseRawSums(s, bytes, mean)
			if err != nil {
				return nil, nil, err
			}
		}
		key, display := g.key(s)
		grp := byKey[key]
		if grp == nil {
			if display == "" {
				display = key
			}
			grp = &tableGroup{row: TableRow{Key: key, Display: display}, strata: map[int64]*tableStratum{}}
			byKey[key] = grp
		}
		for _, t := range []*tableGroup{grp, total} {
			tableAdd(&t.row.Bytes, bytes, &err)
			tableAdd(&t.row.Objects, objects, &err)
			tableAdd(&t.row.Samples, samples, &err)
			tableAdd(&t.row.SamplesMax, samplesHi, &err)
			tableAdd(&t.row.Tail, tailLo, &err)
			tableAdd(&t.row.TailMax, tailHi, &err)
			st := t.strata[mean]
			if st == nil {
				st = &tableStratum{}
				t.strata[mean] = st
			}
			tableAdd(&st.samples, samples, &err)
			tableAdd(&st.samplesHi, samplesHi, &err)
			tableAdd(&st.tailLo, tailLo, &err)
			tableAdd(&st.tailHi, tailHi, &err)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	groups := make([]*tableGroup, 0, len(byKey))
	for _, grp := range byKey {
		groups = append(groups, grp)
	}
	sort.Slice(groups, func(i, j int) bool {
		if groups[i].row.Bytes != groups[j].row.Bytes {
			return groups[i].row.Bytes > groups[j].row.Bytes
		}
		return groups[i].row.Key < groups[j].row.Key
	})
	return groups, total, nil
}

// inuseRawSums recovers the raw sums of the in-use objects of one sample:
// bounds on its event count and on its tail.
//
// With the object size (the bytes label): the exporter sums the same weight
// WeightedBytes(size, mean) for every in-use event of the sample and rounds
// once, so the event count is round(inuse_space / weight) exactly. The tail
// of the in-use events was not recorded; each event contributes size-offset
// in [1, size], so count <= u <= count*size.
//
// Without it (an overflow sample, which aggregates objects of mixed sizes):
// every event's weight w = size/(1-(1-1/mean)^size) is at least mean and at
// least size, and the in-use bytes B are the rounded sum of the weights, so
// 1 <= count <= (B+1/2)/mean and count <= u <= B. Interval bounds grow with
// both the count and the tail, so the lower bound taken at the smallest
// (count, tail) and the upper at the largest still cover.
func inuseRawSums(s *profile.Sample, inuseBytes, mean int64) (count, countHi, tailLo, tailHi int64, err error) {
	size, ok := tableFirstNumLabel(s, LabelBytes)
	if !ok {
		if inuseBytes <= 0 {
			return 0, 0, 0, 0, nil
		}
		countHi = max(1, int64((float64(inuseBytes)+0.5)/float64(mean)))
		return 1, countHi, 1, inuseBytes, nil
	}
	w, werr := profiler.WeightedBytes(size, mean)
	if werr != nil {
		return 0, 0, 0, 0, fmt.Errorf("export: a sample has an unusable size or mean: %v", werr)
	}
	c := math.Round(float64(inuseBytes) / w)
	if inuseBytes > 0 && c < 1 {
		return 0, 0, 0, 0, fmt.Errorf("export: a sample has %d in-use bytes, less than the weight %.0f of one event of %d bytes at mean %d", inuseBytes, w, size, mean)
	}
	if c >= math.MaxInt64 {
		return 0, 0, 0, 0, errTableOverflow
	}
	count = int64(c)
	hi, lo := bits.Mul64(uint64(count), uint64(size))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, 0, 0, 0, errTableOverflow
	}
	return count, count, count, int64(lo), nil
}

// interval fills row.Lo and row.Hi from the strata. For alloc the tail is
// exact; for inuse Lo uses the smallest possible tail and Hi the largest.
func (g *tableGroup) interval(conf float64, w profiler.Window, period int64) error {
	if len(g.strata) == 0 {
		if period < 1 || period > profiler.MaxMeanBytes {
			g.row.Lo, g.row.Hi = 0, 0
			return nil
		}
		g.strata[period] = &tableStratum{}
	}
	means := make([]int64, 0, len(g.strata))
	for m := range g.strata {
		means = append(means, m)
	}
	sort.Slice(means, func(i, j int) bool { return means[i] < means[j] })
	lo := make([]profiler.Stratum, len(means))
	hi := make([]profiler.Stratum, len(means))
	for i, m := range means {
		st := g.strata[m]
		lo[i] = profiler.Stratum{Samples: st.samples, Tail: st.tailLo, MeanBytes: m}
		hi[i] = profiler.Stratum{Samples: st.samplesHi, Tail: st.tailHi, MeanBytes: m}
	}
	in, err := profiler.GroupInterval(lo, conf, w)
	if err != nil {
		return fmt.Errorf("export: interval of group %q: %v", g.row.Key, err)
	}
	g.row.Lo, g.row.Hi = in.Lo, in.Hi
	if g.row.TailMax != g.row.Tail || g.row.SamplesMax != g.row.Samples {
		in, err = profiler.GroupInterval(hi, conf, w)
		if err != nil {
			return fmt.Errorf("export: interval of group %q: %v", g.row.Key, err)
		}
		g.row.Hi = in.Hi
	}
	if math.IsNaN(g.row.Lo) || math.IsNaN(g.row.Hi) || math.IsInf(g.row.Lo, 0) || math.IsInf(g.row.Hi, 0) {
		return fmt.Errorf("export: interval of group %q is not finite", g.row.Key)
	}
	return nil
}

// TableColumn is an extra column of [FormatTable], after the standard ones.
type TableColumn struct {
	// Head is the column's heading.
	Head string
	// Cell returns the cell of a row; total is true for the total row.
	Cell func(row *TableRow, total bool) string
}

// FormatOptions configure [FormatTable].
type FormatOptions struct {
	// Width is the terminal width the table is laid out for; 0 means 80.
	// The key column shrinks (to no less than 12 columns) to fit.
	Width int
	// HideObjects and HideShare leave out the OBJECTS and SHARE columns.
	HideObjects, HideShare bool
	// Extra columns follow the standard ones, right-aligned.
	Extra []TableColumn
}

// FormatTable writes r as a human-readable table: a heading that says
// what is shown, then one line per row (key, sample events, estimated
// bytes, interval, estimated objects, share) and the total. Keys too long
// for the width are shortened with an ellipsis, keeping the end of type
// names and the start of everything else; characters that would break the
// layout become '?'. Lines have no trailing spaces.
func FormatTable(w io.Writer, r *TableResult, opts FormatOptions) error {
	if r == nil {
		return errors.New("export: nil table")
	}
	width := opts.Width
	if width <= 0 {
		width = 80
	}
	what := "allocated bytes"
	if r.InUse {
		what = "in-use bytes"
	}
	confPct := strconv.FormatFloat(r.Confidence*100, 'g', 6, 64) + "%"
	var b strings.Builder
	fmt.Fprintf(&b, "%s by %s, %s intervals, window %s\n", what, r.By, confPct, r.Window.String())
	if len(r.Rows) < r.Groups {
		fmt.Fprintf(&b, "showing %d of %d groups; the total covers all of them\n", len(r.Rows), r.Groups)
	} else {
		fmt.Fprintf(&b, "%d %s\n", r.Groups, map[bool]string{true: "group", false: "groups"}[r.Groups == 1])
	}
	if r.InUse {
		b.WriteString("in-use intervals are conservative: they allow for any tail of the events\n")
	}
	b.WriteString("\n")

	keyHead := map[GroupKind]string{GroupByType: "TYPE", GroupByFunc: "FUNCTION", GroupByStack: "STACK (LEAF FIRST)", "": "TYPE"}[r.By.Kind]
	if r.By.Kind == GroupByLabel {
		keyHead = "LABEL " + r.By.Label
	}
	const intervalCol = 3
	head := []string{keyHead, "SAMPLES", "BYTES", confPct + " INTERVAL"}
	if !opts.HideObjects {
		head = append(head, "OBJECTS")
	}
	if !opts.HideShare {
		head = append(head, "SHARE")
	}
	for _, c := range opts.Extra {
		head = append(head, c.Head)
	}
	rows := append(r.Rows[:len(r.Rows):len(r.Rows)], r.Total)
	cells := make([][]string, 0, len(rows))
	for i := range rows {
		g := &rows[i]
		key := g.Display
		if key == "" {
			key = g.Key
		}
		row := []string{
			tablePrintable(key),
			strconv.FormatInt(g.Samples, 10),
			HumanBytes(float64(g.Bytes)),
			"[" + HumanBytes(g.Lo) + ", " + HumanBytes(g.Hi) + "]",
		}
		if !opts.HideObjects {
			row = append(row, HumanCount(float64(g.Objects)))
		}
		if !opts.HideShare {
			row = append(row, strconv.FormatFloat(100*g.Share, 'f', 1, 64)+"%")
		}
		for _, c := range opts.Extra {
			cell := ""
			if c.Cell != nil {
				cell = tablePrintable(c.Cell(g, i == len(rows)-1))
			}
			row = append(row, cell)
		}
		cells = append(cells, row)
	}
	widths := make([]int, len(head))
	for i, h := range head {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, row := range cells {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	const gap = 2
	rest := 0
	for _, wd := range widths[1:] {
		rest += gap + wd
	}
	widths[0] = min(widths[0], max(width-rest, 12))
	fromLeft := r.By.Kind == GroupByType || r.By.Kind == "" // type names end in the informative part
	writeRow := func(row []string, key string) {
		b.WriteString(tablePadRight(key, widths[0]))
		for i := 1; i < len(row); i++ {
			b.WriteString(strings.Repeat(" ", gap))
			if i == intervalCol {
				b.WriteString(tablePadRight(row[i], widths[i]))
			} else {
				b.WriteString(tablePadLeft(row[i], widths[i]))
			}
		}
		b.WriteString("\n")
	}
	writeRow(head, tableTruncate(head[0], widths[0], false))
	for _, row := range cells {
		writeRow(row, tableTruncate(row[0], widths[0], fromLeft))
	}
	// Trailing spaces from padding the interval column are not wanted.
	lines := strings.Split(b.String(), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

// tablePrintable replaces characters that would break the table layout.
func tablePrintable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, s)
}

// tableTruncate shortens s to width runes with an ellipsis, keeping its end
// when fromLeft and its start otherwise (stacks begin at the leaf).
func tableTruncate(s string, width int, fromLeft bool) string {
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	if width < 1 {
		return ""
	}
	if fromLeft {
		return "…" + string(r[len(r)-(width-1):])
	}
	return string(r[:width-1]) + "…"
}

func tablePadRight(s string, w int) string {
	return s + strings.Repeat(" ", max(0, w-utf8.RuneCountInString(s)))
}

func tablePadLeft(s string, w int) string {
	return strings.Repeat(" ", max(0, w-utf8.RuneCountInString(s))) + s
}

// tableThreeDigits formats x (>= 0, < 1000) with three significant digits.
func tableThreeDigits(x float64) string {
	switch {
	case x < 9.995:
		return strconv.FormatFloat(x, 'f', 2, 64)
	case x < 99.95:
		return strconv.FormatFloat(x, 'f', 1, 64)
	default:
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
}

// HumanBytes formats a byte count with binary units and three significant
// digits: 512B, 1.23KiB, 45.6MiB, 789GiB. Negative, infinite or NaN is "?".
func HumanBytes(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return "?"
	}
	if x < 999.5 {
		return strconv.FormatFloat(x, 'f', 0, 64) + "B"
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	for i, u := range units {
		x /= 1024
		if x < 999.5 || i == len(units)-1 {
			return tableThreeDigits(x) + u
		}
	}
	panic("unreachable")
}

// HumanCount formats an object count with SI suffixes: 999, 1.23k, 45.6M.
// A negative, infinite or NaN count is "?".
func HumanCount(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return "?"
	}
	if x < 999.5 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	units := []string{"k", "M", "G", "T", "P", "E"}
	for i, u := range units {
		x /= 1000
		if x < 999.5 || i == len(units)-1 {
			return tableThreeDigits(x) + u
		}
	}
	panic("unreachable")
}
