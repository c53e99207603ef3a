package rss

import (
	"errors"
	"fmt"
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
		totals[class] += v
		sum += v
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
		if c := s.Value[ic]; c > 0 {
			size, rate := firstNum(s, pprofmt.LabelBytes), firstNum(s, pprofmt.LabelHeapRate)
			if size <= 0 || rate <= 0 {
				return nil, fmt.Errorf("malformed resident-memory profile: a go/heap/live row with %d sampled objects has object size %d and MemProfileRate %d", c, size, rate)
			}
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
			row.Bytes = int64(est + 0.5)
			row.Lo, row.Hi = int64(lo), int64(hi+0.999)
		}
		res.Rows = append(res.Rows, row)
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
