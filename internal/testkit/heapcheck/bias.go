package heapcheck

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strconv"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/profiler"
	"github.com/arenaprof/arenaprof/report"
)

// The bias workload runs in a child process of its own, started with
// GODEBUG=memprofilerate=R so that the rate holds from the process's first
// allocation, and writes its allocs profile to a file. ChildEnv names the
// variables the child reads.
const (
	ChildEnv        = "ARENAPROF_HEAPBIAS_CHILD"   // "sites", "memory" or "after"
	ChildAmountEnv  = "ARENAPROF_HEAPBIAS_AMOUNT"  // bytes per site, or pairs
	ChildProfileEnv = "ARENAPROF_HEAPBIAS_PROFILE" // the file to write
)

// RunChild runs the workload if this process is a child (ChildEnv set) and
// reports whether it was; a child then exits.
func RunChild() (bool, error) {
	mode := os.Getenv(ChildEnv)
	if mode == "" {
		return false, nil
	}
	n, err := strconv.ParseInt(os.Getenv(ChildAmountEnv), 10, 64)
	if err != nil || n <= 0 {
		return true, fmt.Errorf("heapcheck child: bad %s %q", ChildAmountEnv, os.Getenv(ChildAmountEnv))
	}
	switch mode {
	case "sites":
		RunSites(n)
	case "memory": // the sites, written as a combined memory profile
		p, err := profiler.Start()
		if err != nil {
			return true, err
		}
		RunSites(n)
		p.Stop()
		runtime.GC()
		prof, err := export.BuildMemory(p.Snapshot())
		if err != nil {
			return true, err
		}
		var buf bytes.Buffer
		if err := prof.Write(&buf); err != nil {
			return true, err
		}
		return true, os.WriteFile(os.Getenv(ChildProfileEnv), buf.Bytes(), 0o644)
	case "after":
		RunAfter(int(n))
	default:
		return true, fmt.Errorf("heapcheck child: unknown %s %q", ChildEnv, mode)
	}
	data, err := AllocsProfile()
	if err != nil {
		return true, err
	}
	return true, os.WriteFile(os.Getenv(ChildProfileEnv), data, 0o644)
}

// Child runs exe (a program that calls RunChild first) as a child at
// MemProfileRate rate, mode "sites" (amount bytes per site) or "after"
// (amount pairs), and returns its allocs profile. extraArgs go to exe.
func Child(exe string, extraArgs []string, rate int64, mode string, amount int64, dir string, i int) ([]byte, error) {
	file := fmt.Sprintf("%s/run%d.pb.gz", dir, i)
	cmd := exec.Command(exe, extraArgs...)
	cmd.Env = append(os.Environ(),
		"GODEBUG=memprofilerate="+strconv.FormatInt(rate, 10),
		ChildEnv+"="+mode,
		ChildAmountEnv+"="+strconv.FormatInt(amount, 10),
		ChildProfileEnv+"="+file,
	)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("heapcheck child: %v: %s", err, out)
	}
	data, err := os.ReadFile(file)
	os.Remove(file)
	return data, err
}

// Reading is what one run's profile says of a group of sites: the true
// bytes, runtime/pprof's values (what go tool pprof shows), report's
// estimate and interval, and the sample count.
type Reading struct {
	Truth, Pprof, Est, Lo, Hi float64
	Samples                   int64
}

// Covered reports whether the interval holds the truth.
func (r Reading) Covered() bool { return r.Lo <= r.Truth && r.Truth <= r.Hi }

// siteSize is the object size of every site.
var siteSize = func() map[string]int64 {
	m := map[string]int64{AfterBig: 4096, AfterSample: 8}
	for _, s := range Sites {
		m[s.Func] = s.Size
	}
	return m
}()

// SitesProfile parses a run's profile and cuts it to the samples of
// truth's sites (by leaf function) of the site's own object size (the
// runtime's own allocations on a site's stack, by a GC that a large
// allocation starts, say, have other sizes); it returns runtime/pprof's
// bytes per site and under "total".
func SitesProfile(data []byte, truth map[string]int64) (*profile.Profile, map[string]float64, error) {
	p, err := report.Parse(bytes.NewReader(data), report.ParseOptions{})
	if err != nil {
		return nil, nil, err
	}
	keep := p.Sample[:0]
	pprofBytes := map[string]float64{}
	for _, s := range p.Sample {
		if len(s.Location) == 0 || len(s.Location[0].Line) == 0 {
			continue
		}
		ln := s.Location[0].Line
		f := ln[len(ln)-1].Function.Name // the outermost of inlined frames: the site
		if _, ok := truth[f]; ok && len(s.NumLabel["bytes"]) == 1 && s.NumLabel["bytes"][0] == siteSize[f] {
			keep = append(keep, s)
			pprofBytes[f] += float64(s.Value[1])
			pprofBytes["total"] += float64(s.Value[1])
		}
	}
	p.Sample = keep
	return p, pprofBytes, nil
}

// Read reads a run's profile: for each site of truth its Reading, and
// under "total" the sites together (the table's total row of the profile
// cut to those sites, as -focus cuts it; see SitesProfile). opts are the
// table's options (By is set to func). It also returns the table.
func Read(data []byte, truth map[string]int64, opts report.TableOptions) (map[string]Reading, *report.TableResult, error) {
	p, pprofBytes, err := SitesProfile(data, truth)
	if err != nil {
		return nil, nil, err
	}
	opts.By = "func"
	res, err := report.Table(p, opts)
	if err != nil {
		return nil, nil, err
	}
	out := map[string]Reading{}
	var total float64
	for f, t := range truth {
		total += float64(t)
		out[f] = Reading{Truth: float64(t)}
	}
	for _, r := range append(res.Rows, res.Total) {
		x, ok := out[r.Key]
		if r.Key == "total" {
			x, ok = Reading{Truth: total}, true
		}
		if !ok {
			return nil, nil, fmt.Errorf("a row %q outside the sites", r.Key)
		}
		x.Pprof, x.Est, x.Lo, x.Hi, x.Samples = pprofBytes[r.Key], float64(r.Bytes), r.Lo, r.Hi, r.Samples
		out[r.Key] = x
	}
	return out, res, nil
}

// Summary sums the readings of one group over runs.
type Summary struct {
	Runs, Covered int
	// relative errors (estimate/truth - 1): sums and sums of squares
	est, est2, pp, pp2 float64
}

// Add adds one run's reading.
func (s *Summary) Add(r Reading) {
	s.Runs++
	if r.Covered() {
		s.Covered++
	}
	e, q := r.Est/r.Truth-1, r.Pprof/r.Truth-1
	s.est += e
	s.est2 += e * e
	s.pp += q
	s.pp2 += q * q
}

// Bias returns the mean relative error of the estimates and its standard
// error; PprofBias the same for runtime/pprof's values.
func (s *Summary) Bias() (mean, se float64) { return meanSE(s.est, s.est2, s.Runs) }

// PprofBias is Bias for runtime/pprof's values.
func (s *Summary) PprofBias() (mean, se float64) { return meanSE(s.pp, s.pp2, s.Runs) }

// Coverage is the share of runs whose interval held the truth.
func (s *Summary) Coverage() float64 { return float64(s.Covered) / float64(max(s.Runs, 1)) }

func meanSE(sum, sum2 float64, n int) (mean, se float64) {
	if n == 0 {
		return 0, 0
	}
	mean = sum / float64(n)
	if n > 1 {
		se = math.Sqrt(max(0, sum2/float64(n)-mean*mean) / float64(n-1))
	}
	return mean, se
}

// Small returns the truth of the sites of small objects (at most 256
// bytes) under the key "small", for the pooled bias of small sites.
func Small(readings map[string]Reading) Reading {
	var r Reading
	for _, s := range Sites {
		if x, ok := readings[s.Func]; ok && s.Size <= 256 {
			r.Truth += x.Truth
			r.Pprof += x.Pprof
			r.Est += x.Est
			r.Samples += x.Samples
		}
	}
	r.Lo, r.Hi = math.Inf(-1), math.Inf(1) // no interval for the pool
	return r
}
