// Command heapbias measures the bias of Go heap profiles on the real
// runtime: a workload of sites of known sizes (internal/testkit/heapcheck) runs in
// child processes at GODEBUG=memprofilerate=R, and each run's allocs
// profile is read by package report under the sampler rule of Go 1.24 and
// later (arenaprof's weights) and under Go 1.23's (runtime/pprof's
// weights, what go tool pprof shows), against the true bytes.
//
// Usage:
//
//	cd tools/heapbias && go run . [-rate 512] [-runs 100] [-mb 40] [-j 2] [-order sites|after]
//
// -order sites allocates -mb MB at each of 12 sites, one after the other
// (runs of one size); -order after allocates pairs of a 4096-byte object
// and an 8-byte one, the worst order for the Go 1.24 sampler (the 8-byte
// objects always follow a sample at rate 512). Run it under another
// toolchain with GOTOOLCHAIN=go1.27.4 go run . ...; ACCURACY.md, "The Go
// heap sampler", quotes its results.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"sync"

	"github.com/arenaprof/arenaprof/internal/testkit/heapcheck"
	"github.com/arenaprof/arenaprof/report"
)

func main() {
	if child, err := heapcheck.RunChild(); child {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "heapbias:", err)
		}
		os.Exit(2)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("heapbias", flag.ContinueOnError)
	rate := fs.Int64("rate", 512, "MemProfileRate of the runs (GODEBUG=memprofilerate)")
	runs := fs.Int("runs", 100, "runs")
	mb := fs.Int64("mb", 40, "-order sites: MB per site per run; -order after: pairs per run, in millions")
	jobs := fs.Int("j", 2, "runs at once")
	order := fs.String("order", "sites", "sites (runs of one size) or after (8-byte objects right after sampled 4096-byte ones)")
	conf := fs.Float64("confidence", 0.95, "confidence of the intervals")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rate < 2 || *runs < 1 || *mb < 1 || *jobs < 1 || !(*conf > 0 && *conf < 1) {
		return errors.New("-rate must be at least 2, -runs, -mb and -j at least 1, -confidence in (0, 1)")
	}
	var truth map[string]int64
	amount := *mb << 20
	switch *order {
	case "sites":
		truth = heapcheck.Truth(amount)
	case "after":
		amount = *mb * 1000000
		truth = map[string]int64{heapcheck.AfterBig: amount * 4096, heapcheck.AfterSample: amount * 8}
	default:
		return fmt.Errorf("-order %q: use sites or after", *order)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "heapbias")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	type sums struct{ now, before, anyOrder map[string]*heapcheck.Summary }
	s := sums{map[string]*heapcheck.Summary{}, map[string]*heapcheck.Summary{}, map[string]*heapcheck.Summary{}}
	add := func(m map[string]*heapcheck.Summary, rs map[string]heapcheck.Reading) {
		if *order == "sites" {
			rs["small"] = heapcheck.Small(rs)
		}
		for k, r := range rs {
			if m[k] == nil {
				m[k] = &heapcheck.Summary{}
			}
			m[k].Add(r)
		}
	}
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, *jobs)
	var wg sync.WaitGroup
	for i := range *runs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			data, err := heapcheck.Child(exe, nil, *rate, *order, amount, dir, i)
			var now, before, anyo map[string]heapcheck.Reading
			if err == nil {
				now, _, err = heapcheck.Read(data, truth, report.TableOptions{Confidence: *conf})
			}
			if err == nil {
				before, _, err = heapcheck.Read(data, truth, report.TableOptions{Confidence: *conf, GoVersion: "go1.23"})
			}
			if err == nil {
				anyo, _, err = heapcheck.Read(data, truth, report.TableOptions{Confidence: *conf, AnyOrder: true})
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			add(s.now, now)
			add(s.before, before)
			add(s.anyOrder, anyo)
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	keys := make([]string, 0, len(s.now))
	for k := range s.now {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return truth[keys[i]] < truth[keys[j]] || (truth[keys[i]] == truth[keys[j]] && keys[i] < keys[j])
	})
	fmt.Fprintf(stdout, "%s, MemProfileRate %d, %d runs, order %s, %.0f%% intervals\n", runtime.Version(), *rate, *runs, *order, 100**conf)
	fmt.Fprintf(stdout, "%-12s %22s %22s %22s %9s %9s %9s\n", "group", "pprof values (go1.23)", "arenaprof (go1.24)", "", "cov 1.23", "cov 1.24", "any-order")
	for _, k := range keys {
		pm, pse := s.now[k].PprofBias()
		bm, bse := s.before[k].Bias()
		nm, nse := s.now[k].Bias()
		name := k
		if i := lastDot(k); i >= 0 {
			name = k[i+1:]
		}
		cov := func(x *heapcheck.Summary) string {
			if k == "small" {
				return "-"
			}
			return fmt.Sprintf("%d/%d", x.Covered, x.Runs)
		}
		fmt.Fprintf(stdout, "%-12s %+9.4f%% ± %.4f%%  %+9.4f%% ± %.4f%%  (report go1.23: %+.4f%% ± %.4f%%) %9s %9s %9s\n",
			name, 100*pm, 100*pse, 100*nm, 100*nse, 100*bm, 100*bse, cov(s.before[k]), cov(s.now[k]), cov(s.anyOrder[k]))
	}
	return nil
}

func lastDot(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return i
		}
	}
	return -1
}
