// Command accuracy compares arenaprof's per-byte randomized sampling with
// fixed-stride sampling (.NET's AllocationTick, upscaled as in Datadog's
// profiler) and with Go's per-allocation exponential sampling, on the same
// seeded workloads, and reports per-type relative errors and the coverage
// of arenaprof's confidence intervals.
//
// Usage:
//
//	cd tools/accuracy && go run . -runs 1000 [-json] [-plot ../../docs/accuracy.png]
//
// See ACCURACY.md at the repository root for what it measures and the
// results.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
	"github.com/arenaprof/arenaprof/internal/testkit/workload"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "accuracy:", err)
		}
		os.Exit(2)
	}
}

// maxRuns bounds -runs so that a typo cannot start an hours-long study.
const maxRuns = 1_000_000

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("accuracy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	runs := fs.Int("runs", 1000, "number of runs (seeds) per workload")
	seed := fs.Uint64("seed", 1, "seed of the first run; run i uses seed+i")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the tables")
	plotPath := fs.String("plot", "", "write a PNG of the error distributions to this file")
	window := fs.String("window", "end", "interval window correction: aligned, start, end or both")
	only := fs.String("workloads", "periodic,mixed,requests", "comma-separated workloads to run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *runs < 1 || *runs > maxRuns {
		return fmt.Errorf("-runs must be in [1, %d], got %d", maxRuns, *runs)
	}
	w, err := parseWindow(*window)
	if err != nil {
		return err
	}
	var ws []*workload.Workload
	for name := range strings.SplitSeq(*only, ",") {
		wl, err := workload.ByName(strings.TrimSpace(name))
		if err != nil {
			return err
		}
		ws = append(ws, wl)
	}
	cfg := config{
		runs:       *runs,
		seed:       *seed,
		mean:       samplingstate.DefaultMeanBytes,
		stride:     102400,
		confidence: 0.95,
		window:     w,
	}
	res, err := study(cfg, ws)
	if err != nil {
		return err
	}
	if *plotPath != "" {
		if err := writePlot(*plotPath, cfg, res); err != nil {
			return err
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(report(cfg, *window, res))
	}
	writeTables(stdout, cfg, *window, res)
	return nil
}

// parseWindow reads the -window flag: the exact spellings of
// estimate.Window's names.
func parseWindow(s string) (estimate.Window, error) {
	w, err := estimate.ParseWindow(s)
	if err != nil || w.String() != s {
		return 0, fmt.Errorf("-window must be aligned, start, end or both, got %q", s)
	}
	return w, nil
}

// jsonReport is the -json output.
type jsonReport struct {
	Runs        int                     `json:"runs"`
	FirstSeed   uint64                  `json:"first_seed"`
	MeanBytes   int64                   `json:"mean_bytes"`
	StrideBytes int64                   `json:"stride_bytes"`
	Confidence  float64                 `json:"confidence"`
	Window      string                  `json:"window"`
	Workloads   map[string]jsonWorkload `json:"workloads"`
}

type jsonWorkload struct {
	Description string `json:"description"`
	// TrueBytes is the exact per-type total of every run.
	TrueBytes map[string]int64 `json:"true_bytes"`
	// MeanSamples is arenaprof's average number of events per type.
	MeanSamples map[string]float64 `json:"arenaprof_mean_samples"`
	// CoverageError says why arenaprof's coverage is missing, if it is.
	CoverageError string                          `json:"coverage_error,omitempty"`
	Schemes       map[string]map[string]typeStats `json:"schemes"`
}

func report(cfg config, window string, res []workloadStats) jsonReport {
	r := jsonReport{
		Runs: cfg.runs, FirstSeed: cfg.seed, MeanBytes: cfg.mean, StrideBytes: cfg.stride,
		Confidence: cfg.confidence, Window: window, Workloads: map[string]jsonWorkload{},
	}
	for _, ws := range res {
		jw := jsonWorkload{
			Description: ws.w.Description,
			TrueBytes:   map[string]int64{},
			MeanSamples: map[string]float64{},
			Schemes:     map[string]map[string]typeStats{},
		}
		if ws.coverageErr != nil {
			jw.CoverageError = ws.coverageErr.Error()
		}
		for t, ty := range ws.w.Types {
			jw.TrueBytes[ty.Name] = ws.w.Totals[t]
			jw.MeanSamples[ty.Name] = ws.meanSamples[t]
		}
		for s, name := range schemeNames {
			m := map[string]typeStats{}
			for t, ty := range ws.w.Types {
				m[ty.Name] = ws.stats[s][t]
			}
			jw.Schemes[name] = m
		}
		r.Workloads[ws.w.Name] = jw
	}
	return r
}

func pct(x float64) string {
	switch {
	case x < 0.001:
		return fmt.Sprintf("%.3f%%", 100*x)
	case x < 0.1:
		return fmt.Sprintf("%.1f%%", 100*x)
	}
	return fmt.Sprintf("%.0f%%", 100*x)
}

// tableHeads are the column titles of the schemes.
var tableHeads = map[string]string{
	schemeArenaprof: "arenaprof",
	schemeGo:        "Go exponential",
	schemeStride:    "fixed stride (ref. 5)",
	schemeAmount:    "fixed stride (amount)",
}

// writeTables prints one Markdown table per workload.
func writeTables(w io.Writer, cfg config, window string, res []workloadStats) {
	fmt.Fprintf(w, "%d runs per workload (seeds %d..%d); mean %d bytes; stride %d bytes; %.0f%% intervals, window %q.\n",
		cfg.runs, cfg.seed, cfg.seed+uint64(cfg.runs)-1, cfg.mean, cfg.stride, 100*cfg.confidence, window)
	fmt.Fprintln(w, "Relative error |estimate - truth| / truth per type: median / 95th percentile over the runs.")
	for _, ws := range res {
		fmt.Fprintf(w, "\n### %s: %s\n\n", ws.w.Name, ws.w.Description)
		fmt.Fprint(w, "| type | true MB | arenaprof samples | arenaprof 95% coverage |")
		for _, name := range schemeNames {
			fmt.Fprintf(w, " %s |", tableHeads[name])
		}
		fmt.Fprint(w, "\n| --- | ---: | ---: | ---: |")
		for range schemeNames {
			fmt.Fprint(w, " ---: |")
		}
		fmt.Fprintln(w)
		for t, ty := range ws.w.Types {
			cov := "n/a"
			if c := ws.stats[0][t].Coverage; c != nil {
				cov = fmt.Sprintf("%.1f%%", 100**c)
			}
			fmt.Fprintf(w, "| `%s` | %.2f | %.1f | %s |", ty.Name, float64(ws.w.Totals[t])/1e6, ws.meanSamples[t], cov)
			for s := range schemeNames {
				fmt.Fprintf(w, " %s / %s |", pct(ws.stats[s][t].MedianRelErr), pct(ws.stats[s][t].P95RelErr))
			}
			fmt.Fprintln(w)
		}
		if ws.coverageErr != nil {
			fmt.Fprintf(w, "\nCoverage not computed: %v\n", ws.coverageErr)
		}
	}
}
