package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/arenaprof/arenaprof/cmd/arenaprof/internal/pyroread"
	"github.com/arenaprof/arenaprof/report"
)

// pyroscopeUsage documents the flags that read from a Pyroscope server,
// for top and diff.
const pyroscopeUsage = `  -pyroscope URL
        read from a Pyroscope server (v1.19 or later) instead of files: each
        argument is a label selector, e.g. '{service_name="shop",env="prod"}',
        and the table comes from the server's sums over every series it
        matches and the whole range (see README, "Fleet"); basic auth may
        be given in the URL (http://user:password@host:4040)
  -from T, -to T
        the range read with -pyroscope: an RFC 3339 time
        (2026-01-02T15:04:05Z), now, or a time relative to now (-1h, -30m,
        -7d, now-2h); default the last hour
  -tenant ID
        send ID as the tenant (X-Scope-OrgID) with -pyroscope
  -parallel N
        requests in flight at once with -pyroscope (default 1; more can
        help a Pyroscope deployment with several queriers)
  -max-requests N
        the most queries one -pyroscope read sends (default 1000): a range
        that needs more (a long range against a server whose
        max_query_length is short, -by func over many types) is refused
        before any is sent; -max-memory bounds what the whole read keeps
        (see docs/fleet-limits.md)
  -token-env NAME
        send the value of the environment variable NAME as a bearer token
        with -pyroscope, if it is set (default PYROSCOPE_TOKEN)
`

// pyroscopeFlags are the flags of reading from a Pyroscope server.
type pyroscopeFlags struct {
	url, from, to, tenant, tokenEnv, parallel, maxRequests *string
}

func addPyroscopeFlags(fs *flag.FlagSet) pyroscopeFlags {
	return pyroscopeFlags{
		url:         fs.String("pyroscope", "", ""),
		from:        fs.String("from", "", ""),
		to:          fs.String("to", "", ""),
		tenant:      fs.String("tenant", "", ""),
		tokenEnv:    fs.String("token-env", "PYROSCOPE_TOKEN", ""),
		parallel:    fs.String("parallel", strconv.Itoa(pyroread.DefaultParallel), ""),
		maxRequests: fs.String("max-requests", strconv.Itoa(pyroread.DefaultMaxRequests), ""),
	}
}

// pyroscopeOptions are the checked -pyroscope flags; zero when reading
// files.
type pyroscopeOptions struct {
	client   *pyroread.Client
	from, to time.Time
}

func (o pyroscopeOptions) on() bool { return o.client != nil }

// now is the time relative times are taken from; tests fix it.
var now = time.Now

// warnings receives the warnings of reading from Pyroscope.
var warnings io.Writer = os.Stderr

// defaultLookback is Pyroscope's default max_query_lookback: the server
// moves the start of a query back to it, silently.
const defaultLookback = 7 * 24 * time.Hour

// values checks the flags and, with -pyroscope, sets up the client; lim
// bounds every answer read.
func (f pyroscopeFlags) values(lim report.ParseOptions) (pyroscopeOptions, error) {
	var o pyroscopeOptions
	if *f.url == "" {
		for _, x := range []struct{ name, v string }{{"from", *f.from}, {"to", *f.to}, {"tenant", *f.tenant}, {"max-requests", maxRequestsSet(*f.maxRequests)}} {
			if x.v != "" {
				return o, topUsageErr("-%s is for -pyroscope; without it the arguments are profile files or URLs", x.name)
			}
		}
		return o, nil
	}
	if u, err := url.Parse(*f.url); err == nil {
		registerURL(u)
	}
	t := now()
	var err error
	if o.from, err = parseTime(*f.from, t, t.Add(-time.Hour)); err != nil {
		return o, topUsageErr("bad -from %q: %v", *f.from, err)
	}
	if o.to, err = parseTime(*f.to, t, t); err != nil {
		return o, topUsageErr("bad -to %q: %v", *f.to, err)
	}
	if !o.to.After(o.from) {
		return o, topUsageErr("-from %s is not before -to %s", o.from.Format(time.RFC3339), o.to.Format(time.RFC3339))
	}
	if o.from.Before(t.Add(-defaultLookback)) {
		// The server answers such a query without an error, as if the
		// range began later.
		fmt.Fprintf(warnings, "arenaprof: warning: -from %s is more than 7 days ago: Pyroscope's default max_query_lookback (7d) leaves out older data without saying so; the table covers only what the server's limit allows\n", o.from.Format(time.RFC3339))
	}
	token := ""
	if *f.tokenEnv != "" {
		token = os.Getenv(*f.tokenEnv)
	}
	addSecret(token)
	addSecret("Bearer " + token)
	if len(*f.tenant) >= 4 {
		addSecret(*f.tenant)
	}
	par, err := strconv.Atoi(strings.TrimSpace(*f.parallel))
	if err != nil || par < 1 || par > 64 {
		return o, topUsageErr("bad -parallel %q; use a number of requests from 1 to 64", *f.parallel)
	}
	maxReq, err := strconv.Atoi(strings.TrimSpace(*f.maxRequests))
	if err != nil || maxReq < 1 || maxReq > maxMaxRequests {
		return o, topUsageErr("bad -max-requests %q; use a number of queries from 1 to %d", *f.maxRequests, maxMaxRequests)
	}
	o.client, err = pyroread.NewClient(pyroread.Config{URL: *f.url, Token: token, Tenant: *f.tenant, Limits: lim, Parallel: par, MaxRequests: maxReq})
	if err != nil {
		return o, topUsageErr("bad -pyroscope: %v", err)
	}
	return o, nil
}

// maxMaxRequests bounds -max-requests: a million queries.
const maxMaxRequests = 1_000_000

// maxRequestsSet returns v if -max-requests was set to other than its
// default, else "".
func maxRequestsSet(v string) string {
	if v == strconv.Itoa(pyroread.DefaultMaxRequests) {
		return ""
	}
	return v
}

// maxRelative bounds a relative time: ten years.
const maxRelative = 10 * 365 * 24 * time.Hour

// parseTime reads a -from or -to value: empty (def), now, an RFC 3339
// time, or a duration relative to now with an optional "now" before it
// (-1h, now-30m, -7d; a day is 24 hours).
func parseTime(s string, now, def time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "":
		return def, nil
	case "now":
		return now, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	rel := strings.TrimPrefix(s, "now")
	if rel == "" || (rel[0] != '-' && rel[0] != '+') {
		return time.Time{}, errors.New("use an RFC 3339 time (2026-01-02T15:04:05Z), now, or a time relative to now such as -1h or -7d")
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(rel[1:], "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil || !(n >= 0) || n*24 > float64(maxRelative/time.Hour) {
			return time.Time{}, fmt.Errorf("bad number of days %q", days)
		}
		d = time.Duration(n * float64(24*time.Hour))
	} else {
		var err error
		if d, err = time.ParseDuration(rel[1:]); err != nil || d < 0 {
			return time.Time{}, errors.New("bad duration; use e.g. -1h, -90m, -7d")
		}
	}
	if d > maxRelative {
		return time.Time{}, errors.New("more than ten years from now")
	}
	if rel[0] == '-' {
		d = -d
	}
	return now.Add(d), nil
}

// loadPyroscope reads the fleet profile sel selects over the range, for
// the grouping by (byDefault: the grouping is chosen from what is read,
// by type, or by function for Go heap memory).
func (o pyroscopeOptions) load(sel string, c commonOptions) (*arenaProfile, error) {
	s, err := pyroread.ParseSelector(sel)
	if err != nil {
		return nil, topUsageErr("bad label selector %s: %v", sel, err)
	}
	if c.sample == "inuse" {
		return nil, topUsageErr("-sample inuse with -pyroscope: in-use bytes are levels, which the server adds up over every upload in the range; read live bytes with the averaged query in the README (\"Live memory\")")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	q := pyroread.Query{Selector: s, From: o.from, To: o.to}
	read := func(by string) (*arenaProfile, error) {
		q.Labels, q.Stacks = nil, false
		switch key, isLabel := strings.CutPrefix(by, "label="); {
		case by == "type":
			q.Labels = []string{"type"}
		case isLabel:
			q.Labels = []string{key}
		case by == "func" || by == "stack":
			q.Stacks = true
		}
		p, err := o.client.Read(ctx, q)
		if err != nil {
			var le *pyroread.LimitError
			if errors.As(err, &le) {
				return nil, topInputErr("%v", err)
			}
			if errors.Is(err, report.ErrTooLarge) {
				return nil, limitErr(o.client.Base(), err, c.limits())
			}
			return nil, topInputErr("%s: %v", o.client.Base(), err)
		}
		return newArenaProfile(p), nil
	}
	if !c.byDefault {
		return read(c.by)
	}
	ap, err := read("type")
	if err != nil {
		return nil, err
	}
	if by := c.groupingFor(ap); by != "type" {
		return read(by)
	}
	return ap, nil
}

// regroup reads again, for the grouping by, a side of a diff that was read
// for another: each side's default grouping follows what it holds, and a
// diff needs one grouping for both.
func (o pyroscopeOptions) regroup(by string, opts diffOptions, base, next *arenaProfile) (*arenaProfile, *arenaProfile, error) {
	if !opts.byDefault {
		return base, next, nil
	}
	c := opts.commonOptions
	c.by, c.byDefault = by, false
	var err error
	if opts.groupingFor(base) != by {
		if base, err = o.load(opts.base, c); err != nil {
			return nil, nil, err
		}
	}
	if opts.groupingFor(next) != by {
		if next, err = o.load(opts.next, c); err != nil {
			return nil, nil, err
		}
	}
	return base, next, nil
}
