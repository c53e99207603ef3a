package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofread"
	"github.com/arenaprof/arenaprof/internal/rss"
	"github.com/arenaprof/arenaprof/internal/tabfmt"
	"github.com/arenaprof/arenaprof/internal/treepage"
	"github.com/arenaprof/arenaprof/report"
)

const rssUsage = `usage: arenaprof rss [-by func|stack] [-n N] [-confidence C] [-json] [-peak] SOURCE
       arenaprof rss -pyroscope URL [-from T] [-to T] [-n N] [-json] SELECTOR

Where the resident memory (RSS) of a service goes: every resident byte in
one class, as a tree with bytes and share of RSS, and below go/heap/live
and arena/* the sites holding them (go/heap/live's estimated from the
runtime's heap profile, with intervals; arena memory exact).

SOURCE is the service's base URL (http://host:port: /debug/arenaprof/rss
is read), the URL of the resident-memory profile, a saved profile
(rss.pb.gz), or - for standard input. A profile of another kind is
refused, naming what it is.

-peak reads the profile at the highest RSS since the service's
arenaprof.Start (the URL's ?peak=1; add &seconds=N to the URL for the
highest within the next N seconds): the RSS is watched every 250 ms and
read in full when it makes a new high by 3% or 1 MiB.

The classes:
  go/heap/live   heap objects live at the last GC, by allocation site
  go/heap/dead   heap objects allocated or unreachable since, not yet swept
  go/heap/free   resident heap memory that holds no object
  go/stacks      goroutine stacks
  go/runtime     the runtime's own memory (an upper bound: mapped bytes)
  arena/used     bytes arenas have handed out and not reset, exact
  arena/free     the rest of the heap memory arenas hold, exact
  binary         the executable's resident file pages
  files          other file-backed and shared mappings
  nongo          anonymous memory not from the Go runtime (cgo, C malloc, mmap)
  unattributed   what none of the above explains

-json prints {"rss_bytes": N, "classes": [{"class", "bytes", "lo", "hi"}],
"rows": [{"class", "key", "bytes", "lo", "hi"}], ...}; exact classes and
rows have lo = hi = bytes.

With -pyroscope, SELECTOR chooses the series of the agents' "rss"
uploads (e.g. '{service_name="shop"}') and the breakdown is over pods
and time: per class the mean and the maximum over the snapshots in the
range, one snapshot being one pod's upload at one moment (a class's
maximum is its own highest, not necessarily of the snapshot of the
highest RSS); the rows are each site's mean over the snapshots, by
function, go/heap/live's without intervals (a sampled object recurs in
consecutive snapshots, so their counts are not independent). Snapshots
read without smaps are left out of the figures when others were read
with it, and said. -json prints {"rss_bytes": {"mean", "max", ...},
"classes": [{"class", "mean", "max"}], "rows": [{"class", "key",
"mean", "estimated"}], "snapshot_list": [...], ...}.

flags:
`

// rssOptions are the flags of arenaprof rss.
type rssOptions struct {
	by   string
	n    int
	conf float64
	json bool
	peak bool
	src  string
	lim  report.ParseOptions // -max-bytes, -max-memory
	pyro pyroscopeOptions
}

func runRSS(args []string, stdout, stderr io.Writer) int {
	opts, err := parseRSSArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil {
		err = rssCommand(opts, stdout)
	}
	if err != nil {
		return exitWith(stderr, "arenaprof rss", err)
	}
	return 0
}

func parseRSSArgs(args []string, stderr io.Writer) (rssOptions, error) {
	var o rssOptions
	fs := flag.NewFlagSet("arenaprof rss", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.by, "by", "func", "group the sites by `func` (the allocating function) or stack")
	fs.IntVar(&o.n, "n", 10, "rows shown per class; 0 shows all")
	fs.Float64Var(&o.conf, "confidence", 0.95, "confidence `level` of the intervals, strictly between 0 and 1")
	fs.BoolVar(&o.json, "json", false, "print JSON")
	fs.BoolVar(&o.peak, "peak", false, "the profile at the highest RSS since the service started (a URL's ?peak=1)")
	lf := addReadLimitFlags(fs)
	own := flag.NewFlagSet("arenaprof rss", flag.ContinueOnError)
	fs.VisitAll(func(f *flag.Flag) { own.Var(f.Value, f.Name, f.Usage) })
	pf := addPyroscopeFlags(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), rssUsage)
		own.SetOutput(fs.Output())
		own.PrintDefaults()
		fmt.Fprint(fs.Output(), rssPyroscopeUsage)
	}
	pos, err := parseAnywhere(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return o, err
	}
	if err != nil {
		return o, topUsageErr("%v", err)
	}
	if o.lim, err = lf.values(); err != nil {
		return o, err
	}
	if o.pyro, err = pf.values(o.lim); err != nil {
		return o, err
	}
	switch {
	case o.pyro.on() && len(pos) != 1:
		return o, topUsageErr("%d arguments where one SELECTOR was expected with -pyroscope, e.g. '{service_name=\"shop\"}'", len(pos))
	case o.pyro.on() && o.peak:
		return o, topUsageErr("-peak reads a running service; with -pyroscope, the maximum of each class over the range is in the MAX column")
	case o.pyro.on() && o.by != "func":
		return o, topUsageErr("-by %s with -pyroscope: the fleet's rows are by function only", o.by)
	case len(pos) != 1:
		return o, topUsageErr("%d arguments where one SOURCE was expected: the service's base URL, the profile's URL or a saved profile", len(pos))
	case o.by != "func" && o.by != "stack":
		return o, topUsageErr("-by %q: use func or stack", o.by)
	case !(o.conf > 0 && o.conf < 1):
		return o, topUsageErr("-confidence %v: want a level strictly between 0 and 1, e.g. 0.95", o.conf)
	case o.n < 0:
		return o, topUsageErr("-n %d: want 0 (all) or more", o.n)
	case o.peak && !isProfileURL(pos[0]):
		return o, topUsageErr("-peak asks a running service for its peak: give its URL, not %s (a saved peak profile says so in its heading without -peak)", pos[0])
	}
	o.src = pos[0]
	return o, nil
}

// rssPath is where arenaprof.Start serves the resident-memory profile.
const rssPath = "/debug/arenaprof/rss"

// rssSource turns a service's base URL into the profile's URL, asking
// for the peak when peak is set.
func rssSource(src string, peak bool) string {
	if !isProfileURL(src) {
		return src
	}
	u, err := url.Parse(src)
	if err != nil {
		return src // fetchProfile says what is wrong
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = rssPath
	}
	if peak {
		q := u.Query()
		q.Set("peak", "1")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// rssPyroscopeUsage documents the flags of reading from Pyroscope.
const rssPyroscopeUsage = `  -pyroscope URL
        read the agents' resident-memory uploads from a Pyroscope server
        (v1.19 or later); the argument is a label selector
  -from T, -to T
        the range read with -pyroscope: an RFC 3339 time, now, or a time
        relative to now (-1h, -30m, -7d); default the last hour
  -tenant ID, -token-env NAME, -parallel N, -max-requests N
        as for top (arenaprof top -h)
`

func rssCommand(o rssOptions, stdout io.Writer) error {
	if o.pyro.on() {
		return rssFleetCommand(o, stdout)
	}
	res, shown, err := loadRSS(o)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(stdout, res)
	}
	return formatRSS(stdout, res, shown)
}

// loadRSS reads the resident-memory profile o names and its classes and
// rows (the first o.n of each class), and says how to name its source.
func loadRSS(o rssOptions) (*rss.Result, string, error) {
	s, err := openProfileSource(rssSource(o.src, o.peak))
	if err != nil {
		return nil, "", err
	}
	defer s.close()
	lim := withDefaults(o.lim)
	p, _, err := pprofread.Read(s.r, pprofread.Options(lim))
	if err != nil {
		return nil, "", parseErr(s, err, lim)
	}
	res, err := rssResult(p, o, s.shown)
	return res, s.shown, err
}

// rssResult reads the classes and rows of p, read from src.
func rssResult(p *profile.Profile, o rssOptions, src string) (*rss.Result, error) {
	res, err := rss.Parse(p, o.by, o.conf)
	if err != nil {
		return nil, topInputErr("%s: %v", src, err)
	}
	if o.n > 0 {
		res.Rows = firstRows(res.Rows, o.n)
	}
	return res, nil
}

// firstRows keeps the first n rows of each class (rows come by class,
// largest first).
func firstRows(rows []rss.Row, n int) []rss.Row {
	var out []rss.Row
	count := map[string]int{}
	for _, r := range rows {
		if count[r.Class] < n {
			out = append(out, r)
		}
		count[r.Class]++
	}
	return out
}

// formatRSS writes the class tree: each prefix of the class paths with
// the bytes under it, share of RSS and interval, the rows under their
// class.
func formatRSS(w io.Writer, res *rss.Result, src string) error {
	if _, err := io.WriteString(w, strings.Join(rssHeading(res, src), "\n")+"\n\n"); err != nil {
		return err
	}
	var total int64
	for _, c := range res.Classes {
		total += c.Bytes
	}
	share := func(v int64) string {
		if total == 0 {
			return "-"
		}
		return strconv.FormatFloat(100*float64(v)/float64(total), 'f', 1, 64) + "%"
	}
	t := tabfmt.New(w)
	t.Row([]string{"BYTES", "SHARE", "INTERVAL"}, "CLASS")
	for _, r := range rssTree(res) {
		iv := "exact"
		if r.Estimated {
			iv = "[" + tabfmt.Bytes(float64(r.Lo)) + ", " + tabfmt.Bytes(float64(r.Hi)) + "]"
		}
		name := r.Key
		if r.Key == r.Class || r.Class == "" {
			name = name[strings.LastIndexByte(name, '/')+1:] // the class tree's own level
		} else {
			name = tabfmt.Printable(name)
		}
		t.Row([]string{tabfmt.Bytes(float64(r.Bytes)), share(r.Bytes), iv}, strings.Repeat("  ", r.Depth)+name)
	}
	return t.Flush()
}

// rssHeading is the heading of a resident-memory profile's tree: the
// peak it is, the RSS and when it was read, the cgroup's memory, what
// the intervals are, and the profile's notes.
func rssHeading(res *rss.Result, src string) []string {
	var head []string
	if res.PeakSince != nil {
		head = append(head, fmt.Sprintf("peak: the highest RSS seen since %s, read every 250 ms", res.PeakSince.UTC().Format(time.DateTime+" UTC")))
	}
	var line string
	if res.Smaps {
		line = fmt.Sprintf("RSS %s (%d bytes) of %s", tabfmt.Bytes(float64(res.RSSBytes)), res.RSSBytes, src)
	} else {
		line = fmt.Sprintf("RSS unknown of %s: smaps was not read; the Go classes only, as runtime/metrics maps them", src)
	}
	if !res.Time.IsZero() {
		line += fmt.Sprintf(", read %s", res.Time.UTC().Format(time.DateTime+" UTC"))
	}
	head = append(head, line)
	if res.CgroupCurrent >= 0 {
		line = fmt.Sprintf("cgroup memory.current %s", tabfmt.Bytes(float64(res.CgroupCurrent)))
		if res.CgroupMax >= 0 {
			line += fmt.Sprintf(", memory.max %s", tabfmt.Bytes(float64(res.CgroupMax)))
		} else {
			line += ", memory.max none"
		}
		head = append(head, line)
	}
	head = append(head, fmt.Sprintf("go/heap/live rows: estimates from the runtime's heap profile with %g%% intervals; every other figure exact", 100*res.Confidence))
	for _, n := range res.Notes {
		head = append(head, "note: "+n)
	}
	return head
}

// rssTree lays the classes out as a tree, in the order of res.Classes:
// each prefix of the class paths (go, go/heap) with the bytes under it,
// first where it first appears, each class, and the rows under their
// class, one level deeper. Key is the prefix's or class's path, or the
// row's key; Class is "" on a prefix.
func rssTree(res *rss.Result) []treepage.Row {
	var out []treepage.Row
	paths := make([]string, len(res.Classes))
	for i, c := range res.Classes {
		paths[i] = c.Class
	}
	walkClasses(paths, func(path, _ string, depth int, under []int) {
		var sum int64
		for _, j := range under {
			sum += res.Classes[j].Bytes
		}
		out = append(out, treepage.Row{Key: path, Depth: depth, Bytes: sum, Lo: sum, Hi: sum})
	}, func(i int, _ string, depth int) {
		c := res.Classes[i]
		out = append(out, treepage.Row{Key: c.Class, Class: c.Class, Depth: depth, Bytes: c.Bytes, Lo: c.Lo, Hi: c.Hi})
		for _, r := range res.Rows {
			if r.Class != c.Class {
				continue
			}
			out = append(out, treepage.Row{Key: r.Key, Class: r.Class, Depth: depth + 1, Bytes: r.Bytes, Lo: r.Lo, Hi: r.Hi,
				Estimated: r.Lo != r.Hi || r.Class == rss.GoHeapLive})
		}
	})
	return out
}

// walkClasses lays class paths out as a tree, in their order: before a
// class, each prefix of its path (go, go/heap) not met before, with its
// last element, depth and the indexes of the classes under it; then the
// class, with its last element and depth.
func walkClasses(paths []string, prefix func(path, name string, depth int, under []int), class func(i int, name string, depth int)) {
	seen := map[string]bool{}
	for i, p := range paths {
		parts := strings.Split(p, "/")
		for d := range parts[:len(parts)-1] {
			pre := strings.Join(parts[:d+1], "/")
			if seen[pre] {
				continue
			}
			seen[pre] = true
			var under []int
			for j, q := range paths {
				if strings.HasPrefix(q, pre+"/") {
					under = append(under, j)
				}
			}
			prefix(pre, parts[d], d, under)
		}
		depth := len(parts) - 1
		class(i, parts[depth], depth)
	}
}
