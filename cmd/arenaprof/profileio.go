package main

import (
	"github.com/arenaprof/arenaprof/internal/pprofmt"

	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofread"
	"github.com/arenaprof/arenaprof/internal/tabfmt"
	"github.com/arenaprof/arenaprof/report"
)

// stdin is where a PROFILE of "-" is read from; tests replace it.
var stdin io.Reader = os.Stdin

// httpBaseTimeout is the time allowed to fetch a profile from a URL, on top
// of the seconds=N window the URL asks the handler to wait for; tests
// shorten it.
var httpBaseTimeout = 30 * time.Second

// maxRedirects bounds the redirects followed when fetching a profile.
const maxRedirects = 5

// errorBodyMax bounds what is read of a server's error answer to quote it.
const errorBodyMax = 4096

// topError is a failure with its exit status and a one-line message.
type topError struct {
	code int
	msg  string
}

func (e *topError) Error() string { return e.msg }

// topUsageErr is a bad flag or argument (exit status 2).
func topUsageErr(format string, args ...any) error {
	return &topError{code: 2, msg: topOneLine(fmt.Sprintf(format, args...))}
}

// topInputErr is an unreadable or unsuitable profile (exit status 1).
func topInputErr(format string, args ...any) error {
	return &topError{code: 1, msg: topOneLine(fmt.Sprintf(format, args...))}
}

// topOneLine folds a message onto one line so that errors from deep inside
// the standard library or a server body never spill over several lines,
// and redacts the credentials in it (see redactText).
func topOneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unsafeRune(r) && r != utf8.RuneError {
			return ' '
		}
		return r
	}, s)
	return redactText(strings.Join(strings.Fields(s), " "))
}

// exitWith prints err as one line after the command's name and returns
// its exit status: a topError's code, else 1.
func exitWith(stderr io.Writer, command string, err error) int {
	code := 1
	var te *topError
	if errors.As(err, &te) {
		code = te.code
	}
	fmt.Fprintln(stderr, topOneLine(command+": "+err.Error()))
	return code
}

// arenaProfile is a parsed profile checked to be one that report.Table
// reads: an arenaprof profile or a Go heap or allocs profile.
type arenaProfile struct {
	prof *profile.Profile
	// facts are what prof is (pprofmt.Describe), derived once when it is
	// read (and again when a filter changes it).
	facts *pprofmt.Facts
	// cost is the memory the decoded profile was estimated to take
	// (pprofread.Read); 0 when not read from data.
	cost int64
	// merged describes the inputs merged into prof; nil for one input.
	merged *mergedInputs
}

// newArenaProfile returns p with its facts, not checked: report's
// functions return what is wrong with it.
func newArenaProfile(p *profile.Profile) *arenaProfile {
	f, _ := pprofmt.Describe(p)
	return &arenaProfile{prof: p, facts: f}
}

// isProfileURL reports whether src names an http(s) URL rather than a file.
func isProfileURL(src string) bool {
	l := strings.ToLower(src)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// limitErr is the message for a profile past -max-bytes or -max-memory:
// it names the flag that was hit and, from what report.Parse measured of
// the whole data after refusing it, what the profile needs and a value
// above it to pass; data that is no profile is said to be none.
func limitErr(src string, err error, lim report.ParseOptions) error {
	var mle *pprofmt.MemoryLimitError
	var sle *pprofmt.SizeLimitError
	isMem := errors.As(err, &mle)
	isSize := !isMem && errors.As(err, &sle)
	switch {
	case isMem && mle.NotProfile:
		return topInputErr("cannot read %s: not a profile: its data is no protobuf message and starts like no legacy profile (refused at -max-memory %s, before reading it all)", src, formatByteSize(lim.MaxMemory))
	case isSize && sle.NotProfile:
		return topInputErr("cannot read %s: not a profile: its data is no protobuf message and starts like no legacy profile (refused at -max-bytes %s, before reading it all)", src, formatByteSize(lim.MaxBytes))
	case isMem:
		takes := "takes " + tabfmt.Bytes(float64(mle.Need))
		if !mle.Exact {
			takes = "takes more than " + tabfmt.Bytes(float64(mle.Need))
		}
		msg := fmt.Sprintf("cannot read %s: reading it %s of memory, more than -max-memory %s; raise -max-memory (e.g. -max-memory %s)", src, takes, formatByteSize(lim.MaxMemory), formatByteSize(suggestMemory(lim.MaxMemory, mle.Need)))
		if mle.Size > lim.MaxBytes {
			more := ""
			if !mle.Exact {
				more = "more than "
			}
			msg += fmt.Sprintf(" and -max-bytes (e.g. -max-bytes %s; its data is %s%s decompressed)", formatByteSize(suggestMemory(lim.MaxBytes, mle.Size)), more, tabfmt.Bytes(float64(mle.Size)))
		}
		return topInputErr("%s if the profile is genuine", msg)
	case isSize:
		size := tabfmt.Bytes(float64(sle.Size))
		if !sle.Exact {
			size = "more than " + size
		}
		how := ": its data is " + size + " decompressed"
		if sle.Compressed {
			how = " as read (compressed), and " + size + " decompressed"
		}
		return topInputErr("cannot read %s: larger than -max-bytes %s%s; raise -max-bytes (e.g. -max-bytes %s) if the profile is genuine", src, formatByteSize(lim.MaxBytes), how, formatByteSize(suggestMemory(lim.MaxBytes, sle.Size)))
	case errors.Is(err, pprofmt.ErrMemoryLimit):
		return topInputErr("cannot read %s: decoding it would take more than -max-memory %s of memory; raise -max-memory (e.g. -max-memory %s) if the profile is genuine", src, formatByteSize(lim.MaxMemory), formatByteSize(suggestMemory(lim.MaxMemory, lim.MaxMemory)))
	}
	return topInputErr("cannot read %s: larger than -max-bytes %s (compressed or not); raise -max-bytes (e.g. -max-bytes %s) if the profile is genuine", src, formatByteSize(lim.MaxBytes), formatByteSize(suggestMemory(lim.MaxBytes, lim.MaxBytes)))
}

// suggestMemory is the -max-memory (or -max-bytes) a refusal at limit
// suggests: the smallest power of two at least twice limit and above need,
// what the whole profile was measured to need (or a lower bound of it).
func suggestMemory(limit, need int64) int64 {
	s := int64(1) << 20
	for s/2 < limit || s <= need {
		if s > math.MaxInt64/2 {
			return math.MaxInt64
		}
		s *= 2
	}
	return s
}

// profileSource is an open profile input.
type profileSource struct {
	shown string    // its name as messages give it
	r     io.Reader // the profile's bytes
	url   bool      // fetched over HTTP: read errors are the server's
	wait  time.Duration
	close func()
}

// openProfileSource opens a profile file, URL or, for "-", standard input.
func openProfileSource(src string) (*profileSource, error) {
	if isProfileURL(src) {
		return fetchProfile(src)
	}
	if src == "-" {
		return &profileSource{shown: "standard input", r: stdin, close: func() {}}, nil
	}
	f, err := os.Open(src)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, topInputErr("cannot read %s: no such file; pass a profile file written by the arenaprof exporter or the http(s) URL of its handler", src)
		}
		return nil, topInputErr("cannot read %s: %v", src, err)
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, topInputErr("cannot read %s: it is a directory; pass a profile file or an http(s) URL", src)
	}
	return &profileSource{shown: src, r: f, close: func() { f.Close() }}, nil
}

// profileClient is the HTTP client profiles are fetched with: a bound on
// the response header, a few redirects at most, and every URL it is
// redirected to known for redaction.
var profileClient = func() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxResponseHeaderBytes = 64 << 10
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			registerURL(req.URL)
			if len(via) >= maxRedirects {
				return fmt.Errorf("more than %d redirects", maxRedirects)
			}
			return nil
		},
	}
}()

// fetchProfile GETs a profile from the arenaprof HTTP handler and returns
// its body, unread.
func fetchProfile(rawURL string) (*profileSource, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		// The URL is not quoted: it may hold a password.
		return nil, topInputErr("cannot fetch the profile: not a valid URL; use the form http://host:port/path")
	}
	registerURL(u)
	shown := redactURL(u) // messages never show a credential
	timeout := httpBaseTimeout
	if s := u.Query().Get("seconds"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 && n < 1<<20 {
			timeout += time.Duration(n) * time.Second
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		cancel()
		return nil, topInputErr("cannot fetch %s: %v", shown, err)
	}
	resp, err := profileClient.Do(req)
	if err != nil {
		cancel()
		if inner := errors.Unwrap(err); inner != nil {
			err = inner // drop the URL, which the message already names
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, topInputErr("cannot fetch %s: no answer within %v", shown, timeout)
		}
		if strings.Contains(err.Error(), "redirects") {
			return nil, topInputErr("cannot fetch %s: %v", shown, err)
		}
		return nil, topInputErr("cannot fetch %s: %v; check that the program is running and serves the arenaprof handler at that address", shown, err)
	}
	done := func() { resp.Body.Close(); cancel() }
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyMax))
		done()
		line := excerpt(body)
		if line == "" {
			line = "(empty body)"
		}
		return nil, topInputErr("cannot fetch %s: server answered %s: %s", shown, resp.Status, line)
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(strings.ToLower(ct), "text/html") {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyMax))
		done()
		return nil, topInputErr("cannot fetch %s: server answered an HTML page, not a profile (%s); check the URL's path, e.g. /debug/arenaprof", shown, excerpt(body))
	}
	return &profileSource{shown: shown, r: resp.Body, url: true, wait: timeout, close: done}, nil
}

// parseErr words an error of report.Parse on src for the command.
func parseErr(src *profileSource, err error, lim report.ParseOptions) error {
	switch {
	case errors.Is(err, report.ErrTooLarge):
		return limitErr(src.shown, err, lim)
	case src.url && errors.Is(err, context.DeadlineExceeded):
		return topInputErr("cannot fetch %s: the whole profile did not arrive within %v", src.shown, src.wait)
	case strings.Contains(err.Error(), "report: reading profile:"):
		what := "read"
		if src.url {
			what = "fetch"
		}
		return topInputErr("cannot %s %s: %s", what, src.shown, strings.TrimPrefix(err.Error(), "report: "))
	case strings.Contains(err.Error(), "empty data"):
		return topInputErr("%s is empty, not a profile; pass a profile written by the arenaprof exporter or its handler", src.shown)
	}
	return topInputErr("%s is not a pprof profile (%s); pass a profile written by the arenaprof exporter or its handler", src.shown, strings.TrimPrefix(err.Error(), "report: "))
}

// loadArenaProfile reads src (a file, URL or - for standard input) within
// the bounds lim and checks that it is an arenaprof or Go heap profile.
func loadArenaProfile(src string, lim report.ParseOptions) (*arenaProfile, error) {
	s, err := openProfileSource(src)
	if err != nil {
		return nil, err
	}
	defer s.close()
	return decodeArenaFrom(s, lim)
}

// decodeArenaFrom parses the profile s holds and checks that it is one
// report.Table reads.
func decodeArenaFrom(s *profileSource, lim report.ParseOptions) (*arenaProfile, error) {
	lim = withDefaults(lim)
	p, cost, err := pprofread.Read(s.r, pprofread.Options(lim))
	if err != nil {
		return nil, parseErr(s, err, lim)
	}
	f, err := checkArena(s.shown, p)
	if err != nil {
		return nil, err
	}
	return &arenaProfile{prof: p, facts: f, cost: cost}, nil
}

// rssProfileError refuses a resident-memory profile where a sampled one
// is read (top, diff); arenaprof html draws the class tree of the
// profile it carries instead.
type rssProfileError struct {
	err  error
	prof *profile.Profile
	src  string
}

func (e *rssProfileError) Error() string { return e.err.Error() }
func (e *rssProfileError) Unwrap() error { return e.err }

// withDefaults fills in the default bounds of reading a profile.
func withDefaults(lim report.ParseOptions) report.ParseOptions {
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = pprofmt.DefaultMaxBytes
	}
	if lim.MaxMemory <= 0 {
		lim.MaxMemory = pprofmt.DefaultMaxMemory
	}
	return lim
}

// checkArena derives the facts of p, read from src, and checks that it is
// a profile report.Table reads (or a live-arenas profile) and that its
// sampling means are usable; the error names src.
func checkArena(src string, p *profile.Profile) (*pprofmt.Facts, error) {
	f, merr := pprofmt.Describe(p)
	if f.Kind == pprofmt.KindHoldings {
		return f, nil // exact counts: nothing to estimate
	}
	if err := f.CheckSampledMemory(); err != nil {
		err = topInputErr("%s: %s", src, strings.TrimPrefix(err.Error(), "report: "))
		if f.Kind == pprofmt.KindRSS {
			return nil, &rssProfileError{err: err, prof: p, src: src}
		}
		return nil, err
	}
	if f.BadValues >= 0 {
		return nil, topInputErr("%s is a malformed profile: a sample has %d values for %d sample types", src, f.BadValues, f.Types)
	}
	if merr != nil {
		return nil, topInputErr("%s: %s", src, strings.TrimPrefix(merr.Error(), "report: "))
	}
	return f, nil
}
