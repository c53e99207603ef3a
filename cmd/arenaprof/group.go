package main

import (
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/profiler"
)

// groupBy says how top groups samples: by Go type, leaf function, whole
// stack, or one string label.
type groupBy struct {
	kind  string // "type", "func", "stack" or "label"
	label string // the label key when kind is "label"
}

// noneKey is the group of samples that lack the grouping attribute.
const noneKey = "(none)"

// stackSep joins the frames of a stack, leaf first.
const stackSep = " < "

func parseGroupBy(s string) (groupBy, error) {
	switch s {
	case "type", "func", "stack":
		return groupBy{kind: s}, nil
	}
	if k, ok := strings.CutPrefix(s, "label="); ok {
		if k == "" {
			return groupBy{}, topUsageErr("-by label= needs a label key, e.g. -by label=handler")
		}
		return groupBy{kind: "label", label: k}, nil
	}
	return groupBy{}, topUsageErr("unknown -by %q; use type, func, stack or label=KEY", s)
}

func (g groupBy) String() string {
	if g.kind == "label" {
		return "label=" + g.label
	}
	return g.kind
}

// key returns the group key of a sample (full, for JSON) and, for functions
// and stacks, its form for the table (function names without their import
// path; "" means the same as the key).
func (g groupBy) key(s *profile.Sample) (key, display string) {
	switch g.kind {
	case "type":
		return firstLabel(s, labelType), ""
	case "label":
		return firstLabel(s, g.label), ""
	case "func":
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				if ln.Function != nil && ln.Function.Name != "" {
					return ln.Function.Name, shortFuncName(ln.Function.Name)
				}
			}
			break // the leaf location has no symbolized function
		}
		if len(s.Location) > 0 && s.Location[0].Address != 0 {
			return fmt.Sprintf("0x%x", s.Location[0].Address), ""
		}
		return noneKey, ""
	default: // stack
		var full, short []string
		for _, loc := range s.Location {
			n := 0
			for _, ln := range loc.Line {
				if ln.Function != nil && ln.Function.Name != "" {
					full = append(full, ln.Function.Name)
					short = append(short, shortFuncName(ln.Function.Name))
					n++
				}
			}
			if n == 0 {
				a := fmt.Sprintf("0x%x", loc.Address)
				full, short = append(full, a), append(short, a)
			}
		}
		if len(full) == 0 {
			return noneKey, ""
		}
		return strings.Join(full, stackSep), strings.Join(short, stackSep)
	}
}

// shortFuncName drops the import path of a function name, keeping the last
// package name: "github.com/a/b/pkg.(*T).M" -> "pkg.(*T).M".
func shortFuncName(name string) string {
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

func firstLabel(s *profile.Sample, key string) string {
	if v := s.Label[key]; len(v) > 0 {
		return v[0]
	}
	return noneKey
}

func firstNumLabel(s *profile.Sample, key string) (int64, bool) {
	if v := s.NumLabel[key]; len(v) > 0 {
		return v[0], true
	}
	return 0, false
}

// stratumSums are the raw sums of one group under one mean. For in-use
// samples the tail is only bounded: tailLo <= u <= tailHi.
type stratumSums struct {
	samples, tailLo, tailHi int64
}

// topGroup accumulates one row of the table.
type topGroup struct {
	key, display string
	samples      int64
	tailLo       int64 // exact tail for alloc; lower bound for inuse
	tailHi       int64 // equal to tailLo for alloc
	bytes        int64
	objects      int64
	strata       map[int64]*stratumSums // by sampling mean
	lo, hi       float64
}

// groupInterval computes the interval of a group from its strata; a variable
// so that tests of the output format can run before the statistics exist.
var groupInterval = profiler.GroupInterval

// errSumOverflow reports sums too large for int64.
var errSumOverflow = fmt.Errorf("sums overflow int64")

func addInt64(a *int64, b int64, err *error) {
	r := *a + b // wraps on overflow, which is detected below
	if (b > 0 && r < *a) || (b < 0 && r > *a) {
		*err = errSumOverflow
		return
	}
	*a = r
}

// sampleMean returns the mean a sample's events were drawn under: its
// sampling_mean label, else the profile's Period.
func sampleMean(s *profile.Sample, period int64) (int64, error) {
	m, ok := firstNumLabel(s, numLabelMean)
	if !ok {
		m = period
	}
	if m < 1 || m > profiler.MaxMeanBytes {
		if ok {
			return 0, fmt.Errorf("a sample has sampling_mean %d, outside [1, %d]", m, int64(profiler.MaxMeanBytes))
		}
		return 0, fmt.Errorf("a sample has no sampling_mean label and the profile's period %d is outside [1, %d]", m, int64(profiler.MaxMeanBytes))
	}
	return m, nil
}

// groupSamples aggregates the samples of ap by g for the chosen sample kind
// ("alloc" or "inuse") and returns the groups and the total over all of them
// (the total's key is "total").
func groupSamples(ap *arenaProfile, g groupBy, sample string) ([]*topGroup, *topGroup, error) {
	byKey := map[string]*topGroup{}
	total := &topGroup{key: "total", strata: map[int64]*stratumSums{}}
	var err error
	for _, s := range ap.prof.Sample {
		v := func(i int) int64 { return s.Value[ap.index[i]] }
		var bytes, objects, samples, tailLo, tailHi int64
		if sample == "inuse" {
			bytes, objects = v(stInuseSpace), v(stInuseObjects)
		} else {
			bytes, objects = v(stAllocSpace), v(stAllocObjects)
			samples, tailLo = v(stAllocSamples), v(stAllocTail)
			tailHi = tailLo
		}
		if bytes == 0 && objects == 0 && samples == 0 && tailLo == 0 {
			continue // empty bucket, e.g. in a delta profile
		}
		if bytes < 0 || objects < 0 || samples < 0 || tailLo < 0 {
			return nil, nil, fmt.Errorf("a sample has negative values (%s bytes %d, objects %d, sample events %d, tail %d); subtract profiles only in time order", sample, bytes, objects, samples, tailLo)
		}
		mean, merr := sampleMean(s, ap.prof.Period)
		if merr != nil {
			return nil, nil, merr
		}
		if sample == "inuse" {
			samples, tailLo, tailHi, err = inuseRawSums(s, bytes, mean)
			if err != nil {
				return nil, nil, err
			}
		}
		key, display := g.key(s)
		grp := byKey[key]
		if grp == nil {
			grp = &topGroup{key: key, display: display, strata: map[int64]*stratumSums{}}
			byKey[key] = grp
		}
		for _, t := range []*topGroup{grp, total} {
			addInt64(&t.bytes, bytes, &err)
			addInt64(&t.objects, objects, &err)
			addInt64(&t.samples, samples, &err)
			addInt64(&t.tailLo, tailLo, &err)
			addInt64(&t.tailHi, tailHi, &err)
			st := t.strata[mean]
			if st == nil {
				st = &stratumSums{}
				t.strata[mean] = st
			}
			addInt64(&st.samples, samples, &err)
			addInt64(&st.tailLo, tailLo, &err)
			addInt64(&st.tailHi, tailHi, &err)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	groups := make([]*topGroup, 0, len(byKey))
	for _, grp := range byKey {
		groups = append(groups, grp)
	}
	sort.Slice(groups, func(i, j int) bool {
		if groups[i].bytes != groups[j].bytes {
			return groups[i].bytes > groups[j].bytes
		}
		return groups[i].key < groups[j].key
	})
	return groups, total, nil
}

// inuseRawSums recovers the raw sums of the in-use objects of one bucket.
// The exporter sums the same weight WeightedBytes(size, mean) for every
// in-use event of the bucket and rounds once, so the event count is
// round(inuse_space / weight) exactly. The tail of the in-use events was
// not recorded; each event contributes size-offset in [1, size], so
// count <= u <= count*size.
func inuseRawSums(s *profile.Sample, inuseBytes, mean int64) (count, tailLo, tailHi int64, err error) {
	size, ok := firstNumLabel(s, numLabelSize)
	if !ok {
		return 0, 0, 0, fmt.Errorf("a sample has in-use bytes but no %q label with the object size, so its event count cannot be recovered", numLabelSize)
	}
	w, werr := profiler.WeightedBytes(size, mean)
	if werr != nil {
		return 0, 0, 0, fmt.Errorf("a sample has an unusable size or mean: %v", werr)
	}
	c := math.Round(float64(inuseBytes) / w)
	if inuseBytes > 0 && c < 1 {
		return 0, 0, 0, fmt.Errorf("a sample has %d in-use bytes, less than the weight %.0f of one event of %d bytes at mean %d", inuseBytes, w, size, mean)
	}
	if c >= math.MaxInt64 {
		return 0, 0, 0, errSumOverflow
	}
	count = int64(c)
	hi, lo := bits.Mul64(uint64(count), uint64(size))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, 0, 0, errSumOverflow
	}
	return count, count, int64(lo), nil
}

// computeGroupIntervals fills lo and hi of each group. For alloc the tail is
// exact; for inuse lo uses the smallest possible tail and hi the largest,
// which is conservative (the interval covers every tail consistent with the
// recorded counts).
//
// A group without events (only the total of an empty profile) gets the
// interval of zero events under the profile's period, whose upper bound is
// not zero when the window's end is not on an event.
func computeGroupIntervals(groups []*topGroup, conf float64, w profiler.Window, period int64) error {
	for _, grp := range groups {
		if len(grp.strata) == 0 {
			if period < 1 || period > profiler.MaxMeanBytes {
				grp.lo, grp.hi = 0, 0
				continue
			}
			grp.strata[period] = &stratumSums{}
		}
		means := make([]int64, 0, len(grp.strata))
		for m := range grp.strata {
			means = append(means, m)
		}
		sort.Slice(means, func(i, j int) bool { return means[i] < means[j] })
		lo := make([]profiler.Stratum, len(means))
		hi := make([]profiler.Stratum, len(means))
		for i, m := range means {
			st := grp.strata[m]
			lo[i] = profiler.Stratum{Samples: st.samples, Tail: st.tailLo, MeanBytes: m}
			hi[i] = profiler.Stratum{Samples: st.samples, Tail: st.tailHi, MeanBytes: m}
		}
		in, err := groupInterval(lo, conf, w)
		if err != nil {
			return fmt.Errorf("interval of group %q: %v", grp.key, err)
		}
		grp.lo, grp.hi = in.Lo, in.Hi
		if grp.tailHi != grp.tailLo {
			in, err = groupInterval(hi, conf, w)
			if err != nil {
				return fmt.Errorf("interval of group %q: %v", grp.key, err)
			}
			grp.hi = in.Hi
		}
		if math.IsNaN(grp.lo) || math.IsNaN(grp.hi) || math.IsInf(grp.lo, 0) || math.IsInf(grp.hi, 0) {
			return fmt.Errorf("interval of group %q is not finite", grp.key)
		}
	}
	return nil
}
