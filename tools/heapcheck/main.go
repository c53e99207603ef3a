// Command heapcheck measures report's Go heap intervals on a real program
// nobody here wrote: the Go compiler compiling a standard-library package.
// It runs the toolchain's own compile binary with -memprofile at
// -memprofilerate=1 (every allocation recorded: the truth) and at the
// sampled rates, symbolizes each legacy text profile with
// `go tool pprof -proto COMPILE PROFILE` (google/pprof's symbolizer), and
// compares the 95% intervals of every row report.Table shows, by function
// and by stack, with the truth.
//
// The compiler does not allocate the same way in every run (map growth and
// the concurrent back end land on different stacks), so the truth is
// measured several times: coverage is reported against the mean truth and
// against the range of the truth runs (a row is covered if its interval
// meets that range), which separates the program's own variation from the
// sampling error the intervals bound.
//
// Usage:
//
//	cd tools/heapcheck && go run . [-pkg text/template] [-truth 3] [-runs 30] [-rates 512,4096,524288] [-dir DIR]
//
// Profiles are kept in DIR (default $TMPDIR/heapcheck) and reused by later
// runs with the same flags: the rate-1 runs are slow (about two minutes
// each for text/template, most of it the runtime writing the legacy text
// profile). See ACCURACY.md, "The Go heap", for the results.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
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
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("heapcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVar(&c.pkg, "pkg", "text/template", "standard-library package the compiler compiles")
	fs.IntVar(&c.truth, "truth", 3, "runs at -memprofilerate=1 (the truth)")
	fs.IntVar(&c.runs, "runs", 30, "sampled runs per rate")
	rates := fs.String("rates", "512,4096,524288", "comma-separated MemProfileRates of the sampled runs")
	fs.StringVar(&c.dir, "dir", filepath.Join(os.TempDir(), "heapcheck"), "directory for the profiles (reused)")
	fs.IntVar(&c.jobs, "j", 2, "compiler runs at once")
	fs.Float64Var(&c.conf, "confidence", 0.95, "confidence of the intervals")
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
	truth, err := c.profiles(1, c.truth)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s compiling %s; truth: %d runs at rate 1; %d sampled runs per rate; %.0f%% intervals\n\n", c.compile, c.pkg, c.truth, c.runs, 100*c.conf)
	for _, r := range c.rates {
		sampled, err := c.profiles(r, c.runs)
		if err != nil {
			return err
		}
		for _, by := range []report.GroupKind{report.GroupByFunc, report.GroupByStack} {
			s, err := measure(truth, sampled, by, c.conf)
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

// profiles returns n symbolized profiles of the compiler at rate, running
// the compiler for those not already in the directory.
func (c *config) profiles(rate int64, n int) ([]*profile.Profile, error) {
	dir := filepath.Join(c.dir, strings.ReplaceAll(c.pkg, "/", "_"), fmt.Sprintf("rate%d", rate))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	out := make([]*profile.Profile, n)
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

func (c *config) profile(dir string, rate int64, i int) (*profile.Profile, error) {
	pb := filepath.Join(dir, fmt.Sprintf("%d.pb.gz", i))
	if _, err := os.Stat(pb); err != nil {
		legacy := filepath.Join(dir, fmt.Sprintf("%d.txt", i))
		args := []string{"-o", filepath.Join(dir, fmt.Sprintf("%d.a", i)), "-p", c.pkg, "-std", "-complete", "-c=1",
			"-importcfg", c.cfg, "-pack", "-memprofile=" + legacy, "-memprofilerate=" + strconv.FormatInt(rate, 10)}
		cmd := exec.Command(c.compile, append(args, c.files...)...)
		if msg, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("compile: %v\n%s", err, msg)
		}
		os.Remove(filepath.Join(dir, fmt.Sprintf("%d.a", i)))
		var stdout, stderr bytes.Buffer
		cmd = exec.Command("go", "tool", "pprof", "-proto", c.compile, legacy)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("go tool pprof -proto: %v\n%s", err, stderr.Bytes())
		}
		if err := os.WriteFile(pb+".tmp", stdout.Bytes(), 0o644); err != nil {
			return nil, err
		}
		if err := os.Rename(pb+".tmp", pb); err != nil {
			return nil, err
		}
		os.Remove(legacy)
	}
	f, err := os.Open(pb)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := report.Parse(f, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", pb, err)
	}
	if p.Period != rate {
		return nil, fmt.Errorf("%s: MemProfileRate %d, want %d", pb, p.Period, rate)
	}
	return p, nil
}

// stats are the figures of one rate and grouping.
type stats struct {
	rows, coveredMean, coveredRange int
	absent                          int // rows of keys no truth run has
	widths, uppers                  []float64
	totals                          [][3]float64 // lo/truth, estimate/truth, hi/truth
	truthSpread                     []float64    // (max-min)/mean truth of the rows shown
}

// truthOf returns, per key, the mean, min and max bytes over the truth
// runs (a key absent from a run counts 0 there).
func truthOf(truth []*profile.Profile, by report.GroupKind) (mean, lo, hi map[string]float64, total float64, err error) {
	mean, lo, hi = map[string]float64{}, map[string]float64{}, map[string]float64{}
	per := make([]map[string]float64, len(truth))
	for i, p := range truth {
		res, err := report.Table(p, report.TableOptions{By: report.GroupBy{Kind: by}})
		if err != nil {
			return nil, nil, nil, 0, err
		}
		per[i] = map[string]float64{}
		for _, r := range res.Rows {
			per[i][r.Key] = float64(r.Bytes)
			mean[r.Key] = 0
		}
		total += float64(res.Total.Bytes) / float64(len(truth))
	}
	for k := range mean {
		lo[k] = math.Inf(1)
		for _, m := range per {
			v := m[k]
			mean[k] += v / float64(len(per))
			lo[k] = min(lo[k], v)
			hi[k] = max(hi[k], v)
		}
	}
	return mean, lo, hi, total, nil
}

func measure(truth, sampled []*profile.Profile, by report.GroupKind, conf float64) (*stats, error) {
	mean, tlo, thi, total, err := truthOf(truth, by)
	if err != nil {
		return nil, err
	}
	s := &stats{}
	for _, p := range sampled {
		res, err := report.Table(p, report.TableOptions{By: report.GroupBy{Kind: by}, Confidence: conf})
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
			}
			if r.Lo <= thi[r.Key] && tlo[r.Key] <= r.Hi {
				s.coveredRange++
			}
			s.widths = append(s.widths, (r.Hi-r.Lo)/m)
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

func (s *stats) print(w io.Writer, rate int64, by report.GroupKind) {
	n := float64(s.rows)
	fmt.Fprintf(w, "rate %d, by %s: %d rows shown in %d runs (%d of keys no truth run has)\n", rate, by, s.rows, len(s.totals), s.absent)
	fmt.Fprintf(w, "  coverage of rows shown: %.3f against the mean truth, %.3f against the range of the truth runs (absent keys count as missed)\n",
		float64(s.coveredMean)/n, float64(s.coveredRange)/n)
	fmt.Fprintf(w, "  width/truth: median %.2f, p90 %.2f; upper/truth: median %.2f, p95 %.2f; truth runs' own spread/truth: median %.3f, p95 %.3f\n",
		quantile(s.widths, 0.5), quantile(s.widths, 0.9), quantile(s.uppers, 0.5), quantile(s.uppers, 0.95), quantile(s.truthSpread, 0.5), quantile(s.truthSpread, 0.95))
	var lo, est, hi []float64
	for _, t := range s.totals {
		lo, est, hi = append(lo, t[0]), append(est, t[1]), append(hi, t[2])
	}
	fmt.Fprintf(w, "  total row / mean truth (medians): estimate %.4f, interval [%.4f, %.4f], width %.4f\n\n",
		quantile(est, 0.5), quantile(lo, 0.5), quantile(hi, 0.5), quantile(hi, 0.5)-quantile(lo, 0.5))
}
