package rss

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/goheap"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// Result is a resident-memory profile read back: the classes with their
// bytes and intervals, and the rows (sites) below them.
type Result struct {
	// RSSBytes is the RSS the profile reports; 0 when smaps was not read
	// (Smaps false: the classes are the Go classes only, mapped bytes).
	RSSBytes int64 `json:"rss_bytes"`
	Smaps    bool  `json:"smaps"`
	// Time is when the process was read.
	Time time.Time `json:"time"`
	// PeakSince, for a peak profile, is when the span whose highest RSS
	// it is began.
	PeakSince *time.Time `json:"peak_since,omitempty"`
	// CgroupCurrent and CgroupMax are the cgroup's memory.current and
	// memory.max, -1 where there are none.
	CgroupCurrent int64 `json:"cgroup_memory_current"`
	CgroupMax     int64 `json:"cgroup_memory_max"`
	// Confidence is the level of the intervals; By the grouping of rows.
	Confidence float64 `json:"confidence"`
	By         string  `json:"by"`
	// Notes are what the profile says a reader should know.
	Notes   []string   `json:"notes"`
	Classes []ClassRow `json:"classes"`
	Rows    []Row      `json:"rows"`
}

// ClassRow is one class: its bytes, exact (Lo = Hi = Bytes).
type ClassRow struct {
	Class string `json:"class"`
	Bytes int64  `json:"bytes"`
	Lo    int64  `json:"lo"`
	Hi    int64  `json:"hi"`
}

// Row is one group of a class's sites: a go/heap/live row's bytes are the
// estimate under the runtime's sampler rule, with its interval; an arena
// row's are exact (Lo = Hi = Bytes).
type Row struct {
	Class string `json:"class"`
	Key   string `json:"key"`
	Bytes int64  `json:"bytes"`
	Lo    int64  `json:"lo"`
	Hi    int64  `json:"hi"`
}

// MaxBytes bounds every byte figure of a resident-memory profile: the
// RSS, each sample, each class and their sum, and the bytes a go/heap/live
// row's sampled objects take. 2^47 bytes (128 TiB) is the whole user
// address space of linux/amd64 (4-level paging) and more physical memory
// than any machine a Go service runs on has: a profile past it is
// corrupt or forged, and its figures (a class of -1 TiB, an RSS of 8 EiB,
// sums that overflow int64 and wrap) are refused rather than printed.
const MaxBytes = 1 << 47

// refuteConf is the confidence of the interval that tells a go/heap/live
// row larger than its whole class (the class is exact; the row an
// estimate): a note says so when even this interval's lower bound is
// above the class, which a profile whose rows were all sampled at its
// MemProfileRate does with probability below 1e-9 per row. It is a note,
// not a refusal: a process that changed runtime.MemProfileRate after
// allocating gives such rows genuinely (its older records are weighed at
// the last rate).
const refuteConf = 1 - 1e-9

// stackSep joins a stack key's frames, leaf first, as report's stack
// grouping does.
const stackSep = " < "

// Parse reads a resident-memory profile: the class totals, and the rows of
// the classes with sites grouped by "func" (the leaf site's function) or
// "stack", go/heap/live's with intervals at confidence conf. It refuses a
// profile of another kind, naming what it is.
func Parse(p *profile.Profile, by string, conf float64) (*Result, error) {
	f, _ := pprofmt.Describe(p)
	if f == nil || f.Kind != pprofmt.KindRSS {
		what := "nothing"
		if f != nil {
			what = kindName(f)
		}
		return nil, fmt.Errorf("not a resident-memory profile: it is %s; arenaprof rss reads the profile of /debug/arenaprof/rss", what)
	}
	if by != "func" && by != "stack" {
		return nil, fmt.Errorf("unknown grouping %q: use func or stack", by)
	}
	if !(conf > 0 && conf < 1) {
		return nil, fmt.Errorf("confidence %v is not strictly between 0 and 1", conf)
	}
	if f.BadValues >= 0 {
		return nil, fmt.Errorf("malformed profile: a sample has %d values for %d sample types", f.BadValues, f.Types)
	}
	// By name: profiles written before heap_samples came first held
	// resident first.
	iv, ic, _ := pprofmt.RSSIndex(p)
	res := &Result{CgroupCurrent: -1, CgroupMax: -1, Confidence: conf, By: by, Smaps: true}
	var rssSeen bool
	var goVersion string
	for _, c := range p.Comments {
		switch {
		case strings.HasPrefix(c, commentRSS):
			v, err := strconv.ParseInt(strings.TrimPrefix(c, commentRSS), 10, 64)
			if err != nil || v < 0 {
				return nil, fmt.Errorf("malformed comment %q", c)
			}
			if v > MaxBytes {
				return nil, fmt.Errorf("malformed resident-memory profile: an RSS of %d bytes, more than any process has (%d, 128 TiB)", v, int64(MaxBytes))
			}
			res.RSSBytes, rssSeen = v, true
		case strings.HasPrefix(c, commentPeak):
			if t, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(c, commentPeak)); err == nil {
				res.PeakSince = &t
			}
		case c == commentNoSmaps:
			res.Smaps = false
		case strings.HasPrefix(c, commentTime):
			t, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(c, commentTime))
			if err == nil {
				res.Time = t
			}
		case strings.HasPrefix(c, commentCurrent):
			res.CgroupCurrent, _ = strconv.ParseInt(strings.TrimPrefix(c, commentCurrent), 10, 64)
		case strings.HasPrefix(c, commentMax):
			res.CgroupMax, _ = strconv.ParseInt(strings.TrimPrefix(c, commentMax), 10, 64)
		case strings.HasPrefix(c, commentNote):
			res.Notes = append(res.Notes, strings.TrimPrefix(c, commentNote))
		case strings.HasPrefix(c, pprofmt.GoVersionCommentPrefix):
			goVersion = strings.TrimPrefix(c, pprofmt.GoVersionCommentPrefix)
		}
	}
	if res.Smaps && !rssSeen {
		return nil, errors.New("malformed resident-memory profile: it states no RSS and does not say smaps was unread")
	}
	if !res.Smaps {
		res.Notes = append(res.Notes, "smaps was not read: the Go classes only, as runtime/metrics maps them (not resident), no RSS")
	}
	rule := goheap.Exact
	if goVersion != "" {
		r, err := goheap.RuleOf(goVersion)
		if err != nil {
			return nil, err
		}
		rule = r
	}
	type group struct {
		class, key string
		exact      int64
		strata     map[int64]int64
		rate       int64
		sampled    int64 // the bytes of the sampled objects
	}
	totals := map[string]int64{}
	groups := map[[2]string]*group{}
	var order []*group
	var sum int64
	for _, s := range p.Sample {
		cl := s.Label[pprofmt.LabelClass]
		if len(cl) != 1 || !slices.Contains(Classes[:], cl[0]) {
			return nil, fmt.Errorf("malformed resident-memory profile: a sample of class %q", cl)
		}
		class := cl[0]
		v := s.Value[iv]
		if v < 0 || v > MaxBytes {
			return nil, fmt.Errorf("malformed resident-memory profile: a sample of class %s has %d bytes, which no process has (0 to %d, 128 TiB)", class, v, int64(MaxBytes))
		}
		// Each v is at most MaxBytes and sum is checked at each step: no
		// sum below overflows.
		totals[class] += v
		sum += v
		if sum > MaxBytes {
			return nil, fmt.Errorf("malformed resident-memory profile: its samples sum to more than any process has (%d bytes, 128 TiB), at a sample of class %s of %d bytes", int64(MaxBytes), class, v)
		}
		site := siteFrames(s, class)
		if len(site) == 0 {
			continue
		}
		key := site[0]
		if by == "stack" {
			key = strings.Join(site, stackSep)
		}
		g := groups[[2]string{class, key}]
		if g == nil {
			g = &group{class: class, key: key}
			groups[[2]string{class, key}] = g
			order = append(order, g)
		}
		c := s.Value[ic]
		if c < 0 {
			return nil, fmt.Errorf("malformed resident-memory profile: a %s row (%s) of %d sampled objects", class, key, c)
		}
		if c > 0 {
			size, rate := firstNum(s, pprofmt.LabelBytes), firstNum(s, pprofmt.LabelHeapRate)
			if size <= 0 || rate <= 0 {
				return nil, fmt.Errorf("malformed resident-memory profile: a go/heap/live row with %d sampled objects has object size %d and MemProfileRate %d", c, size, rate)
			}
			// The sampled objects are live: their bytes are bounded as
			// the process's are (and the strata cannot overflow).
			if size > MaxBytes || rate > MaxBytes || c > (MaxBytes-g.sampled)/size {
				return nil, fmt.Errorf("malformed resident-memory profile: a go/heap/live row (%s) of %d sampled objects of %d bytes (MemProfileRate %d), more bytes than any process has (%d, 128 TiB)", key, c, size, rate, int64(MaxBytes))
			}
			g.sampled += c * size
			if g.strata == nil {
				g.strata = map[int64]int64{}
			}
			if g.rate != 0 && g.rate != rate {
				return nil, errors.New("malformed resident-memory profile: go/heap/live rows of two MemProfileRates")
			}
			g.rate = rate
			g.strata[size] += c
		} else {
			g.exact += v
		}
	}
	if res.Smaps && sum != res.RSSBytes {
		return nil, fmt.Errorf("malformed resident-memory profile: its samples sum to %d bytes, its RSS is %d", sum, res.RSSBytes)
	}
	for _, c := range Classes {
		v, ok := totals[c]
		if !ok && !res.Smaps {
			continue
		}
		res.Classes = append(res.Classes, ClassRow{Class: c, Bytes: v, Lo: v, Hi: v})
	}
	var over int // rows above their class beyond refuteConf's interval
	var overKey string
	var overEst float64
	var overClass int64
	for _, g := range order {
		row := Row{Class: g.class, Key: g.key, Bytes: g.exact, Lo: g.exact, Hi: g.exact}
		if g.strata != nil {
			strata := goheap.Strata(g.strata)
			var est float64
			for _, st := range strata {
				est += float64(st.Count) * rule.Weight(st.Size, g.rate)
			}
			lo, hi, err := goheap.Interval(strata, g.rate, rule, goheap.Group, conf)
			if err != nil {
				return nil, err
			}
			if est > MaxBytes {
				return nil, fmt.Errorf("malformed resident-memory profile: a %s row (%s) of %s estimated bytes, more than any process has (%d, 128 TiB): the profile is corrupt, or the process changed runtime.MemProfileRate after allocating (every record is weighed at the last rate, %d)",
					g.class, g.key, strconv.FormatFloat(est, 'f', 0, 64), int64(MaxBytes), g.rate)
			}
			if class := totals[g.class]; est > float64(class) {
				// A row is part of its class (the class exact, the row an
				// estimate): one above the class beyond any sampling error
				// is said, the largest named.
				rlo, _, err := goheap.Interval(strata, g.rate, rule, goheap.Group, refuteConf)
				if err != nil {
					return nil, err
				}
				if rlo > float64(class) {
					if over == 0 || est > overEst {
						overKey, overEst, overClass = g.key, est, class
					}
					over++
				}
			}
			row.Bytes = int64(est + 0.5)
			row.Lo, row.Hi = int64(lo), bytesUp(hi)
		}
		res.Rows = append(res.Rows, row)
	}
	if over > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d go/heap/live rows are estimated above the whole class, beyond their intervals at confidence 1-1e-9 (the largest: %s, %s bytes under a class of %d): the process changed runtime.MemProfileRate after allocating (every record is weighed at the last rate), or the profile is corrupt; their estimates are not to be trusted",
			over, overKey, strconv.FormatFloat(overEst, 'f', 0, 64), overClass))
	}
	slices.SortStableFunc(res.Rows, func(a, b Row) int {
		ia, ib := slices.Index(Classes[:], a.Class), slices.Index(Classes[:], b.Class)
		if ia != ib {
			return ia - ib
		}
		if a.Bytes != b.Bytes {
			if a.Bytes > b.Bytes {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
	return res, nil
}

// siteFrames returns the function names of a sample's site frames, leaf
// first: those below its class frames, inlined frames included. The rest
// sample of go/heap/live has none.
func siteFrames(s *profile.Sample, class string) []string {
	n := len(s.Location) - (strings.Count(class, "/") + 1)
	var out []string
	for _, l := range s.Location[:max(0, n)] {
		for _, ln := range l.Line {
			if ln.Function == nil || ln.Function.Name == restFrame {
				continue
			}
			out = append(out, ln.Function.Name)
		}
	}
	return out
}

// bytesUp is x rounded up to a whole byte (from a thousandth above), at most math.MaxInt64: an
// interval's upper bound beyond int64 (a row of one sample at a huge
// MemProfileRate) stays an upper bound.
func bytesUp(x float64) int64 {
	if !(x+0.999 < math.MaxInt64) {
		return math.MaxInt64
	}
	return int64(x + 0.999)
}

func firstNum(s *profile.Sample, key string) int64 {
	if v := s.NumLabel[key]; len(v) > 0 {
		return v[0]
	}
	return 0
}

// kindName names what a profile of another kind is, for the refusal.
func kindName(f *pprofmt.Facts) string {
	switch f.Kind {
	case pprofmt.KindHoldings:
		return "a live-arenas profile (/debug/arenaprof/arenas)"
	case pprofmt.KindGoHeap:
		return "a Go heap or allocs profile"
	case pprofmt.KindArena:
		switch {
		case f.Peak:
			return "an arenaprof peak profile (/debug/arenaprof/peak)"
		case f.HeapSamples:
			return "an arenaprof memory profile of arena and Go heap samples (/debug/arenaprof/memory)"
		}
		return "an arenaprof arena profile (/debug/arenaprof)"
	}
	return f.What()
}
