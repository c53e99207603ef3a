package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
)

// intervalJSON is the -json output of the interval command.
type intervalJSON struct {
	Samples    int64   `json:"samples"`
	Tail       int64   `json:"tail"`
	Mean       int64   `json:"mean"`
	Confidence float64 `json:"confidence"`
	Window     string  `json:"window"`
	Estimate   float64 `json:"estimate"`
	FailuresLo int64   `json:"failures_lo"`
	FailuresHi int64   `json:"failures_hi"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
}

// runInterval implements "arenaprof interval": the negative-binomial
// confidence interval for S sample events with tail sum U.
func runInterval(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("interval", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	samples := fs.Int64("samples", -1, "number of sample events `S` (required)")
	tail := fs.Int64("tail", -1, "sum `U` of size-offset over the events, in bytes (required)")
	mean := fs.Int64("mean", samplingstate.DefaultMeanBytes, "sampling mean in `bytes` the events were drawn under")
	conf := fs.Float64("confidence", 0.95, "confidence `C` in (0, 1)")
	window := fs.String("window", "both", "window alignment: aligned, start, end or both; the default, both, is the\nconservative choice for sums of unknown origin; use end for the sums of a profile\nsince the profiler started, which is what arenaprof top reads from such a profile's marking")
	asJSON := fs.Bool("json", false, "print one JSON object")
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "arenaprof interval: "+format+"\n", a...)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "usage: arenaprof interval -samples S -tail U [-mean 102400] [-confidence 0.95] [-window aligned|start|end|both] [-json]")
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			return 0
		}
		return fail("%v", err)
	}
	if fs.NArg() > 0 {
		return fail("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case !set["samples"]:
		return fail("-samples is required")
	case !set["tail"]:
		return fail("-tail is required")
	}
	w, err := estimate.ParseWindow(*window)
	if err != nil {
		return fail("bad -window %q: want aligned, start, end or both", *window)
	}
	iv, err := estimate.SingleMeanInterval(*samples, *tail, *mean, *conf, w)
	if err != nil {
		return fail("%v", err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(intervalJSON{
			Samples: iv.Samples, Tail: iv.Tail, Mean: iv.MeanBytes, Confidence: iv.Confidence,
			Window: iv.Window.String(), Estimate: iv.Estimate,
			FailuresLo: iv.UnsampledLo, FailuresHi: iv.UnsampledHi, Lo: iv.Lo, Hi: iv.Hi,
		}); err != nil {
			fmt.Fprintf(stderr, "arenaprof interval: %v\n", err)
			return 1
		}
		return 0
	}
	num := func(v float64) string { return strconv.FormatFloat(math.Round(v), 'f', 0, 64) }
	fmt.Fprintf(stdout, "samples     %d (tail %d bytes, mean %d bytes, window %s)\n", iv.Samples, iv.Tail, iv.MeanBytes, iv.Window)
	fmt.Fprintf(stdout, "estimate    %s bytes\n", num(iv.Estimate))
	fmt.Fprintf(stdout, "%-11s [%s, %s] bytes\n", strconv.FormatFloat(100*iv.Confidence, 'g', -1, 64)+"%", num(iv.Lo), num(iv.Hi))
	fmt.Fprintf(stdout, "failures    [%d, %d]\n", iv.UnsampledLo, iv.UnsampledHi)
	return 0
}
