package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/arenaprof/arenaprof/internal/goheap"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/pprofread"
	"github.com/arenaprof/arenaprof/report"
)

const adviseUsage = `usage: arenaprof advise [flags] EARLIER LATER
       arenaprof advise -seconds N [flags] URL

Says which Go heap allocations to move into arenas, and the share of GC
cycles that saves. EARLIER and LATER are two heap profiles of one
process (runtime/pprof's heap or allocs profile, net/http/pprof's
/debug/pprof/heap), files (gzipped or not), http(s) URLs or - (one of
them) for standard input; with -seconds, advise fetches URL twice, N
seconds apart, itself. A URL of net/http/pprof's /heap or /allocs gets
?gc=1 unless it sets gc: the runtime publishes its counts at the end of a
GC cycle, so a profile taken right after one ends the window where it is
taken. Take your own profiles the same way (runtime.GC(), then
pprof.Lookup("heap").WriteTo).

For each group, with intervals at -confidence:
  ALLOC     bytes allocated between the profiles (the window);
  LIVE      bytes in use at LATER;
  LIFETIME  the mean lifetime of the group's objects by Little's law:
            LIVE divided by the window's allocation rate (ALLOC over the
            window, from the profiles' own times);
  ARENA     yes when the group allocated in the window and LIFETIME's
            upper bound is at most -lifetime: its objects die within a
            request and fit a request's arena; ? when only its lower
            bound is (undecided: the profiles cannot tell; a line above
            the table says what MemProfileRate would);
  SIZES     the object sizes allocated, most bytes first, with their
            counts: one size of a struct calls for arena.New, many sizes
            or buffers for arena.MakeSlice.
Groups are sites by default: the first frame of the stack outside the
standard library and the runtime (main's, or a module's: the frame you
can change), then "via" the leaf function that allocated, as in
"main.handle via reflect.growslice"; a stack wholly in the standard
library is named by its leaf and "(standard library only)".
Candidates come first, largest first. The predicted GC saving is the
candidates' share of every byte allocated in the window (the total row:
groups not shown and bytes no sample saw count), with its interval: under
GOGC pacing the number of GC cycles follows the bytes allocated. It does
not hold while GOMEMLIMIT sets the pace, when the live heap changes (the
chunks a pool of arenas keeps add to it), or for objects that outlive the
request whose arena they would move to. See docs/advise.md and
ACCURACY.md, "Advice".

Refused, with no numbers: profiles that are not Go heap profiles (an
arenaprof profile is read by arenaprof top), unsymbolized ones, one file
given twice, profiles of two binaries, LATER not later than EARLIER or
with counts below EARLIER's (two processes, or a restart), and a change
of MemProfileRate between them.

flags:
  -by site|func|stack|label=KEY
        group by site (default; see above), leaf function, whole stack
        (leaf first), or the value of a string label
  -lifetime D
        the longest mean lifetime of a candidate (default 100ms: the span
        of a request); a Go duration, e.g. 50ms or 2s
  -seconds N
        fetch URL twice, N seconds apart (a number of seconds, e.g. 30 or
        2.5), printing the time left on standard error while it waits: one
        line updated in place on a terminal, a line every tenth of N
        otherwise
  -n N  show the first N groups, 0 for all (default 10); the total row and
        the saving always cover every group
  -confidence C
        confidence of the intervals, strictly between 0 and 1 (default 0.95)
` + fullUsage + heapUsage + readLimitsUsage + `  -json print JSON instead of a table: {"window_s", "gc_saving",
        "gc_saving_lo", "gc_saving_hi", "by", "confidence", "lifetime_max_s",
        "memprofilerate", "heap_sampler", "groups", "candidates",
        "undecided", "min_alloc_rate" (bytes/s a site never seen in use
        needs to be a candidate), "limits", "rows": [{"key", "alloc_bytes",
        "alloc_lo", "alloc_hi", "alloc_samples", "live_bytes", "live_lo",
        "live_hi", "live_samples", "lifetime_s", "lifetime_lo",
        "lifetime_hi", "candidate", "undecided", "sizes": [{"size",
        "objects"}]}], "total": {...}}; bytes and seconds are numbers; a
        lifetime without allocations in the window is null
`

// adviseOptions are the parsed flags and arguments of arenaprof advise.
type adviseOptions struct {
	commonOptions
	lifetime       time.Duration
	seconds        time.Duration // -seconds: one URL, fetched twice
	earlier, later string        // the profiles (later is "" with -seconds)
}

func runAdvise(args []string, stdout, stderr io.Writer) int {
	opts, err := parseAdviseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stderr, adviseUsage)
		return 0
	}
	if err == nil {
		err = advise(opts, stdout, stderr)
	}
	if err != nil {
		return exitWith(stderr, "arenaprof advise", err)
	}
	return 0
}

// maxAdviseSeconds bounds -seconds: a day.
const maxAdviseSeconds = 86400

// parseAdviseArgs parses the flags and the profiles. Flags may come
// before or after the profiles.
func parseAdviseArgs(args []string) (adviseOptions, error) {
	fs := flag.NewFlagSet("arenaprof advise", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	by := fs.String("by", "site", "")
	n := fs.String("n", "10", "")
	conf := fs.String("confidence", "0.95", "")
	life := fs.String("lifetime", "100ms", "")
	secs := fs.String("seconds", "", "")
	maxBytes := fs.String("max-bytes", strconv.Itoa(pprofmt.DefaultMaxBytes), "")
	maxMemory := fs.String("max-memory", formatByteSize(pprofmt.DefaultMaxMemory), "")
	goVersion := fs.String("go-version", "", "")
	jsonOut := fs.Bool("json", false, "")
	full := fs.Bool("full", false, "")
	anyOrder := fs.Bool("any-order", false, "")
	pos, err := parseAnywhere(fs, args)
	if err != nil {
		return adviseOptions{}, err
	}
	var o adviseOptions
	switch b := strings.TrimSpace(*by); {
	case b == "site" || b == "func" || b == "stack":
		o.by = b
	case strings.HasPrefix(b, "label=") && len(b) > len("label="):
		o.by = b
	default:
		return o, topUsageErr("bad -by %q; use site, func, stack or label=KEY (a Go heap profile records no types)", *by)
	}
	if o.n, err = strconv.Atoi(strings.TrimSpace(*n)); err != nil || o.n < 0 {
		return o, topUsageErr("bad -n %q; use a whole number of rows, 0 for all", *n)
	}
	o.confidence, err = strconv.ParseFloat(strings.TrimSpace(*conf), 64)
	if err != nil || !(o.confidence > 0 && o.confidence < 1) {
		return o, topUsageErr("bad -confidence %q; use a number strictly between 0 and 1, e.g. 0.95", *conf)
	}
	if o.lifetime, err = time.ParseDuration(strings.TrimSpace(*life)); err != nil || o.lifetime <= 0 {
		return o, topUsageErr("bad -lifetime %q; use a positive duration with its unit, e.g. 100ms or 2s", *life)
	}
	if s := strings.TrimSpace(*secs); s != "" {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || !(x > 0 && x <= maxAdviseSeconds) || x*1e9 < 1 {
			return o, topUsageErr("bad -seconds %q; use a positive number of seconds up to %d, e.g. 30", *secs, maxAdviseSeconds)
		}
		o.seconds = time.Duration(x * 1e9)
	}
	var ok bool
	if o.maxBytes, ok = parseByteSize(*maxBytes); !ok {
		return o, topUsageErr("bad -max-bytes %q; use a positive number of bytes, e.g. 4GiB or 4294967296", *maxBytes)
	}
	if o.maxMemory, ok = parseByteSize(*maxMemory); !ok {
		return o, topUsageErr("bad -max-memory %q; use a positive number of bytes, e.g. 2GiB or 2147483648", *maxMemory)
	}
	if o.goVersion = strings.TrimSpace(*goVersion); o.goVersion != "" {
		if _, err := goheap.RuleOf(o.goVersion); err != nil {
			return o, topUsageErr("bad -go-version: %v", err)
		}
	}
	o.anyOrder, o.json = *anyOrder, *jsonOut
	if !*full {
		o.width = terminalWidth()
	}
	switch {
	case o.seconds > 0 && len(pos) != 1:
		return o, topUsageErr("-seconds takes one URL, fetched twice; %d arguments given", len(pos))
	case o.seconds > 0:
		if !isProfileURL(pos[0]) {
			return o, topUsageErr("-seconds takes the http(s) URL of a heap profile, e.g. http://127.0.0.1:6060/debug/pprof/heap, not a file")
		}
		o.earlier = pos[0]
	case len(pos) != 2:
		return o, topUsageErr("%d arguments where two profiles were expected: EARLIER LATER (or -seconds N URL)", len(pos))
	default:
		o.earlier, o.later = pos[0], pos[1]
		if o.earlier == "-" && o.later == "-" {
			return o, topUsageErr("EARLIER and LATER cannot both be - (standard input)")
		}
		if sameFile(o.earlier, o.later) {
			return o, topUsageErr("%s is given twice, as EARLIER and LATER; give two profiles of one process, the earlier first (or -seconds N URL, which fetches one URL twice)", o.later)
		}
	}
	return o, nil
}

// sameFile reports whether a and b name one file (a path given twice,
// spelled alike or not, or two links to one file); URLs and - are no
// files.
func sameFile(a, b string) bool {
	if isProfileURL(a) || isProfileURL(b) || a == "-" || b == "-" {
		return false
	}
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// loadAdviseProfile reads src, one of advise's profiles (named role:
// EARLIER or LATER), and refuses what is no Go heap profile with advise's
// words: advise reads nothing else.
func loadAdviseProfile(src, role string, lim report.ParseOptions) (*arenaProfile, error) {
	s, err := openProfileSource(src)
	if err != nil {
		return nil, err
	}
	defer s.close()
	lim = withDefaults(lim)
	p, cost, err := pprofread.Read(s.r, pprofread.Options(lim))
	if err != nil {
		return nil, parseErr(s, err, lim)
	}
	f, _ := pprofmt.Describe(p)
	switch f.Kind {
	case pprofmt.KindGoHeap:
	case pprofmt.KindArena, pprofmt.KindHoldings:
		return nil, topInputErr("%s (%s) is an arenaprof profile, not a Go heap profile: its memory is in arenas already; read it with arenaprof top. advise reads two Go heap or allocs profiles of one process (runtime/pprof's, or /debug/pprof/heap)", s.shown, role)
	default:
		return nil, topInputErr("%s (%s) is %s: it holds no Go heap allocations; advise reads two Go heap or allocs profiles of one process (runtime/pprof's, or /debug/pprof/heap)", s.shown, role, f.What())
	}
	if f, err = checkArena(s.shown, p); err != nil {
		return nil, err
	}
	return &arenaProfile{prof: p, facts: f, cost: cost}, nil
}

// withGC returns src with gc=1 added when it is the URL of
// net/http/pprof's heap or allocs profile that does not set gc.
func withGC(src string) string {
	if !isProfileURL(src) {
		return src
	}
	u, err := url.Parse(src)
	if err != nil || !(strings.HasSuffix(u.Path, "/heap") || strings.HasSuffix(u.Path, "/allocs")) {
		return src
	}
	q := u.Query()
	if q.Has("gc") {
		return src
	}
	q.Set("gc", "1")
	u.RawQuery = q.Encode()
	return u.String()
}

// adviseSleep waits between the two fetches of -seconds; tests replace it.
var adviseSleep = time.Sleep

// advise loads the two profiles, advises and writes the report.
func advise(opts adviseOptions, stdout, stderr io.Writer) error {
	earlierSrc, laterSrc := withGC(opts.earlier), withGC(opts.later)
	earlier, err := loadAdviseProfile(earlierSrc, "EARLIER", opts.limits())
	if err != nil {
		return err
	}
	if opts.goVersion == "" && len(earlier.facts.GoVersions) == 0 {
		opts.goVersion = serviceGoVersion(earlierSrc, opts.limits())
	}
	if opts.seconds > 0 {
		laterSrc = earlierSrc
		waitWithProgress(opts.seconds, stderr)
	}
	later, err := loadAdviseProfile(laterSrc, "LATER", opts.limits())
	if err != nil {
		return err
	}
	res, err := report.Advise(earlier.prof, later.prof, report.AdviseOptions{
		By: opts.by, Confidence: opts.confidence, Lifetime: opts.lifetime, N: opts.n,
		GoVersion: opts.goVersion, AnyOrder: opts.anyOrder,
	})
	if err != nil {
		what := opts.earlier + " and " + opts.later
		if opts.seconds > 0 {
			what = opts.earlier
		}
		return topInputErr("%s: %s", what, strings.TrimPrefix(err.Error(), "report: "))
	}
	if opts.json {
		return writeAdviseJSON(stdout, res)
	}
	return report.FormatAdvise(stdout, res, report.FormatOptions{Width: opts.width})
}

// stderrIsTerminal reports whether standard error is a terminal, where
// advise's countdown updates one line in place; tests replace it.
var stderrIsTerminal = func() bool { return term.IsTerminal(int(os.Stderr.Fd())) }

// waitWithProgress waits d, saying on w how long is left. On a terminal
// that can return to the start of its line (termWriter), one line counts
// down every second in place; elsewhere (a file, a pipe, a log) a line
// is written at the start, then every tenth of d (at least every second,
// at most every minute).
func waitWithProgress(d time.Duration, w io.Writer) {
	cr, inPlace := w.(interface{ CarriageReturn() error })
	inPlace = inPlace && stderrIsTerminal()
	step := min(max(d/10, time.Second), time.Minute)
	if inPlace {
		step = time.Second
	}
	width := 0
	for left := d; left > 0; left -= step {
		msg := fmt.Sprintf("arenaprof advise: EARLIER taken; LATER in %s", left.Round(time.Second/10))
		if !inPlace {
			fmt.Fprintln(w, msg)
		} else {
			_ = cr.CarriageReturn()
			fmt.Fprintf(w, "%-*s", width, msg) // spaces clear a longer line before it
			width = max(width, len(msg))
		}
		adviseSleep(min(step, left))
	}
	if inPlace {
		_ = cr.CarriageReturn()
		fmt.Fprintf(w, "%-*s\n", width, "arenaprof advise: EARLIER taken; taking LATER")
	}
}

// adviseRowJSON is one row of -json.
type adviseRowJSON struct {
	Key          string          `json:"key"`
	AllocBytes   float64         `json:"alloc_bytes"`
	AllocLo      float64         `json:"alloc_lo"`
	AllocHi      float64         `json:"alloc_hi"`
	AllocSamples int64           `json:"alloc_samples"`
	LiveBytes    float64         `json:"live_bytes"`
	LiveLo       float64         `json:"live_lo"`
	LiveHi       float64         `json:"live_hi"`
	LiveSamples  int64           `json:"live_samples"`
	Lifetime     *float64        `json:"lifetime_s"`
	LifetimeLo   *float64        `json:"lifetime_lo"`
	LifetimeHi   *float64        `json:"lifetime_hi"`
	Candidate    bool            `json:"candidate"`
	Undecided    bool            `json:"undecided"`
	Sizes        []sizeCountJSON `json:"sizes"`
}

type sizeCountJSON struct {
	Size    int64   `json:"size"`
	Objects float64 `json:"objects"`
}

// adviseJSON is the -json output.
type adviseJSON struct {
	Window      float64         `json:"window_s"`
	GCSaving    float64         `json:"gc_saving"`
	GCSavingLo  float64         `json:"gc_saving_lo"`
	GCSavingHi  float64         `json:"gc_saving_hi"`
	By          string          `json:"by"`
	Confidence  float64         `json:"confidence"`
	LifetimeMax float64         `json:"lifetime_max_s"`
	Rate        int64           `json:"memprofilerate"`
	Sampler     string          `json:"heap_sampler,omitempty"`
	Groups      int             `json:"groups"`
	Candidates  int             `json:"candidates"`
	Undecided   int             `json:"undecided"`
	MinRate     float64         `json:"min_alloc_rate"`
	Limits      string          `json:"limits"`
	Rows        []adviseRowJSON `json:"rows"`
	Total       adviseRowJSON   `json:"total"`
}

// lifetimeJSON is d in seconds, nil for the largest duration (no
// allocation in the window).
func lifetimeJSON(d time.Duration) *float64 {
	if d == time.Duration(math.MaxInt64) {
		return nil
	}
	s := d.Seconds()
	return &s
}

func writeAdviseJSON(w io.Writer, res *report.AdviseResult) error {
	row := func(r report.AdviseRow) adviseRowJSON {
		j := adviseRowJSON{
			Key: r.Key, AllocBytes: r.Alloc, AllocLo: r.AllocLo, AllocHi: r.AllocHi, AllocSamples: r.AllocSamples,
			LiveBytes: r.Live, LiveLo: r.LiveLo, LiveHi: r.LiveHi, LiveSamples: r.LiveSamples,
			Lifetime: lifetimeJSON(r.Lifetime), LifetimeLo: lifetimeJSON(r.LifetimeLo), LifetimeHi: lifetimeJSON(r.LifetimeHi),
			Candidate: r.Candidate, Undecided: r.Undecided, Sizes: []sizeCountJSON{},
		}
		for _, s := range r.Sizes {
			j.Sizes = append(j.Sizes, sizeCountJSON{Size: s.Size, Objects: s.Objects})
		}
		return j
	}
	out := adviseJSON{
		Window: res.Window.Seconds(), GCSaving: res.GCSaving, GCSavingLo: res.GCSavingLo, GCSavingHi: res.GCSavingHi,
		By: res.By, Confidence: res.Confidence, LifetimeMax: res.Lifetime.Seconds(), Rate: res.HeapRate,
		Sampler: res.HeapSampler, Groups: res.Groups, Candidates: res.Candidates, Limits: res.Limits,
		Undecided: res.Undecided, MinRate: res.MinAllocRate,
		Rows: []adviseRowJSON{}, Total: row(res.Total),
	}
	for _, r := range res.Rows {
		out.Rows = append(out.Rows, row(r))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
