// Command heapcheck measures report's Go heap intervals on a real program
// nobody here wrote: the Go compiler compiling a standard-library package.
// It runs the toolchain's own compile binary with -memprofile at
// -memprofilerate=1 (every allocation recorded: the truth) and at the
// sampled rates, and compares the 95% intervals of every row report.Table
// shows, by function and by stack, with the truth. By default the compiler
// writes the runtime's own symbolized protobuf (-memprofile=DIR/); with
// -legacy it writes the legacy text format (-memprofile=FILE), symbolized
// with `go tool pprof -proto COMPILE PROFILE` (google/pprof's symbolizer),
// which at rate 1 runs to gigabytes for a large package.
//
// The compiler does not allocate the same way in every run (map growth and
// the concurrent back end land on different stacks), so the truth is
// measured several times: coverage is reported against the mean truth and
// against the range of the truth runs (a row is covered if its interval
// meets that range), which separates the program's own variation from the
// sampling error the intervals bound. Rows are also split by their number
// of samples (1, 2-9, 10 or more): a row with one sample of an object far
// below R must reach about 5.4 R at 95%, whatever the method.
//
// With -diff it measures arenaprof diff (report.Diff) on the same compiler
// instead, with no truth runs: the false alarms of unchanged pairs (two
// sampled compiles of the package, runs 2i and 2i+1) with Holm's
// adjustment and per row, the -fail-above gates on them, and the power on
// pairs whose work really doubles (run 2i against the merge of two other
// runs), in particular on rows with about 12 samples in BASE (12 -> 24).
//
// Usage:
//
//	cd tools/heapcheck && go run . [-pkg go/types] [-truth 2] [-runs 30] [-rates 512,4096,524288] [-dir DIR] [-legacy]
//	cd tools/heapcheck && go run . -diff [-pkg go/types] [-runs 40] [-rates 4096,524288] [-v]
//
// Profiles are kept in DIR (default $TMPDIR/heapcheck) and reused by later
// runs with the same flags. See ACCURACY.md, "The Go heap", for the
// results.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/report"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "heapcheck:", err)
		}
		os.Exit(2)
	}
}

type config struct {
	pkg     string
	truth   int
	runs    int
	rates   []int64
	dir     string
	jobs    int
	conf    float64
	compile string
	files   []string
	cfg     string // importcfg path
	legacy  bool
	diff    bool
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("heapcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVar(&c.pkg, "pkg", "go/types", "standard-library package the compiler compiles")
	fs.IntVar(&c.truth, "truth", 2, "runs at -memprofilerate=1 (the truth)")
	fs.IntVar(&c.runs, "runs", 30, "sampled runs per rate")
	rates := fs.String("rates", "512,4096,524288", "comma-separated MemProfileRates of the sampled runs")
	fs.StringVar(&c.dir, "dir", filepath.Join(os.TempDir(), "heapcheck"), "directory for the profiles (reused)")
	fs.IntVar(&c.jobs, "j", 2, "compiler runs at once")
	fs.Float64Var(&c.conf, "confidence", 0.95, "confidence of the intervals")
	fs.BoolVar(&verbose, "v", false, "print the keys of rows with 10 samples or more missed most often (with -diff: the rows Holm flags in unchanged pairs)")
	fs.BoolVar(&c.legacy, "legacy", false, "have the compiler write legacy text profiles, symbolized by go tool pprof -proto (slow and gigabytes at rate 1 for large packages)")
	fs.BoolVar(&c.diff, "diff", false, "measure arenaprof diff instead: false alarms on pairs of sampled runs and power on a run against the merge of two (no truth runs)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, f := range strings.Split(*rates, ",") {
		r, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || r < 2 {
			return fmt.Errorf("-rates: %q is not a rate above 1", f)
		}
		c.rates = append(c.rates, r)
	}
	if c.truth < 1 || c.runs < 1 || c.jobs < 1 {
		return errors.New("-truth, -runs and -j must be at least 1")
	}
	if err := c.setup(); err != nil {
		return err
	}
	if c.diff {
		return c.diffStudies(stdout)
	}
	truthPaths, err := c.profiles(1, c.truth)
	if err != nil {
		return err
	}
	bys := []string{"func", "stack"}
	truth, err := truthOf(truthPaths, bys)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s compiling %s; truth: %d runs at rate 1; %d sampled runs per rate; %.0f%% intervals\n\n", c.compile, c.pkg, c.truth, c.runs, 100*c.conf)
	for _, r := range c.rates {
		sampled, err := c.profiles(r, c.runs)
		if err != nil {
			return err
		}
		for j, by := range bys {
			s, err := measure(truth[j], sampled, r, by, c.conf)
			if err != nil {
				return err
			}
			s.print(stdout, r, by)
		}
	}
	return nil
}

// setup finds the compile binary, the package's files and writes an
// importcfg naming the export data the go command already built.
func (c *config) setup() error {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	out, err := exec.Command("go", "env", "GOTOOLDIR").Output()
	if err != nil {
		return fmt.Errorf("go env GOTOOLDIR: %v", err)
	}
	c.compile = filepath.Join(strings.TrimSpace(string(out)), "compile")
	out, err = exec.Command("go", "list", "-f", "{{range .GoFiles}}{{$.Dir}}/{{.}}\n{{end}}", c.pkg).Output()
	if err != nil {
		return fmt.Errorf("go list %s: %v", c.pkg, err)
	}
	c.files = strings.Fields(string(out))
	deps, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{if .Export}}packagefile {{.ImportPath}}={{.Export}}{{end}}", c.pkg).Output()
	if err != nil {
		return fmt.Errorf("go list -export %s: %v", c.pkg, err)
	}
	maps, err := exec.Command("go", "list", "-f", "{{range $k, $v := .ImportMap}}importmap {{$k}}={{$v}}\n{{end}}", c.pkg).Output()
	if err != nil {
		return fmt.Errorf("go list %s: %v", c.pkg, err)
	}
	c.cfg = filepath.Join(c.dir, "importcfg")
	return os.WriteFile(c.cfg, append(deps, maps...), 0o644)
}

// profiles returns the paths of n symbolized profiles of the compiler at
// rate, running the compiler for those not already in the directory.
func (c *config) profiles(rate int64, n int) ([]string, error) {
	format := "proto"
	if c.legacy {
		format = "legacy"
	}
	dir := filepath.Join(c.dir, strings.ReplaceAll(c.pkg, "/", "_")+"."+format, fmt.Sprintf("rate%d", rate))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	out := make([]string, n)
	errs := make([]error, n)
	sem := make(chan struct{}, c.jobs)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i], errs[i] = c.profile(dir, rate, i)
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

func (c *config) profile(dir string, rate int64, i int) (string, error) {
	pb := filepath.Join(dir, fmt.Sprintf("%d.pb.gz", i))
	if _, err := os.Stat(pb); err != nil {
		if err := c.compileProfile(dir, pb, rate, i); err != nil {
			return "", err
		}
	}
	return pb, nil
}

// load reads a profile written by profile, checking its rate.
func load(pb string, rate int64) (*profile.Profile, error) {
	f, err := os.Open(pb)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := report.Parse(f, report.ParseOptions{MaxMemory: maxMemory})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", pb, err)
	}
	if p.Period != rate {
		return nil, fmt.Errorf("%s: MemProfileRate %d, want %d", pb, p.Period, rate)
	}
	return p, nil
}

// compileProfile runs the compiler at rate and writes its symbolized
// heap profile to pb. With -legacy the compiler writes the legacy text
// format (-memprofile=FILE), symbolized by `go tool pprof -proto`; else it
// writes the runtime's own gzipped protobuf (-memprofile=DIR/), which is
// much faster at rate 1 for a large package: the legacy text of a go/types
// compile at rate 1 runs to gigabytes.
func (c *config) compileProfile(dir, pb string, rate int64, i int) error {
	out := filepath.Join(dir, fmt.Sprintf("%d.a", i))
	defer os.Remove(out)
	legacy := filepath.Join(dir, fmt.Sprintf("%d.txt", i))
	mem := legacy
	if !c.legacy {
		mem = filepath.Join(dir, fmt.Sprintf("%d.d", i)) + string(os.PathSeparator)
		defer os.RemoveAll(mem)
	}
	args := []string{"-o", out, "-p", c.pkg, "-std", "-complete", "-c=1",
		"-importcfg", c.cfg, "-pack", "-memprofile=" + mem, "-memprofilerate=" + strconv.FormatInt(rate, 10)}
	cmd := exec.Command(c.compile, append(args, c.files...)...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("compile: %v\n%s", err, msg)
	}
	var data []byte
	if c.legacy {
		defer os.Remove(legacy)
		var stdout, stderr bytes.Buffer
		cmd = exec.Command("go", "tool", "pprof", "-proto", c.compile, legacy)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go tool pprof -proto: %v\n%s", err, stderr.Bytes())
		}
		data = stdout.Bytes()
	} else {
		var err error
		data, err = os.ReadFile(filepath.Join(mem, url.PathEscape(c.pkg)+".memprof"))
		if err != nil {
			return err
		}
	}
	if err := os.WriteFile(pb+".tmp", data, 0o644); err != nil {
		return err
	}
	return os.Rename(pb+".tmp", pb)
}

// verbose prints the keys of well-sampled rows missed most often.
var verbose bool

// maxMemory bounds the decoding of one profile: a rate-1 profile of a
// large package needs about 512 MiB. Profiles are loaded one at a time.
const maxMemory = 2 << 30

// stats are the figures of one rate and grouping.
type stats struct {
	rows, coveredMean, coveredRange int
	absent                          int // rows of keys no truth run has
	widths, uppers                  []float64
	totals                          [][3]float64 // lo/truth, estimate/truth, hi/truth
	truthSpread                     []float64    // (max-min)/mean truth of the rows shown
	bands                           [len(sampleBands)]band
	truthTotal                      [2]float64           // the truth runs' totals / their mean
	misses                          map[string][]float64 // estimate/truth of the misses of rows with >= 10 samples, by key
}

// sampleBands split the rows shown by their number of samples: the width a
// row can have is set by how many samples it holds (one sample of an
// object far below R must reach about 5.4 R at 95%, whatever the method).
var sampleBands = [...]struct {
	name   string
	lo, hi int64
}{{"1 sample", 1, 1}, {"2-9 samples", 2, 9}, {">= 2 samples", 2, math.MaxInt64}, {">= 10 samples", 10, math.MaxInt64}}

// band is the rows shown with a number of samples in one of sampleBands.
type band struct {
	rows, covered int
	widths        []float64
}

// truth is, per key, the mean, min and max bytes over the truth runs (a
// key absent from a run counts 0 there), and the mean total.
type truth struct {
	mean, lo, hi            map[string]float64
	total, totalLo, totalHi float64
}

// truthOf returns the truth of each grouping, loading each profile once.
func truthOf(paths []string, bys []string) ([]truth, error) {
	out := make([]truth, len(bys))
	for i := range out {
		out[i] = truth{mean: map[string]float64{}, lo: map[string]float64{}, hi: map[string]float64{}, totalLo: math.Inf(1)}
	}
	per := make([][]map[string]float64, len(bys))
	for _, pb := range paths {
		p, err := load(pb, 1)
		if err != nil {
			return nil, err
		}
		for j, by := range bys {
			res, err := report.Table(p, report.TableOptions{By: by})
			if err != nil {
				return nil, err
			}
			m := map[string]float64{}
			for _, r := range res.Rows {
				m[r.Key] = float64(r.Bytes)
				out[j].mean[r.Key] = 0
			}
			per[j] = append(per[j], m)
			tb := float64(res.Total.Bytes)
			out[j].total += tb / float64(len(paths))
			out[j].totalLo = min(out[j].totalLo, tb)
			out[j].totalHi = max(out[j].totalHi, tb)
		}
	}
	for j := range bys {
		t := out[j]
		for k := range t.mean {
			t.lo[k] = math.Inf(1)
			for _, m := range per[j] {
				v := m[k]
				t.mean[k] += v / float64(len(paths))
				t.lo[k] = min(t.lo[k], v)
				t.hi[k] = max(t.hi[k], v)
			}
		}
	}
	return out, nil
}

func measure(tr truth, sampled []string, rate int64, by string, conf float64) (*stats, error) {
	mean, tlo, thi, total := tr.mean, tr.lo, tr.hi, tr.total
	s := &stats{truthTotal: [2]float64{tr.totalLo / total, tr.totalHi / total}}
	for _, pb := range sampled {
		p, err := load(pb, rate)
		if err != nil {
			return nil, err
		}
		res, err := report.Table(p, report.TableOptions{By: by, Confidence: conf})
		if err != nil {
			return nil, err
		}
		for _, r := range res.Rows {
			s.rows++
			m, ok := mean[r.Key]
			if !ok {
				s.absent++
				continue
			}
			if r.Lo <= m && m <= r.Hi {
				s.coveredMean++
			} else if r.Samples >= 10 {
				if s.misses == nil {
					s.misses = map[string][]float64{}
				}
				s.misses[r.Key] = append(s.misses[r.Key], float64(r.Bytes)/m)
			}
			if r.Lo <= thi[r.Key] && tlo[r.Key] <= r.Hi {
				s.coveredRange++
			}
			s.widths = append(s.widths, (r.Hi-r.Lo)/m)
			for i, b := range sampleBands {
				if b.lo <= r.Samples && r.Samples <= b.hi {
					bd := &s.bands[i]
					bd.rows++
					if r.Lo <= m && m <= r.Hi {
						bd.covered++
					}
					bd.widths = append(bd.widths, (r.Hi-r.Lo)/m)
				}
			}
			s.uppers = append(s.uppers, r.Hi/m)
			s.truthSpread = append(s.truthSpread, (thi[r.Key]-tlo[r.Key])/m)
		}
		t := res.Total
		s.totals = append(s.totals, [3]float64{t.Lo / total, float64(t.Bytes) / total, t.Hi / total})
	}
	return s, nil
}

func quantile(x []float64, q float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	x = slices.Clone(x)
	slices.Sort(x)
	return x[min(len(x)-1, int(q*float64(len(x))))]
}

func (s *stats) print(w io.Writer, rate int64, by string) {
	n := float64(s.rows)
	fmt.Fprintf(w, "rate %d, by %s: %d rows shown in %d runs (%d of keys no truth run has)\n", rate, by, s.rows, len(s.totals), s.absent)
	fmt.Fprintf(w, "  coverage of rows shown: %.3f against the mean truth, %.3f against the range of the truth runs (absent keys count as missed)\n",
		float64(s.coveredMean)/n, float64(s.coveredRange)/n)
	fmt.Fprintf(w, "  width/truth: median %.2f, p90 %.2f; upper/truth: median %.2f, p95 %.2f; truth runs' own spread/truth: median %.3f, p95 %.3f\n",
		quantile(s.widths, 0.5), quantile(s.widths, 0.9), quantile(s.uppers, 0.5), quantile(s.uppers, 0.95), quantile(s.truthSpread, 0.5), quantile(s.truthSpread, 0.95))
	for i, b := range s.bands {
		fmt.Fprintf(w, "  %s: %.3f of the rows with a truth, coverage %.3f (mean truth), median width/truth %.2f\n",
			sampleBands[i].name, float64(b.rows)/float64(s.rows-s.absent), float64(b.covered)/float64(b.rows), quantile(b.widths, 0.5))
	}
	if verbose {
		keys := slices.Collect(maps.Keys(s.misses))
		slices.SortFunc(keys, func(a, b string) int { return len(s.misses[b]) - len(s.misses[a]) })
		for _, k := range keys[:min(len(keys), 8)] {
			fmt.Fprintf(w, "    missed %d times with >= 10 samples, estimate/truth %.3f: %s\n", len(s.misses[k]), quantile(s.misses[k], 0.5), k)
		}
	}
	var lo, est, hi []float64
	for _, t := range s.totals {
		lo, est, hi = append(lo, t[0]), append(est, t[1]), append(hi, t[2])
	}
	fmt.Fprintf(w, "  total row / mean truth (medians): estimate %.4f, interval [%.4f, %.4f], width %.4f; truth runs' totals [%.4f, %.4f]\n\n",
		quantile(est, 0.5), quantile(lo, 0.5), quantile(hi, 0.5), quantile(hi, 0.5)-quantile(lo, 0.5), s.truthTotal[0], s.truthTotal[1])
}
