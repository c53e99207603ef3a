// Command quickstart shows what arenaprof is for, in about ten seconds.
//
// It runs an in-process service (service.go) that handles many requests on
// a few worker goroutines. Each request takes an arena from an arena.Pool,
// labelled with the request's endpoint, and parses CSV records into
// arena-allocated structs at several call sites; every 16th request takes a
// stats snapshot and every 64th builds a large index (64 KiB..1 MiB).
// Profiling is on at the default mean (profiler.Start()). The service also
// counts, exactly, the bytes it allocates (ledger.go).
//
// At the end it writes the profile (arena.pb.gz), prints the estimated
// bytes by type, by function and by endpoint with 95% confidence intervals
// beside the true bytes, and shows how to open the profile:
//
//	go run ./examples/quickstart
//	go tool pprof -http=:0 arena.pb.gz
//
// Flags:
//
//	-requests N  number of requests (default 100000, about 2 GB allocated)
//	-o FILE      where to write the profile (default arena.pb.gz)
//	-seed S      seed of the request mix (default 1)
//	-workers W   worker goroutines (default 4)
//	-quiet       no progress lines
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/tabfmt"
	"github.com/arenaprof/arenaprof/profiler"
	"github.com/arenaprof/arenaprof/report"
)

// config is the program's settings, from its flags.
type config struct {
	requests int
	out      string
	seed     uint64
	workers  int
	quiet    bool
	// progressEvery is the interval between progress lines; the first
	// comes after two intervals, so short runs print none.
	progressEvery time.Duration
}

// Limits of the flags.
const (
	maxRequests = 100_000_000
	maxWorkers  = 1024
)

func main() {
	cfg := config{progressEvery: 2 * time.Second}
	flag.IntVar(&cfg.requests, "requests", 100_000, "number of requests to handle")
	flag.StringVar(&cfg.out, "o", "arena.pb.gz", "file to write the profile to")
	flag.Uint64Var(&cfg.seed, "seed", 1, "seed of the request mix")
	flag.IntVar(&cfg.workers, "workers", 4, "worker goroutines")
	flag.BoolVar(&cfg.quiet, "quiet", false, "print no progress lines")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "quickstart: unexpected argument %q; see -h for the flags\n", flag.Arg(0))
		os.Exit(2)
	}
	if err := cfg.check(); err != nil {
		fmt.Fprintf(os.Stderr, "quickstart: %v\n", err)
		os.Exit(2)
	}
	if _, err := run(cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "quickstart: %v\n", err)
		os.Exit(1)
	}
}

// check validates the flags.
func (c config) check() error {
	if c.requests < 1 || c.requests > maxRequests {
		return fmt.Errorf("-requests %d: want 1 to %d", c.requests, maxRequests)
	}
	if c.workers < 1 || c.workers > maxWorkers {
		return fmt.Errorf("-workers %d: want 1 to %d", c.workers, maxWorkers)
	}
	if c.out == "" {
		return errors.New("-o: empty file name")
	}
	return nil
}

// outcome is what run found: the tables and how many intervals covered the
// truth.
type outcome struct {
	tables    map[string]*report.TableResult // by "type", "func", "label=endpoint"
	truth     *ledger
	intervals int // rows shown, totals included
	covered   int // of which the interval covers the true bytes
}

// run profiles the service, writes the profile and prints the report to
// stdout; progress lines go to progress.
func run(cfg config, stdout, progress io.Writer) (*outcome, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, `arenaprof quick start

A batch-import service handles %d requests on %d workers. Each request
takes an arena from an arena.Pool, labelled with its endpoint, and parses
CSV records into it; every 16th request also takes a 1 KiB stats snapshot
and every 64th builds a 64 KiB..1 MiB index. The profiler samples about
one byte in %d (profiler.Start(), the default mean); the service also
counts the bytes it allocates, exactly, to check the estimates.

`, cfg.requests, cfg.workers, hooks.MeanBytes())

	// Profiling on, at the default mean.
	p, err := profiler.Start()
	if err != nil {
		return nil, err
	}
	defer p.Stop()

	truth, elapsed := serve(cfg, p, progress)
	p.Stop()
	if err := writeProfile(cfg.out, p); err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "Handled %d requests in %.1fs: %s allocated in arenas,\n%d sample events.\n\n",
		cfg.requests, elapsed.Seconds(), tabfmt.Bytes(float64(truth.total)), p.Stats().Events)

	// Read the profile back from the file, as arenaprof top does.
	prof, err := readProfile(cfg.out)
	if err != nil {
		return nil, err
	}
	out := &outcome{tables: map[string]*report.TableResult{}, truth: truth}
	for _, by := range []string{"type", "func", "label=endpoint"} {
		if err := out.table(stdout, prof, by); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(stdout, `TRUE is what the service allocated, counted exactly. The profile has only
a sample of the allocations; each interval covers the true bytes with 95%%
probability, so about 1 row in 20 may miss. Here %d of %d intervals do.

Wrote the profile to %s.
Open it in pprof (sample types alloc_space, alloc_objects, inuse_space,
...; labels type and endpoint):

    go tool pprof -http=:0 %s

or print tables like the ones above, grouped any way:

    go run ./cmd/arenaprof top -by label=endpoint %s
`, out.covered, out.intervals, cfg.out, cfg.out, cfg.out)
	return out, nil
}

// serve runs the service: a producer hands requests to the workers, and a
// progress line is printed every cfg.progressEvery once the run has taken
// two of them. It returns the merged ledger and the time taken.
func serve(cfg config, p *profiler.Profiler, progress io.Writer) (*ledger, time.Duration) {
	var pool arena.Pool
	in := make(chan request, 64)
	var handled, allocated atomic.Int64
	ledgers := make([]*ledger, cfg.workers)
	var wg sync.WaitGroup
	for i := range ledgers {
		ledgers[i] = newLedger()
		wg.Go(func() {
			worker(&pool, in, ledgers[i], func(bytes int64) {
				handled.Add(1)
				allocated.Add(bytes)
			})
		})
	}
	start := time.Now()
	stop := make(chan struct{})
	var pwg sync.WaitGroup
	if !cfg.quiet && cfg.progressEvery > 0 {
		pwg.Go(func() {
			t := time.NewTicker(cfg.progressEvery)
			defer t.Stop()
			for n := 1; ; n++ {
				select {
				case <-stop:
					return
				case <-t.C:
				}
				if n < 2 {
					continue
				}
				h := handled.Load()
				fmt.Fprintf(progress, "  %4.0fs  %d/%d requests (%.0f%%), %s allocated, %d samples\n",
					time.Since(start).Seconds(), h, cfg.requests, 100*float64(h)/float64(cfg.requests),
					tabfmt.Bytes(float64(allocated.Load())), p.Stats().Events)
			}
		})
	}
	for i := range int64(cfg.requests) {
		in <- newRequest(cfg.seed, i)
	}
	close(in)
	wg.Wait()
	elapsed := time.Since(start)
	close(stop)
	pwg.Wait()
	total := newLedger()
	for _, l := range ledgers {
		total.merge(l)
	}
	return total, elapsed
}

// readProfile parses a profile file.
func readProfile(path string) (*profile.Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return profile.Parse(f)
}

// table prints the profile grouped by by, with the true bytes beside each
// row, and counts the intervals that cover them.
func (o *outcome) table(w io.Writer, prof *profile.Profile, by string) error {
	res, err := report.Table(prof, report.TableOptions{By: by, Confidence: 0.95})
	if err != nil {
		return err
	}
	o.tables[by] = res
	truth := o.truth.by(strings.TrimPrefix(by, "label="))
	trueBytes := func(row *report.TableRow, total bool) int64 {
		if total {
			return o.truth.total
		}
		return truth[row.Key]
	}
	for i := range res.Rows {
		o.count(&res.Rows[i], trueBytes(&res.Rows[i], false))
	}
	o.count(&res.Total, o.truth.total)
	err = report.FormatTable(w, res, report.FormatOptions{
		Width:       80,
		HideObjects: true,
		HideShare:   true,
		Extra: []report.TableColumn{
			{Head: "TRUE", Cell: func(row *report.TableRow, total bool) string {
				return tabfmt.Bytes(float64(trueBytes(row, total)))
			}},
			{Head: "COVERS", Cell: func(row *report.TableRow, total bool) string {
				if covers(row, trueBytes(row, total)) {
					return "yes"
				}
				return "NO"
			}},
		},
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w)
	return err
}

func (o *outcome) count(row *report.TableRow, truth int64) {
	o.intervals++
	if covers(row, truth) {
		o.covered++
	}
}

// covers reports whether row's interval contains truth.
func covers(row *report.TableRow, truth int64) bool {
	return row.Lo <= float64(truth) && float64(truth) <= row.Hi
}

// writeProfile writes the profile of everything p has seen to the file path.
func writeProfile(path string, p *profiler.Profiler) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := export.Write(f, p.Snapshot()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
