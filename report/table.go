package report

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// TableOptions configure [Table].
type TableOptions struct {
	// By is the grouping, spelled as the arenaprof command's -by flag:
	//
	//   - "type": the Go type (the "type" label); "" means "type" too
	//   - "func": the leaf function, the caller of arena.New
	//   - "stack": the whole stack, leaf first; a key joins the frames'
	//     full function names with " < "
	//   - "size": the object size class (the "bytes" label) in powers of
	//     two of the size as the arena takes it (rounded up to 8): "1-8 B",
	//     "9-16 B", "17-32 B", and so on; samples without a size (past the
	//     profiler's bucket bound, which mix sizes) form the group
	//     "(mixed sizes)"
	//   - "label=KEY": the value of the string label KEY, such as an arena
	//     label from a context's pprof labels ("label=endpoint")
	//
	// Samples that lack the attribute (no such label, no stack) form the
	// group "(none)". A Go heap profile has no types; a live-arenas
	// profile ([Holdings]) has neither types nor sizes. Any other value is
	// an error of Table (and of [Diff], [Advise] and [Holdings], which
	// take the same spellings).
	By string
	// InUse selects the bytes of objects still in use instead of the bytes
	// allocated. In-use intervals are conservative: the profile does not
	// record the tail of in-use events, so they cover every possible tail.
	InUse bool
	// N keeps the N largest groups in TableResult.Rows; 0 keeps all. The
	// total always covers every group.
	N int
	// Confidence of the intervals, strictly between 0 and 1; 0 means 0.95.
	Confidence float64
	// GoVersion names the Go release whose runtime sampled the Go heap
	// samples of a profile that does not say (runtime/pprof's profiles;
	// arenaprof's say it in a comment, which wins), as runtime.Version()
	// spells it or as a language version ("go1.23"). "" means the rule of
	// Go 1.24 and later, which every supported release has. See the
	// package documentation, "The Go heap sampler".
	GoVersion string
	// AnyOrder widens the interval of every Go heap row to hold for any
	// order of the process's allocations (the total row always does).
	AnyOrder bool
}

// TableRow is one group of a [Table] (or its total).
type TableRow struct {
	// Key identifies the group (see [TableOptions.By]): a type name, a full
	// function name, a stack of full function names joined by " < " leaf
	// first, a size class, a label value, or "(none)" for samples that
	// lack the attribute; "total" for the total row.
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
	// Bytes and Objects are the estimates: sums of the profile's values,
	// except for Go heap samples drawn by the Go 1.24 sampler, which get
	// the weights that make them unbiased (see HeapSampler): above
	// runtime/pprof's values, and go tool pprof's, by about one byte per
	// sample.
	Bytes, Objects int64
	// Lo and Hi bound the true bytes at the table's confidence.
	Lo, Hi float64
	// Share is Bytes as a fraction of the total's bytes (0 if that is 0).
	Share float64
}

// TableResult is the outcome of [Table].
type TableResult struct {
	By         string // the grouping, "" spelled "type"
	InUse      bool
	Confidence float64
	// Window is the profile's window marking: "aligned", "start", "end" or
	// "both" (see the package documentation, Intervals); it does not
	// apply to a Go heap profile.
	Window string
	// GoHeap is set for a heap or allocs profile of the Go runtime, and
	// HeapRate is the runtime.MemProfileRate of its samples (or of the Go
	// heap samples of a combined memory profile; 0 if there are none).
	GoHeap   bool
	HeapRate int64
	// HeapSampler is the Go heap sampler's rule the Go heap estimates and
	// intervals assume, "go1.24" (Go 1.24 and later) or "go1.23" (Go 1.23
	// and earlier), and HeapGoVersion the release it was chosen by: the
	// profile's "arenaprof go=" comment, TableOptions.GoVersion, or ""
	// when neither names one (the go1.24 rule is assumed). Both are ""
	// without Go heap samples. AnyOrder is TableOptions.AnyOrder.
	HeapSampler, HeapGoVersion string
	AnyOrder                   bool
	// Groups is the number of groups, Rows the largest of them (at most
	// TableOptions.N), sorted by bytes, largest first, ties by key.
	Groups int
	Rows   []TableRow
	// Total covers every group; its Key is "total".
	Total TableRow
	// UnseenHi bounds, at the table's confidence, the bytes of any group
	// with no sample in the profile (a type absent from Rows): the upper
	// bound of zero events under every mean in force. It is 0 only for a
	// window whose end is on an event.
	UnseenHi float64
	// Heading is what [FormatTable] writes above the table, a line each:
	// what is shown (the sample, the grouping, the confidence, the window
	// or the Go heap's MemProfileRate), how many groups, and the notes on
	// in-use intervals and the Go heap sampler's rule. Table sets it from
	// the fields above; a caller that changes them sets it again (or
	// leaves it, and the heading says what Table returned).
	Heading []string
}

// group accumulates one row: its totals, and its raw sums under the
// profile's model.
type group struct {
	row   TableRow
	sums  sums
	ratio struct{ lo, hi ratioSums } // for Diff (see ratio.go)
}

// add adds one sample's contribution to the group.
func (g *group) add(c contribution, err *error) {
	addChecked(&g.row.Bytes, c.bytes, err)
	addChecked(&g.row.Objects, c.objects, err)
	addChecked(&g.row.Samples, c.samples, err)
	addChecked(&g.row.SamplesMax, c.samplesHi, err)
	addChecked(&g.row.Tail, c.tailLo, err)
	addChecked(&g.row.TailMax, c.tailHi, err)
	g.sums.add(c, err)
	g.ratio.lo.addTerms(c.ratio, false)
	g.ratio.hi.addTerms(c.ratio, true)
}

// bound sets the row's interval at confidence conf.
func (g *group) bound(conf float64) (err error) {
	g.row.Lo, g.row.Hi, err = g.sums.interval(&g.row, conf)
	return err
}

// errOverflow reports sums too large for int64.
var errOverflow = errors.New("report: sums overflow int64")

func addChecked(a *int64, b int64, err *error) {
	r := *a + b // wraps on overflow, which is detected below
	if (b > 0 && r < *a) || (b < 0 && r > *a) {
		*err = errOverflow
		return
	}
	*a = r
}

// Table groups the samples of a profile (an arenaprof profile, a combined
// memory profile, or a Go heap or allocs profile) and returns, for each
// group, the sample events, the estimated bytes and objects, and an
// interval of the true bytes at the chosen confidence, largest group
// first, with a total row. The package documentation says how each kind
// of profile is bounded.
//
// For an arenaprof profile the intervals come from each group's raw sums
// per sampling mean (a sample without a sampling_mean label counts under
// the profile's Period), at the profile's window marking. For in-use rows
// the event count is recovered exactly from the in-use bytes and the
// object size (the exporter sums one weight per event and rounds once),
// and the unrecorded tail is bounded by count <= tail <= count*size; the
// interval runs from the lower bound at the smallest tail to the upper
// bound at the largest.
//
// Every group also gets zero events under each sampling mean the profile
// lists as in force (its "arenaprof means=" comments, or "arenaprof
// inuse_means=" for in-use values) under which it had none: bytes may
// have been allocated under that mean without drawing an event, and the
// upper bound allows for them. A group without events in a profile
// without such comments (only the total of an empty profile) gets the
// interval of zero events under the profile's period, whose upper bound
// is not zero when the window's end is not on an event. UnseenHi is the
// upper bound of a group with no sample at all.
//
// Table returns an error for a profile of anything but sampled memory,
// negative values (a delta taken out of order), a sampling mean out of
// range, a sample whose values contradict its sampling mean (labels
// rewritten, or profiles of different means merged under one label), a
// malformed means comment, or sums that overflow.
func Table(p *profile.Profile, opts TableOptions) (*TableResult, error) {
	if p == nil {
		return nil, errors.New("report: nil profile")
	}
	f, _ := pprofmt.Describe(p) // table returns its error where it checks the means
	t, err := table(p, f, opts)
	if err != nil {
		return nil, err
	}
	return t.res, nil
}

// grouped is a profile read into groups: the table, and each group's raw
// sums, for Diff.
type grouped struct {
	res    *TableResult
	groups map[string]*group
	total  *group
}

// table reads p, whose facts are f, with the model of its samples and
// groups them.
func table(p *profile.Profile, f *pprofmt.Facts, opts TableOptions) (*grouped, error) {
	conf, by, err := checkTableOptions(opts)
	if err != nil {
		return nil, err
	}
	if by.kind() == groupByLabel {
		if err := checkLabel(f, by.label()); err != nil {
			return nil, err
		}
	}
	m, err := modelOf(f, by, opts)
	if err != nil {
		return nil, err
	}
	g, err := groupSamples(p, m, by)
	if err != nil {
		return nil, err
	}
	groups := make([]*group, 0, len(g.groups))
	for _, grp := range g.groups {
		groups = append(groups, grp)
	}
	sort.Slice(groups, func(i, j int) bool {
		if groups[i].row.Bytes != groups[j].row.Bytes {
			return groups[i].row.Bytes > groups[j].row.Bytes
		}
		return groups[i].row.Key < groups[j].row.Key
	})
	shown := groups
	if opts.N > 0 && len(shown) > opts.N {
		shown = shown[:opts.N]
	}
	_, goHeap := m.(*heapModel)
	total := g.total
	res := &TableResult{By: string(by), InUse: opts.InUse, Confidence: conf, Window: f.Window.String(),
		Groups: len(groups), HeapRate: total.sums.memProfileRate(), GoHeap: goHeap}
	if hm := heapPart(m); hm != nil && res.HeapRate != 0 {
		res.HeapSampler, res.HeapGoVersion, res.AnyOrder = hm.rule.String(), hm.goVersion, hm.anyOrder
	}
	for _, grp := range append(shown[:len(shown):len(shown)], total) {
		if err := grp.bound(conf); err != nil {
			return nil, err
		}
		grp.row.Share = share(grp.row.Bytes, total.row.Bytes)
	}
	if res.UnseenHi, err = m.unseenHi(conf); err != nil {
		return nil, err
	}
	res.Rows = make([]TableRow, len(shown))
	for i, grp := range shown {
		res.Rows[i] = grp.row
	}
	res.Total = total.row
	res.Heading = tableHeading(res)
	g.res = res
	return g, nil
}

// checkTableOptions returns the confidence and the grouping opts ask
// for, or an error for options Table refuses.
func checkTableOptions(opts TableOptions) (float64, groupBy, error) {
	conf, err := confidence(opts.Confidence)
	if err != nil {
		return 0, "", err
	}
	if opts.N < 0 {
		return 0, "", fmt.Errorf("report: negative number of rows %d", opts.N)
	}
	by := groupBy(opts.By).normal()
	return conf, by, by.check()
}

// confidence returns the confidence c asks for: 0.95 for 0, or an error
// when it is not strictly between 0 and 1.
func confidence(c float64) (float64, error) {
	if c == 0 {
		c = 0.95
	}
	if !(c > 0 && c < 1) {
		return 0, fmt.Errorf("report: confidence %v is not strictly between 0 and 1", c)
	}
	return c, nil
}

func share(part, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return float64(part) / float64(total)
}

// groupSamples reads every sample of p with m and adds it to its group by
// by, and to the total.
func groupSamples(p *profile.Profile, m model, by groupBy) (*grouped, error) {
	g := &grouped{groups: map[string]*group{}, total: &group{row: TableRow{Key: "total", Display: "total"}, sums: m.newSums(true)}}
	for _, s := range p.Sample {
		c, skip, err := m.read(s)
		if err != nil {
			return nil, err
		}
		if skip {
			continue
		}
		key := by.key(s)
		grp := g.groups[key]
		if grp == nil {
			display := by.display(key)
			if display == "" {
				display = key
			}
			grp = &group{row: TableRow{Key: key, Display: display}, sums: m.newSums(false)}
			g.groups[key] = grp
		}
		grp.add(c, &err)
		g.total.add(c, &err)
		if err != nil {
			return nil, err
		}
	}
	return g, nil
}

// checkLabel returns an error if the profile (its facts f) has samples
// but none carries the string label key, naming the labels they do carry:
// grouping by it would give a single "(none)" row.
func checkLabel(f *pprofmt.Facts, key string) error {
	if !f.HasSamples || f.Labels[key] {
		return nil
	}
	if f.NumLabels[key] {
		hint := ""
		if key == pprofmt.LabelBytes {
			hint = "; group by object size with the grouping size"
		}
		return fmt.Errorf("report: %q is a numeric label, not a string label%s", key, hint)
	}
	names := slices.Sorted(maps.Keys(f.Labels))
	if len(names) == 0 {
		return fmt.Errorf("report: no sample carries the label %q, nor any string label", key)
	}
	return fmt.Errorf("report: no sample carries the label %q; the profile's string labels are %s", key, strings.Join(names, ", "))
}
