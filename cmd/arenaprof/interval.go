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
	"github.com/arenaprof/arenaprof/internal/tabfmt"
)

const intervalUsage = `usage: arenaprof interval -samples S -tail U [-mean BYTES] [-confidence C] [-window W] [-json]

Prints the confidence interval for the bytes of a group from two raw sums a
profile stores for it: S, its sample events (alloc_samples), and U, their
tail sum (alloc_tail: the sum over the events of size - offset, the bytes
from the sampled byte to the end of its object).

required:
  -samples S
        the number of sample events, 0 or more
  -tail U
        the tail sum of those events, in bytes, at least S

optional:
  -mean BYTES
        the sampling mean the events were drawn under (102400 unless the
        profiler was set otherwise; a profile's sampling_mean label gives it)
  -confidence C
        confidence of the interval, strictly between 0 and 1 (0.95 if not given)
  -window aligned|start|end|both
        where the counted window starts and ends relative to the sample
        events; both (when not given) is the conservative choice for sums of
        unknown origin; end is right for a profile since the profiler
        started, and is what arenaprof top reads from such a profile's
        marking
  -json print one JSON object: samples, tail, mean, confidence, window,
        estimate, unsampled_lo, unsampled_hi, lo, hi

output lines:
  sample events     S and the sampling mean
  tail sum          U
  window            the window alignment used
  estimate          the failed-trials estimate S*(mean-1) + U, in bytes
  C% interval       [lo, hi] bytes: holds the true bytes with probability C
  unsampled bytes   [lo-U, hi-U]: the same bound on the bytes no trial
                    sampled (the negative-binomial count of failed trials);
                    the interval is these plus U

The estimate differs slightly from the BYTES column of arenaprof top for
the same sums: top knows each sampled object's size and adds up
size/(1-q^size), q = 1-1/mean, per object; interval has only S and U and
uses S*(mean-1) + U. Both are unbiased for the group's bytes. The upper
bound is top's for the same sums; top's lower bound can be higher: it is
conditioned on the group having been sampled at all (the group is listed
because it was) and is never below the bytes of the objects sampled.
`

// intervalJSON is the -json output of the interval command.
type intervalJSON struct {
	Samples     int64   `json:"samples"`
	Tail        int64   `json:"tail"`
	Mean        int64   `json:"mean"`
	Confidence  float64 `json:"confidence"`
	Window      string  `json:"window"`
	Estimate    float64 `json:"estimate"`
	UnsampledLo int64   `json:"unsampled_lo"`
	UnsampledHi int64   `json:"unsampled_hi"`
	Lo          float64 `json:"lo"`
	Hi          float64 `json:"hi"`
}

// runInterval implements "arenaprof interval": the negative-binomial
// confidence interval for S sample events with tail sum U.
func runInterval(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("interval", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	samples := fs.Int64("samples", -1, "")
	tail := fs.Int64("tail", -1, "")
	mean := fs.Int64("mean", samplingstate.DefaultMeanBytes, "")
	conf := fs.Float64("confidence", 0.95, "")
	window := fs.String("window", "both", "")
	asJSON := fs.Bool("json", false, "")
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "arenaprof interval: "+format+"\n", a...)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, intervalUsage)
			return 0
		}
		return fail("%v; run 'arenaprof help interval' for the flags", err)
	}
	if fs.NArg() > 0 {
		return fail("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case !set["samples"]:
		return fail("-samples is required: the number of sample events")
	case !set["tail"]:
		return fail("-tail is required: the tail sum of the sample events, in bytes")
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
			UnsampledLo: iv.UnsampledLo, UnsampledHi: iv.UnsampledHi, Lo: iv.Lo, Hi: iv.Hi,
		}); err != nil {
			fmt.Fprintf(stderr, "arenaprof interval: %v\n", err)
			return 1
		}
		return 0
	}
	num := func(v float64) string { return strconv.FormatFloat(math.Round(v), 'f', 0, 64) }
	pct := strconv.FormatFloat(100*iv.Confidence, 'g', -1, 64) + "%"
	tw := tabfmt.NewList(stdout)
	fmt.Fprintf(tw, "sample events\t%d, drawn under sampling mean %d bytes\n", iv.Samples, iv.MeanBytes)
	fmt.Fprintf(tw, "tail sum\t%d bytes\n", iv.Tail)
	fmt.Fprintf(tw, "window\t%s\n", iv.Window)
	fmt.Fprintf(tw, "estimate\t%s bytes (S*(mean-1) + U; see help for why top's BYTES can differ)\n", num(iv.Estimate))
	fmt.Fprintf(tw, "%s interval\t[%s, %s] bytes\n", pct, num(iv.Lo), num(iv.Hi))
	fmt.Fprintf(tw, "unsampled bytes\t[%d, %d] (%s bound on the failed trials; the interval is these plus the tail sum)\n", iv.UnsampledLo, iv.UnsampledHi, pct)
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(stderr, "arenaprof interval: %v\n", err)
		return 1
	}
	return 0
}
