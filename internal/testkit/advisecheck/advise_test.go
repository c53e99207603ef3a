package advisecheck

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/internal/testkit/binom"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/report"
)

// TestMain runs the service when the test binary is started as its child.
func TestMain(m *testing.M) {
	if child, err := RunChild(); child {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// parse reads a profile a child wrote.
func parse(t testing.TB, data []byte) *profile.Profile {
	t.Helper()
	p, err := report.Parse(bytes.NewReader(data), report.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// cutToSites keeps the samples of the sites, of the site's own object
// size (the runtime's own allocations on a site's stack have others).
func cutToSites(p *profile.Profile) *profile.Profile {
	p = p.Copy()
	keep := p.Sample[:0]
	for _, s := range p.Sample {
		if len(s.Location) == 0 || len(s.Location[0].Line) == 0 {
			continue
		}
		ln := s.Location[0].Line
		f := ln[len(ln)-1].Function.Name
		if size, ok := Sites[f]; ok && len(s.NumLabel["bytes"]) == 1 && s.NumLabel["bytes"][0] == size {
			keep = append(keep, s)
		}
	}
	p.Sample = keep
	return p
}

// coverage counts, for one interval, the runs that had it and the runs
// it held the truth.
type coverage struct{ runs, covered int }

func (c *coverage) add(lo, truth, hi float64) {
	c.runs++
	if lo <= truth && truth <= hi {
		c.covered++
	}
}

// adviseRuns is the number of child runs per MemProfileRate of
// TestAdviseCoverage (about 40 ms each, two at a time); ACCURACY.md
// quotes 400.
var adviseRuns = flag.Int("adviseruns", 250, "child runs per MemProfileRate of TestAdviseCoverage")

// TestAdviseCoverage runs the service -adviseruns times at
// MemProfileRate 4096 and at the default (512 KiB), each run a child
// process of its own (independent sampling), and checks every interval
// Advise gives at 95%: each site's alloc, live and lifetime, the total's
// alloc, and the predicted saving (the last two on the profiles cut to
// the sites, whose truth is known: the process's own allocations are
// not). A row is shown only when the group has a sample, so a site's
// coverage counts the runs that showed it.
//
// Each check fails when its coverage count is below binom.Min(runs,
// 0.95, 1e-8): with true coverage at least 0.95, that happens with
// probability below 1e-8 per check. There are at most 2 rates x (4 sites
// x 3 intervals + 2) = 28 checks: the test fails falsely with probability
// below 3e-7 per run.
func TestAdviseCoverage(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	runs := *adviseRuns
	if testing.Short() {
		runs = 10 // a smoke test: the race detector's children take a second each
	}
	for _, rate := range []int64{4096, 512 << 10} {
		cov := map[string]*coverage{}
		at := func(k string) *coverage {
			if cov[k] == nil {
				cov[k] = &coverage{}
			}
			return cov[k]
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		jobs := make(chan int)
		errs := make(chan error, runs)
		for range 2 {
			wg.Go(func() {
				for range jobs {
					r, err := Child(exe, []string{fmt.Sprintf("GODEBUG=memprofilerate=%d", rate)}, 500, 0, nil, t.TempDir())
					if err != nil {
						errs <- err
						continue
					}
					mu.Lock()
					err = checkRun(t, r, at)
					mu.Unlock()
					if err != nil {
						errs <- err
					}
				}
			})
		}
		for i := range runs {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, k := range slicesSorted(cov) {
			c := cov[k]
			need := binom.Min(c.runs, 0.95, 1e-8)
			fmt.Fprintf(&b, "MemProfileRate %d %-24s coverage %.3f over %d runs (fails below %d)\n", rate, k, float64(c.covered)/float64(max(c.runs, 1)), c.runs, need)
			if c.covered < need {
				t.Errorf("MemProfileRate %d, %s: %d of %d runs covered, below %d", rate, k, c.covered, c.runs, need)
			}
		}
		t.Log("\n" + b.String())
	}
}

func slicesSorted(m map[string]*coverage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// short is a site's name without its package.
func short(site string) string { return site[strings.LastIndexByte(site, '.')+1:] }

// checkRun advises on one run and adds each interval's coverage.
func checkRun(t testing.TB, r *Run, at func(string) *coverage) error {
	earlier, later := parse(t, r.Earlier), parse(t, r.Later)
	res, err := report.Advise(earlier, later, report.AdviseOptions{})
	if err != nil {
		return err
	}
	w := res.Window.Seconds()
	for _, row := range res.Rows {
		if _, ok := Sites[row.Key]; !ok {
			continue
		}
		alloc, live := float64(r.Truth.Alloc[row.Key]), float64(r.Truth.Live[row.Key])
		// Rows mix a site's own sizes with the runtime's on its stack:
		// only rows of the site's size alone are compared.
		if len(row.Sizes) > 1 {
			continue
		}
		at(short(row.Key)+" alloc").add(row.AllocLo, alloc, row.AllocHi)
		at(short(row.Key)+" live").add(row.LiveLo, live, row.LiveHi)
		life := math.Inf(1)
		if alloc > 0 {
			life = live * w / alloc
		}
		at(short(row.Key)+" lifetime").add(row.LifetimeLo.Seconds(), life, lifetimeSeconds(row.LifetimeHi))
	}
	// The saving and the total, on the profiles cut to the sites.
	cut, err := report.Advise(cutToSites(earlier), cutToSites(later), report.AdviseOptions{})
	if err != nil {
		return err
	}
	var total, cand float64
	for site := range Sites {
		total += float64(r.Truth.Alloc[site])
	}
	for _, row := range cut.Rows {
		if row.Candidate {
			cand += float64(r.Truth.Alloc[row.Key])
		}
	}
	at("total alloc").add(cut.Total.AllocLo, total, cut.Total.AllocHi)
	if cut.Candidates > 0 {
		at("gc_saving").add(cut.GCSavingLo, cand/total, cut.GCSavingHi)
	}
	return nil
}

// lifetimeSeconds is d in seconds, +Inf for the largest duration.
func lifetimeSeconds(d time.Duration) float64 {
	if d == time.Duration(math.MaxInt64) {
		return math.Inf(1)
	}
	return d.Seconds()
}

// The GC check's shape: requests in the window, at one request per
// gcPace (the cache's objects then live cacheEntries*gcPace = 410 ms, the
// requests' 4*gcPace), under GOGC=25 (a heap goal close to the live heap,
// so that the window runs enough GC cycles to count).
const (
	gcRequests = 10000
	gcPace     = 200 * time.Microsecond
	gcGOGC     = "GOGC=25"
)

// TestAdviseGCSaving is the end-to-end check: the service runs at the
// default MemProfileRate; Advise names the sites to move and predicts the
// share of GC cycles saved; the service runs again with those sites on
// arena.Pool, and runtime.MemStats.NumGC counts the cycles of the same
// window's work. The measured saving must fall within the predicted
// interval widened by 0.1 on each side.
//
// False failure: the predicted interval (95%) misses the true share of
// bytes with probability at most 5%; to miss the widened one the
// estimate must be off by 0.1 more, about 5 of its standard deviations
// (about 0.02 here: some 400 samples of 210 MB): below 1e-6. The GC
// counts (about 110 and 25 cycles) move the measured saving by about
// 0.01 per cycle, and the arenas' chunks (a few 64 KiB chunks on a live
// heap of 9 MiB) by less.
//
// The verdicts are checked too: the buffers' objects live about 1 ms,
// and their upper bound (live bytes at most a few MemProfileRates over
// about 150 MB allocated in 2 s) stays below 100ms; the cache's live 410
// ms or more (more on a slower machine), and their upper bound holds
// that with probability 97.5%, and falls below 100 ms only if the
// in-use count of its 8 MiB (16 samples expected) were 0, whose bound
// alone gives 2.3 MiB: it cannot.
func TestAdviseGCSaving(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the service for about 5 s")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	heap, err := Child(exe, []string{gcGOGC}, gcRequests, gcPace, nil, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	res, err := report.Advise(parse(t, heap.Earlier), parse(t, heap.Later), report.AdviseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := report.FormatAdvise(&b, res, report.FormatOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	var moved []string
	for _, row := range res.Rows {
		if _, ok := Sites[row.Key]; ok && row.Candidate {
			moved = append(moved, row.Key)
		}
	}
	slices.Sort(moved)
	if !slices.Contains(moved, SiteBuf) || slices.Contains(moved, SiteCache) || slices.Contains(moved, SiteLeak) {
		t.Fatalf("advised sites %v; want %s, and neither %s nor %s", moved, short(SiteBuf), short(SiteCache), short(SiteLeak))
	}
	inArena, err := Child(exe, []string{gcGOGC}, gcRequests, gcPace, moved, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	measured := 1 - float64(inArena.Truth.NumGC)/float64(heap.Truth.NumGC)
	truth := 0.0
	for _, s := range moved {
		truth += float64(heap.Truth.Alloc[s])
	}
	truth /= float64(heap.Truth.TotalAlloc)
	t.Logf("moved %v: GC cycles %d on the heap, %d with arenas (%.1f s and %.1f s): measured saving %.3f; predicted %.3f in [%.3f, %.3f]; true share of bytes %.3f",
		moved, heap.Truth.NumGC, inArena.Truth.NumGC, heap.Truth.Seconds, inArena.Truth.Seconds, measured, res.GCSaving, res.GCSavingLo, res.GCSavingHi, truth)
	if heap.Truth.NumGC < 50 {
		t.Errorf("only %d GC cycles in the heap run: too few to measure a saving", heap.Truth.NumGC)
	}
	if !(res.GCSavingLo-0.1 <= measured && measured <= res.GCSavingHi+0.1) {
		t.Errorf("measured saving %.3f outside the predicted [%.3f, %.3f] widened by 0.1", measured, res.GCSavingLo, res.GCSavingHi)
	}
}
