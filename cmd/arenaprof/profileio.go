package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/report"
)

// stdin is where a PROFILE of "-" is read from; tests replace it.
var stdin io.Reader = os.Stdin

// httpBaseTimeout is the time allowed to fetch a profile from a URL, on top
// of the seconds=N window the URL asks the handler to wait for.
const httpBaseTimeout = 30 * time.Second

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

// topOneLine folds a message onto one line so that errors from deep inside the
// standard library or a server body never spill over several lines.
func topOneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\r", " ")), " ")
}

// arenaProfile is a parsed profile checked to be one that report.Table
// reads: an arenaprof profile or a Go heap or allocs profile.
type arenaProfile struct {
	prof *profile.Profile
}

// isProfileURL reports whether src names an http(s) URL rather than a file.
func isProfileURL(src string) bool {
	l := strings.ToLower(src)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// tooLarge is the message for a profile past the -max-bytes bound.
func tooLarge(src string, max int64) error {
	return topInputErr("cannot read %s: larger than -max-bytes %d bytes (compressed or not); raise -max-bytes if the profile is genuine", src, max)
}

// readProfileSource returns the raw bytes of a profile file, URL or, for
// "-", standard input, refusing more than max bytes.
func readProfileSource(src string, max int64) ([]byte, error) {
	if isProfileURL(src) {
		return fetchProfile(src, max)
	}
	if src == "-" {
		data, err := io.ReadAll(io.LimitReader(stdin, max+1))
		if err != nil {
			return nil, topInputErr("cannot read standard input: %v", err)
		}
		if int64(len(data)) > max {
			return nil, tooLarge("standard input", max)
		}
		return data, nil
	}
	f, err := os.Open(src)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, topInputErr("cannot read %s: no such file; pass a profile file written by the arenaprof exporter or the http(s) URL of its handler", src)
		}
		return nil, topInputErr("cannot read %s: %v", src, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, topInputErr("cannot read %s: it is a directory; pass a profile file or an http(s) URL", src)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, topInputErr("cannot read %s: %v", src, err)
	}
	if int64(len(data)) > max {
		return nil, tooLarge(src, max)
	}
	return data, nil
}

// fetchProfile GETs a profile from the arenaprof HTTP handler.
func fetchProfile(rawURL string, max int64) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		// The URL is not quoted: it may hold a password.
		return nil, topInputErr("cannot fetch the profile: not a valid URL; use the form http://host:port/path")
	}
	shown := u.Redacted() // messages never show a password
	timeout := httpBaseTimeout
	if s := u.Query().Get("seconds"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 && n < 1<<20 {
			timeout += time.Duration(n) * time.Second
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, topInputErr("cannot fetch %s: %v", shown, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if inner := errors.Unwrap(err); inner != nil {
			err = inner // drop the URL, which the message already names
		}
		return nil, topInputErr("cannot fetch %s: %v; check that the program is running and serves the arenaprof handler at that address", shown, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		line, _ := bufio.NewReader(io.LimitReader(resp.Body, 4096)).ReadString('\n')
		line = topOneLine(line)
		if line == "" {
			line = "(empty body)"
		}
		return nil, topInputErr("cannot fetch %s: server answered %s: %s", shown, resp.Status, line)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, topInputErr("cannot fetch %s: reading the body: %v", shown, err)
	}
	if int64(len(data)) > max {
		return nil, tooLarge(shown, max)
	}
	return data, nil
}

// parseProfileData parses pprof bytes (gzipped or not) read from src,
// bounding their decompressed size by max.
func parseProfileData(src string, data []byte, max int64) (*profile.Profile, error) {
	p, err := report.Parse(bytes.NewReader(data), max)
	if errors.Is(err, report.ErrTooLarge) {
		return nil, tooLarge(src, max)
	}
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "report: "))
	}
	return p, nil
}

// loadArenaProfile reads src (a file or URL) and checks that it is an
// arenaprof profile.
func loadArenaProfile(src string, max int64) (*arenaProfile, error) {
	data, err := readProfileSource(src, max)
	if err != nil {
		return nil, err
	}
	if src == "-" {
		src = "standard input"
	}
	return decodeArenaProfile(src, data, max)
}

// decodeArenaProfile parses data read from src and checks that it is an
// arenaprof profile.
func decodeArenaProfile(src string, data []byte, max int64) (*arenaProfile, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, topInputErr("%s is empty, not a profile; pass a profile written by the arenaprof exporter or its handler", src)
	}
	p, err := parseProfileData(src, data, max)
	var te *topError
	if errors.As(err, &te) {
		return nil, err
	}
	if err != nil {
		return nil, topInputErr("%s is not a pprof profile (%v); pass a profile written by the arenaprof exporter or its handler", src, err)
	}
	ap := &arenaProfile{prof: p}
	if _, err := report.KindOf(p); err != nil {
		return nil, topInputErr("%s: %s", src, strings.TrimPrefix(err.Error(), "report: "))
	}
	for _, s := range p.Sample {
		if len(s.Value) != len(p.SampleType) {
			return nil, topInputErr("%s is a malformed profile: a sample has %d values for %d sample types", src, len(s.Value), len(p.SampleType))
		}
	}
	return ap, nil
}
