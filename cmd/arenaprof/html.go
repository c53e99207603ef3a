package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/rss"
	"github.com/arenaprof/arenaprof/internal/treepage"
	"github.com/arenaprof/arenaprof/report"
	"github.com/arenaprof/arenaprof/report/htmlreport"
)

const htmlUsage = `usage: arenaprof html [-o FILE] [-open] [top's flags] PROFILE
       arenaprof html [-o FILE] [-open] [diff's flags] BASE NEW
       arenaprof html [-o FILE] [-open] [diff's flags] -base BASE... NEW...
       arenaprof html [-o FILE] [-open] [-rss] [-peak] [rss's flags] SOURCE
       arenaprof html [-o FILE] [-open] -leaks [leaks's flags] INPUTS...

Writes one self-contained HTML page: with PROFILE, top's table (every
group with its interval as a bar on a shared axis, sortable by estimate
or by the interval's width, a filter box, the total row, top's heading)
and a flame graph of the stacks (widths by estimate, each frame's
interval in its tooltip, click to zoom, search); with BASE and NEW,
diff's table (each ratio's interval on a log axis, significant rows
marked) and, with -fail-above, the gate's verdict. The page loads nothing
from the network and opens from file://; its table reads without
JavaScript. PROFILE, BASE and NEW are what top and diff read (files, URLs,
directories and quoted globs, whose profiles are merged, -pyroscope
selectors); several profiles per side of a diff are listed with -base
(arenaprof help diff). A live-arenas profile makes top's table of its
exact counts (no intervals, no flame graph), and two make diff's
comparison of them (exact counts and ratios, + marking the groups whose
reserved bytes grew; no -fail-above). A resident-memory profile (a saved
one, the URL of /debug/arenaprof/rss, or with -rss any SOURCE arenaprof
rss takes, a service's base URL among them) makes rss's class tree under
rss's heading: each class and prefix of one with its bytes and share of
RSS, the sites below go/heap/live with their intervals as bars on a
shared axis and those below arena/* exact; -by func|stack, -n and
-confidence are rss's, and no other flag of top applies. With -leaks,
the INPUTS arenaprof leaks reads make leaks's table under its heading
and, for each flagged group, a plot of its estimated in-use bytes at
every snapshot with the part the rate is fitted over shaded, the fitted
rate as a line and its interval as the wedge between the lines of its
bounds' slopes; leaks's flags apply but -json, -fail and
-pyroscope (a fleet read has batch means, not every snapshot).

Every table row element carries the numbers of top -json (data-key,
data-est, data-lo, data-hi; for a live-arenas profile all three are
its reserved bytes) or diff -json (data-key, data-ratio-lo,
data-ratio-hi, empty for null, data-significant, and
data-conservative="true" on the rows diff marks ~; for two live-arenas
profiles both ratios are new_reserved/base_reserved, significant is
growing, and data-base-reserved and data-new-reserved are the reserved
bytes) for the same flags, and each flame graph frame its function name
(data-frame); on a resident-memory page, the rows of a class and of its
sites carry rss -json's class (data-class), key (data-key; a class row's
is its class), bytes (data-est), lo and hi; on a leaks page, each row
carries leaks -json's key, kind, rate, lo, hi, flagged, inuse_first and
inuse_last (data-key, data-kind, data-rate, data-lo, data-hi,
data-flagged, data-inuse-first, data-inuse-last) and each plot (a figure
element) its group's data-key, data-kind, data-rate, data-lo and
data-hi. See docs/html.md.

flags:
  -o FILE
        write the page to FILE (default: a new file in the temporary
        directory); the path written is printed
  -open open the page in the system's browser (xdg-open, open, or
        rundll32's FileProtocolHandler); where there is none, or it
        fails (xdg-open exits 3 with no browser), a note on stderr says
        so and names the page; the exit status stays 0
  -min-frame S
        leave out of the flame graph the frames below S times the total
        (default 0.001; 0 keeps all); their bytes stay in their callers
  -n N  as top's and diff's -n, but the default is 0: every group
  -rss  read SOURCE as arenaprof rss does (a service's base URL reads
        /debug/arenaprof/rss); a saved resident-memory profile, or the
        URL of one, needs no -rss
  -peak the profile at the highest RSS since the service started, as
        arenaprof rss -peak reads it (implies -rss; SOURCE is a URL)
  -leaks read INPUTS as arenaprof leaks does (arenaprof help leaks)

  top's and diff's other flags (arenaprof help top, arenaprof help diff)
  apply, but -json: the page is the output. -fail-above, -min-share and
  -min-bytes need BASE and NEW. The exit status is html's own: a failed
  gate is shown on the page, not as status 3.
`

// htmlOptions are the flags of arenaprof html that top and diff do not
// have.
type htmlOptions struct {
	out      string
	open     bool
	minFrame float64
}

func runHTML(args []string, stdout, stderr io.Writer) int {
	err := writeHTML(args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stderr, htmlUsage)
		return 0
	}
	if err != nil {
		return exitWith(stderr, "arenaprof html", err)
	}
	return 0
}

// writeHTML parses the flags, writes the page of one profile or of two, and
// prints its path.
func writeHTML(args []string, stdout, stderr io.Writer) error {
	if rest, ho, leaks, err := htmlLeaksArgs(args); leaks {
		if err != nil {
			return err
		}
		var page strings.Builder
		if err := htmlLeaks(&page, rest, stderr); err != nil {
			return err
		}
		return finishHTML(page.String(), ho, stdout, stderr)
	}
	fs := flag.NewFlagSet("arenaprof html", flag.ContinueOnError)
	df := addDiffFlags(fs)
	var ho htmlOptions
	fs.StringVar(&ho.out, "o", "", "")
	fs.BoolVar(&ho.open, "open", false, "")
	minFrame := fs.Float64("min-frame", 0.001, "")
	rssFlag := fs.Bool("rss", false, "")
	peak := fs.Bool("peak", false, "")
	fs.Bool("leaks", false, "") // -leaks=false: the other pages
	pos, err := parseAnywhere(fs, args)
	if err != nil {
		return err
	}
	if !(*minFrame >= 0 && *minFrame <= 1) {
		return topUsageErr("bad -min-frame %v; use a fraction of the total between 0 and 1, e.g. 0.001", *minFrame)
	}
	ho.minFrame = *minFrame
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["json"] {
		return topUsageErr("-json does not apply: html writes a page; use top -json or diff -json for JSON")
	}
	if !set["n"] {
		*df.g.n = "0"
	}
	var page strings.Builder
	switch {
	case *rssFlag || *peak:
		o, err := htmlRSSOptions(df, set, pos, *peak)
		if err != nil {
			return err
		}
		res, shown, err := loadRSS(o)
		if err != nil {
			return err
		}
		if err := htmlRSS(&page, res, shown); err != nil {
			return err
		}
	case len(pos) == 1 && !set["base"]:
		for _, name := range []string{"fail-above", "min-share", "min-bytes"} {
			if set[name] {
				return topUsageErr("-%s compares two profiles: give BASE and NEW", name)
			}
		}
		opts, err := topOptionsOf(df.g, df.pf, pos)
		if err != nil {
			return err
		}
		err = htmlTop(&page, opts, ho)
		var rp *rssProfileError
		if errors.As(err, &rp) && !opts.pyro.on() && rp.src == pos[0] {
			// A resident-memory profile: its class tree.
			page.Reset()
			o, oerr := htmlRSSOptions(df, set, pos, false)
			if oerr != nil {
				return oerr
			}
			res, rerr := rssResult(rp.prof, o, rp.src)
			if rerr != nil {
				return rerr
			}
			err = htmlRSS(&page, res, rp.src)
		}
		if err != nil {
			return err
		}
	case len(pos) == 2 || set["base"]:
		opts, err := df.options(pos)
		if err != nil {
			return err
		}
		if err := htmlDiff(&page, opts); err != nil {
			return err
		}
	default:
		return topUsageErr("%d arguments where PROFILE, or BASE and NEW, were expected, e.g. arenaprof html arena.pb.gz; to merge several profiles give a directory or a quoted glob, and for a diff list BASE's with -base", len(pos))
	}
	return finishHTML(page.String(), ho, stdout, stderr)
}

// finishHTML writes page where ho says, prints its path, and opens it
// with -open.
func finishHTML(page string, ho htmlOptions, stdout, stderr io.Writer) error {
	path, err := writePage(ho.out, page)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, path)
	if ho.open {
		if err := openBrowser(path); err != nil {
			fmt.Fprintln(stderr, "arenaprof html: "+err.Error())
		}
	}
	return nil
}

// htmlTop renders the page of one profile from top's result, the very
// TableResult top -json prints.
func htmlTop(w io.Writer, opts topOptions, ho htmlOptions) error {
	ap, err := loadTop(opts)
	if err != nil {
		return err
	}
	opts.goVersion = learnGoVersion(opts.goVersion, opts.limits(), loadedInput{opts.srcs, ap})
	if ap.facts.Kind == pprofmt.KindHoldings {
		return htmlHoldings(w, ap, opts)
	}
	res, err := topTable(ap, opts)
	if err != nil {
		return err
	}
	flame, err := report.Flame(ap.prof, report.FlameOptions{
		InUse: res.InUse, Confidence: res.Confidence, GoVersion: opts.goVersion, AnyOrder: opts.anyOrder, MinShare: ho.minFrame,
	})
	if err != nil {
		return topInputErr("%s: %s", opts.src, strings.TrimPrefix(err.Error(), "report: "))
	}
	for i := range res.Rows {
		res.Rows[i].Key = jsonPrinted(res.Rows[i].Key)
	}
	var heading []string
	if d := opts.filter.describe(); d != "" {
		heading = append(heading, d)
	}
	if ap.merged != nil {
		heading = append(heading, "inputs: "+ap.merged.describe())
	}
	heading = append(heading, res.Heading...)
	return htmlreport.Top(w, res, htmlreport.Options{
		Title: redactText("arenaprof top " + opts.src), Heading: redactLines(heading), Flame: flame,
	})
}

// rssHTMLFlags are the flags of arenaprof html that apply to a
// resident-memory profile; -by, -n and -confidence are rss's.
var rssHTMLFlags = []string{"o", "open", "rss", "peak", "by", "n", "confidence"}

// htmlRSSOptions checks html's flags and arguments for a resident-memory
// profile and returns them as arenaprof rss takes them.
func htmlRSSOptions(df diffFlags, set map[string]bool, pos []string, peak bool) (rssOptions, error) {
	for name := range set {
		if !slices.Contains(rssHTMLFlags, name) {
			return rssOptions{}, topUsageErr("-%s does not apply to a resident-memory profile: its page takes -by func|stack, -n, -confidence and -peak, as arenaprof rss does", name)
		}
	}
	o := rssOptions{by: *df.g.by, conf: 0.95, peak: peak}
	if !set["by"] {
		o.by = "func"
	}
	if set["confidence"] {
		c, err := strconv.ParseFloat(strings.TrimSpace(*df.g.conf), 64)
		if err != nil || !(c > 0 && c < 1) {
			return o, topUsageErr("-confidence %s: want a level strictly between 0 and 1, e.g. 0.95", *df.g.conf)
		}
		o.conf = c
	}
	n, err := strconv.Atoi(strings.TrimSpace(*df.g.n))
	if err != nil || n < 0 {
		return o, topUsageErr("-n %s: want 0 (all) or more", *df.g.n)
	}
	o.n = n
	switch {
	case len(pos) != 1:
		return o, topUsageErr("%d arguments where one SOURCE was expected: the service's base URL, the profile's URL or a saved profile", len(pos))
	case o.by != "func" && o.by != "stack":
		return o, topUsageErr("-by %q: a resident-memory profile's rows group by func or stack", o.by)
	case peak && !isProfileURL(pos[0]):
		return o, topUsageErr("-peak asks a running service for its peak: give its URL, not %s (a saved peak profile says so in its heading without -peak)", pos[0])
	}
	o.src = pos[0]
	return o, nil
}

// htmlRSS renders the class tree of a resident-memory profile, the very
// classes and rows arenaprof rss -json prints, under rss's heading.
func htmlRSS(w io.Writer, res *rss.Result, src string) error {
	rows := rssTree(res)
	for i := range rows {
		rows[i].Key = jsonPrinted(rows[i].Key)
	}
	var total int64
	for _, c := range res.Classes {
		total += c.Bytes
	}
	name := "RSS"
	if !res.Smaps {
		name = "Go classes (mapped, not resident)"
	}
	return treepage.Write(w, &treepage.Page{
		Title: redactText("arenaprof rss " + src), Heading: redactLines(rssHeading(res, src)),
		KeyHead: "CLASS", Confidence: res.Confidence, Rows: rows,
		Total: treepage.Row{Key: name, Bytes: total, Lo: total, Hi: total},
	})
}

// htmlHoldings renders the page of a live-arenas profile from the very
// HoldingsResult top -json prints: exact counts, no intervals.
func htmlHoldings(w io.Writer, ap *arenaProfile, opts topOptions) error {
	res, err := holdingsTable(ap, opts)
	if err != nil {
		return err
	}
	for i := range res.Rows {
		res.Rows[i].Key = jsonPrinted(res.Rows[i].Key)
	}
	var heading []string
	if d := opts.filter.describe(); d != "" {
		heading = append(heading, d)
	}
	heading = append(heading, holdingsHeading(res)...)
	return htmlreport.Holdings(w, res, htmlreport.Options{
		Title: redactText("arenaprof top " + opts.src), Heading: redactLines(heading),
	})
}

// htmlDiff renders the page of two profiles from diff's result, the very
// DiffResult diff -json prints, with the rows -n shows.
func htmlDiff(w io.Writer, opts diffOptions) error {
	base, next, err := loadDiff(opts)
	if err != nil {
		return err
	}
	if base.facts.Kind == pprofmt.KindHoldings || next.facts.Kind == pprofmt.KindHoldings {
		return htmlHoldingsDiff(w, base, next, opts)
	}
	base, next, res, err := diffCompare(opts, base, next)
	if err != nil {
		return err
	}
	for i := range res.Rows {
		res.Rows[i].Key = jsonPrinted(res.Rows[i].Key)
	}
	ho := htmlreport.Options{
		Title:   redactText("arenaprof diff " + opts.base + " " + opts.next),
		Heading: redactLines(diffHeading(opts, base, next, res)),
	}
	if opts.failAbove > 0 {
		g := opts.gate()
		ho.Gate = &g
	}
	ho.N = opts.n // the gate reads every row; the page shows those -n shows
	return htmlreport.Diff(w, res, ho)
}

// htmlHoldingsDiff renders the page of two live-arenas profiles from the
// very rows diff -json prints for them: exact counts, no intervals, the
// groups whose reserved bytes grew marked.
func htmlHoldingsDiff(w io.Writer, base, next *arenaProfile, opts diffOptions) error {
	by, rows, total, err := holdingsDiffRows(base, next, opts)
	if err != nil {
		return err
	}
	for i := range rows {
		rows[i].Key = jsonPrinted(rows[i].Key)
	}
	return htmlreport.HoldingsDiff(w, by, rows, total, htmlreport.Options{
		Title:   redactText("arenaprof diff " + opts.base + " " + opts.next),
		Heading: redactLines(holdingsDiffHeading(opts, by)),
		N:       opts.n,
	})
}

// jsonPrinted returns key as top -json and diff -json print it: encoding/json
// escapes the control characters below U+0020, and the filter of what the
// command prints (termWriter) turns the other unsafe runes (DEL, C1
// controls, bidirectional controls) into U+FFFD. The page's data-key
// carries the same.
func jsonPrinted(key string) string {
	return strings.Map(func(r rune) rune {
		if r >= 0x20 && unsafeRune(r) {
			return utf8.RuneError
		}
		return r
	}, key)
}

func redactLines(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = redactText(l)
	}
	return out
}

// writePage writes the page to path, or to a new file in the temporary
// directory when path is "", and returns where.
func writePage(path, page string) (string, error) {
	var f *os.File
	var err error
	if path == "" {
		f, err = os.CreateTemp("", "arenaprof-*.html")
	} else {
		f, err = os.Create(path)
	}
	if err != nil {
		return "", topInputErr("cannot write the page: %v", err)
	}
	if _, err := io.WriteString(f, page); err != nil {
		f.Close()
		return "", topInputErr("cannot write %s: %v", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return "", topInputErr("cannot write %s: %v", f.Name(), err)
	}
	return f.Name(), nil
}

// openCommand returns the command line that opens path in the system's
// browser; tests replace it.
var openCommand = func(path string) []string {
	switch runtime.GOOS {
	case "darwin":
		return []string{"open", path}
	case "windows":
		return []string{"rundll32", "url.dll,FileProtocolHandler", path}
	default:
		return []string{"xdg-open", path}
	}
}

// openWait is how long openBrowser waits for the opener to exit: long
// enough for xdg-open, open and rundll32, which hand the page over and
// exit within a second, to report a failure; an opener still running
// then (xdg-open runs some browsers in the foreground) is taken to have
// opened the page and left running. Tests shorten it.
var openWait = 5 * time.Second

// openBrowser opens path in the system's browser, where one exists. It
// returns an error, naming the page, when there is no opener, when the
// opener cannot start, or when it exits with a failure within openWait
// (xdg-open exits 3 where no browser is set up).
func openBrowser(path string) error {
	cmd := openCommand(path)
	exe, err := exec.LookPath(cmd[0])
	if err != nil {
		return fmt.Errorf("no browser to open (no %s here); the page is %s", cmd[0], path)
	}
	// The opener's output goes to the null device, not to this process's
	// stderr: a browser it starts inherits it and logs there long after
	// arenaprof has exited.
	c := exec.Command(exe, cmd[1:]...)
	if err := c.Start(); err != nil {
		return fmt.Errorf("cannot open a browser: %v; the page is %s", err, path)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%s could not open the page (%v%s); open it yourself: %s", cmd[0], err, openerHint(cmd[0], err), path)
		}
	case <-time.After(openWait):
		// Still running: it has the page; the goroutine reaps it if it
		// exits before arenaprof does.
	}
	return nil
}

// openerHint explains an opener's exit status where its meaning is
// documented: xdg-open's 1 to 4 (xdg-utils' xdg-open(1)).
func openerHint(opener string, err error) string {
	var ee *exec.ExitError
	if filepath.Base(opener) != "xdg-open" || !errors.As(err, &ee) {
		return ""
	}
	switch ee.ExitCode() {
	case 1:
		return ": a bad command line"
	case 2:
		return ": the file does not exist"
	case 3:
		return ": no browser or other program to open it with; install one or set BROWSER"
	case 4:
		return ": the program that opens it failed"
	}
	return ""
}
