// Package pyroread reads arena and Go heap memory from a Pyroscope server
// (v1.19) through its querier API and rebuilds an arenaprof profile from
// the server's sums over every pod and the whole time range, so that
// package report gives the fleet's estimates exact intervals and diffs.
//
// The querier is a Connect service: LabelValues and SelectSeries are
// called with the Connect JSON codec, SelectMergeProfile with the protobuf codec (its
// answer is a pprof profile, read with report.Parse's bounds). The
// server's Go API module is not used: the two requests are encoded here.
package pyroread

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/wire"
	"github.com/arenaprof/arenaprof/report"
)

// Client queries one Pyroscope server.
type Client struct {
	base          string // scheme://host[/path], without credentials or a trailing slash
	user, pass    string // basic auth, from the URL
	token, tenant string
	http          *http.Client
	limits        report.ParseOptions
	maxRange      time.Duration // the server's max_query_length, when below MaxRange
	parallel      int           // requests at once
	maxRequests   int           // queries of one Read
}

// Config configures a [Client].
type Config struct {
	// URL is the server's base URL; user information in it is sent as
	// basic authentication.
	URL string
	// Token is sent as "Authorization: Bearer ..."; it excludes basic auth.
	Token string
	// Tenant is sent as X-Scope-OrgID.
	Tenant string
	// Limits bound a read: MaxMemory the memory one Read holds at once
	// (see [Client.Read]), MaxBytes each profile answer.
	Limits report.ParseOptions
	// Timeout bounds each request; 0 means one minute.
	Timeout time.Duration
	// Parallel bounds the requests in flight at once; 0 means
	// DefaultParallel.
	Parallel int
	// MaxRequests bounds the queries of one Read; 0 means
	// DefaultMaxRequests.
	MaxRequests int
}

// DefaultMaxRequests is the number of queries one [Client.Read] sends at
// most by default: a day of a service is a few dozen, a week against a
// server whose max_query_length is an hour a few thousand.
const DefaultMaxRequests = 1000

// DefaultParallel is the number of requests a [Client] has in flight at
// once by default. One: a small server (one binary on 2 cores) answered
// four heavy queries at once with 500 "deadline_exceeded" where one at a
// time succeeded; a larger deployment's queriers can take more (-parallel).
const DefaultParallel = 1

// NewClient checks cfg. Its errors never quote the URL, which may hold a
// password.
func NewClient(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, errors.New("not a valid http(s) URL; use the form http://host:4040")
	}
	c := &Client{token: cfg.Token, tenant: cfg.Tenant, limits: cfg.Limits, parallel: cfg.Parallel, maxRequests: cfg.MaxRequests}
	if c.parallel <= 0 {
		c.parallel = DefaultParallel
	}
	if c.maxRequests <= 0 {
		c.maxRequests = DefaultMaxRequests
	}
	if u.User != nil {
		c.user = u.User.Username()
		c.pass, _ = u.User.Password()
		u.User = nil
	}
	if c.token != "" && (c.user != "" || c.pass != "") {
		return nil, errors.New("give either basic auth in the URL or a token, not both")
	}
	for _, s := range []string{c.token, c.tenant, c.user, c.pass} {
		if strings.ContainsAny(s, "\r\n\x00") {
			return nil, errors.New("the tenant or a credential holds a line break or NUL")
		}
	}
	if c.limits.MaxBytes <= 0 {
		c.limits.MaxBytes = pprofmt.DefaultMaxBytes
	}
	if c.limits.MaxMemory <= 0 {
		c.limits.MaxMemory = pprofmt.DefaultMaxMemory
	}
	u.RawQuery, u.Fragment = "", ""
	c.base = strings.TrimSuffix(u.String(), "/")
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxResponseHeaderBytes = 64 << 10
	c.http = &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c, nil
}

// Base is the server's URL without credentials.
func (c *Client) Base() string { return c.base }

// each runs fn(i) for every i in [0, n), at most c.parallel at once, and
// returns the first error; the others are cancelled then.
func (c *Client) each(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, c.parallel)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := fn(ctx, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		})
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	return first
}

// call posts body to the querier method and hands the answer's body,
// cut at max bytes, to read. An answer longer than max is a *sizeError.
func (c *Client) call(ctx context.Context, method, contentType string, body []byte, max int64, read func(io.Reader) error) error {
	// Queries are reads: an answer of 5xx or 429 (a querier stream the
	// server cancelled under load, an overloaded scheduler) is asked again,
	// after 0.25, 0.5 and 1 s. Only a status is retried: an answer once
	// read has been handed to read.
	wait := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := c.callOnce(ctx, method, contentType, body, max, read)
		var se *ServerError
		if err == nil || attempt == maxAttempts || !errors.As(err, &se) || !(se.Code >= 500 || se.Code == http.StatusTooManyRequests) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// maxAttempts bounds the requests of one query: the first and three more.
const maxAttempts = 4

// callOnce sends one request of call.
func (c *Client) callOnce(ctx context.Context, method, contentType string, body []byte, max int64, read func(io.Reader) error) error {
	endpoint := c.base + "/querier.v1.QuerierService/" + method
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %v", method, err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Connect-Protocol-Version", "1")
	req.Header.Set("User-Agent", "arenaprof")
	if c.tenant != "" {
		req.Header.Set("X-Scope-OrgID", c.tenant)
	}
	switch {
	case c.token != "":
		req.Header.Set("Authorization", "Bearer "+c.token)
	case c.user != "" || c.pass != "":
		req.SetBasicAuth(c.user, c.pass)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the message names the endpoint itself
		}
		return fmt.Errorf("%s %s: %v", method, c.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		var ce struct{ Code, Message string }
		msg := strings.TrimSpace(string(b))
		if json.Unmarshal(b, &ce) == nil && ce.Message != "" {
			msg = ce.Message
		}
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		return &ServerError{Method: method, Status: resp.Status, Code: resp.StatusCode, Message: msg}
	}
	lr := &capReader{r: resp.Body, left: max}
	err = read(lr)
	switch {
	case lr.over:
		// Count the rest, without keeping it, for a bound that would do.
		n, _ := io.Copy(io.Discard, io.LimitReader(resp.Body, 64*max))
		return &sizeError{method: method, max: max, size: max + 1 + n, exact: n < 64*max}
	case lr.err != nil && err != nil:
		// The connection failed, not the answer's format.
		return fmt.Errorf("%s %s: reading the answer: %v", method, c.base, lr.err)
	}
	return err
}

// capReader reads at most left bytes of r, then fails, noting it; it
// keeps the error of r other than io.EOF.
type capReader struct {
	r    io.Reader
	left int64
	over bool
	err  error
}

func (r *capReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		// One byte more tells a long answer from one of exactly max.
		var b [1]byte
		if n, _ := io.ReadFull(r.r, b[:]); n > 0 {
			r.over = true
			return 0, errTooLong
		}
		return 0, io.EOF
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.r.Read(p)
	r.left -= int64(n)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// errTooLong is what capReader answers past its bound.
var errTooLong = errors.New("answer past its bound")

// sizeError is an answer longer than the bound it was read within.
type sizeError struct {
	method string
	max    int64 // the bound
	size   int64 // the answer's size, or a lower bound of it
	exact  bool  // size is the answer's size
}

func (e *sizeError) Error() string {
	return fmt.Sprintf("%s: answer larger than %d bytes", e.method, e.max)
}

// ServerError is a query the server answered with an error.
type ServerError struct {
	Method, Status, Message string
	Code                    int // the HTTP status code
}

// Error names the method, the status and the server's message.
func (e *ServerError) Error() string {
	return fmt.Sprintf("%s: server answered %s: %s", e.Method, e.Status, e.Message)
}

// series is one series of a SelectSeries answer: its labels and the sum of
// its points.
type series struct {
	labels map[string]string
	sum    float64
}

// selectSeries hands fn, one at a time as they are decoded, the sums per
// combination of the groupBy labels of one profile type over [start,
// end]: SelectSeries with sum aggregation.
//
// The server (pkg/querier, SelectSeries) reads profiles from start - step
// to end and puts those up to start in a first point stamped start: so the
// query starts 1 ms before start, with one step over the range, and only
// the points stamped after it, holding (start - 1 ms, end], are kept.
// Reading the step before start costs the server twice the range's data.
func (c *Client) selectSeries(ctx context.Context, typeID string, sel Selector, start, end time.Time, groupBy []string, fn func(series) error) error {
	req, from, err := seriesRequest(typeID, sel, start, end, groupBy, 0)
	if err != nil {
		return err
	}
	err = c.call(ctx, "SelectSeries", "application/json", req, c.answerShare(), func(r io.Reader) error {
		return parseSeries(r, from, fn)
	})
	return c.answerErr(err)
}

// seriesRequest is the body of a SelectSeries with sum aggregation over
// (start - 1 ms, end] (see selectSeries), at the given step, or at one
// step over the whole range when step is 0; from is its start, in
// milliseconds: the answer's points stamped after it are the range's.
func seriesRequest(typeID string, sel Selector, start, end time.Time, groupBy []string, step time.Duration) (req []byte, from int64, err error) {
	from, to := start.UnixMilli()-1, end.UnixMilli()
	if step == 0 {
		step = time.Duration(to-from) * time.Millisecond
	}
	req, err = json.Marshal(map[string]any{
		"profileTypeID": typeID,
		"labelSelector": sel.String(),
		"start":         from,
		"end":           to,
		"groupBy":       groupBy,
		"step":          step.Seconds(),
		"aggregation":   "TIME_SERIES_AGGREGATION_TYPE_SUM",
	})
	return req, from, err
}

// typesAndNames lists the profile type IDs (the values of the label
// __profile_type__) and the label names of the series sel matches over
// the pieces, each sorted once: two calls per piece.
func (c *Client) typesAndNames(ctx context.Context, sel Selector, chunks [][2]time.Time) (ids, names []string, err error) {
	for _, ch := range chunks {
		vs, err := c.labelValues(ctx, profileTypeLabel, sel, ch[0], ch[1])
		if err != nil {
			return nil, nil, err
		}
		ids = append(ids, vs...)
		ns, err := c.labelNames(ctx, sel, ch[0], ch[1])
		if err != nil {
			return nil, nil, err
		}
		names = append(names, ns...)
	}
	slices.Sort(ids)
	return slices.Compact(ids), names, nil
}

// answerErr names the flag of an answer past its bound.
func (c *Client) answerErr(err error) error {
	var se *sizeError
	if !errors.As(err, &se) {
		return err
	}
	size := showBytes(se.size)
	if !se.exact {
		size = "more than " + size
	}
	if se.max < c.answerShare() { // the bound of profile answers was -max-bytes
		return &LimitError{Flag: FlagMaxBytes, Limit: c.limits.MaxBytes, Suggest: powerAbove(float64(c.limits.MaxBytes), float64(se.size)),
			What: fmt.Sprintf("%s %s: the answer takes %s, above %s %s", se.method, c.base, size, FlagMaxBytes, showBytes(c.limits.MaxBytes))}
	}
	return &LimitError{Flag: FlagMaxMemory, Limit: c.limits.MaxMemory, Suggest: c.memoryForAnswer(se.size),
		What: fmt.Sprintf("%s %s: the answer takes %s, above the %s one answer may take: a sixteenth of %s %s per request in flight (-parallel %d)",
			se.method, c.base, size, showBytes(se.max), FlagMaxMemory, showBytes(c.limits.MaxMemory), c.parallel)}
}

// wireSeries is one series of a SelectSeries answer (Connect JSON).
type wireSeries struct {
	Labels []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"labels"`
	Points []struct {
		Value     float64 `json:"value"`
		Timestamp int64   `json:"timestamp,string"`
	} `json:"points"`
}

// parseSeries reads a SelectSeries answer (Connect JSON) one series at a
// time, handing fn each series' labels and the sum of its points stamped
// after the given millisecond. What fn is handed is not kept.
func parseSeries(r io.Reader, after int64, fn func(series) error) error {
	dec := json.NewDecoder(r)
	malformed := func(err error) error {
		if errors.Is(err, errTooLong) {
			return err
		}
		return fmt.Errorf("SelectSeries: malformed answer: %v", err)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return malformed(fmt.Errorf("%v, %v where an object was expected", tok, err))
	}
	seen := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return malformed(err)
		}
		if tok != "series" || seen {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return malformed(err)
			}
			continue
		}
		seen = true
		if tok, err := dec.Token(); err != nil || (tok != json.Delim('[') && tok != nil) {
			return malformed(fmt.Errorf("%v, %v where a list of series was expected", tok, err))
		} else if tok == nil {
			continue
		}
		for dec.More() {
			var ws wireSeries
			if err := dec.Decode(&ws); err != nil {
				return malformed(err)
			}
			s, err := ws.sum(after)
			if err != nil {
				return err
			}
			if err := fn(s); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return malformed(err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return malformed(err)
	}
	if tok, err := dec.Token(); err != io.EOF {
		return malformed(fmt.Errorf("%v, %v after the answer", tok, err))
	}
	return nil
}

// sum returns the series' labels and the sum of its points stamped after
// the given millisecond.
func (ws *wireSeries) sum(after int64) (series, error) {
	m := make(map[string]string, len(ws.Labels))
	for _, l := range ws.Labels {
		m[l.Name] = l.Value
	}
	var sum float64
	for _, p := range ws.Points {
		if !(p.Value >= 0 && p.Value <= maxExact) {
			return series{}, fmt.Errorf("SelectSeries: a point's value %g is negative or too large to be exact", p.Value)
		}
		if p.Timestamp > after {
			sum += p.Value
		}
	}
	if sum > maxExact {
		return series{}, fmt.Errorf("SelectSeries: a series sums to %g, too large to be exact", sum)
	}
	return series{m, sum}, nil
}

// labelValues returns the values of a label among the series sel matches
// over [start, end]: LabelValues.
func (c *Client) labelValues(ctx context.Context, name string, sel Selector, start, end time.Time) ([]string, error) {
	return c.names(ctx, "LabelValues", map[string]any{"name": name}, sel, start, end)
}

// labelNames returns the label names of the series sel matches over
// [start, end]: LabelNames.
func (c *Client) labelNames(ctx context.Context, sel Selector, start, end time.Time) ([]string, error) {
	return c.names(ctx, "LabelNames", map[string]any{}, sel, start, end)
}

// names calls method, LabelValues or LabelNames, with req's fields and
// the matchers and range, and returns the names it answers.
func (c *Client) names(ctx context.Context, method string, req map[string]any, sel Selector, start, end time.Time) ([]string, error) {
	req["matchers"] = []string{sel.String()}
	req["start"], req["end"] = start.UnixMilli(), end.UnixMilli()
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var resp struct {
		Names []string `json:"names"`
	}
	err = c.call(ctx, method, "application/json", body, c.answerShare(), func(r io.Reader) error {
		if err := json.NewDecoder(r).Decode(&resp); err != nil && !errors.Is(err, errTooLong) {
			return fmt.Errorf("%s: malformed answer: %v", method, err)
		} else if err != nil {
			return err
		}
		return nil
	})
	return resp.Names, c.answerErr(err)
}

// maxExact is the largest integer a float64 holds exactly: sums of counts
// and bytes beyond it would not be exact.
const maxExact = 1 << 53

// selectMergeProfile returns the stacks of one profile type over
// [start, end], merged over every series sel matches: SelectMergeProfile,
// whose answer (google.v1.Profile) is a pprof profile. The answer takes
// at most min(MaxBytes, answerShare) on the wire and decodeShare decoded.
func (c *Client) selectMergeProfile(ctx context.Context, typeID string, sel Selector, start, end time.Time) (*profile.Profile, error) {
	var req []byte
	req = wire.AppendString(req, 1, typeID)
	req = wire.AppendString(req, 2, sel.String())
	req = wire.AppendUint(req, 3, uint64(start.UnixMilli()))
	req = wire.AppendUint(req, 4, uint64(end.UnixMilli()))
	var p *profile.Profile
	lim := report.ParseOptions{MaxBytes: min(c.limits.MaxBytes, c.answerShare()), MaxMemory: c.decodeShare()}
	err := c.call(ctx, "SelectMergeProfile", "application/proto", req, lim.MaxBytes, func(r io.Reader) error {
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		if p, err = report.Parse(bytes.NewReader(data), lim); err != nil {
			return c.decodeErr(err, lim)
		}
		return nil
	})
	return p, c.answerErr(err)
}

// decodeErr names the flag of a profile answer report.Parse refused at
// lim.
func (c *Client) decodeErr(err error, lim report.ParseOptions) error {
	var mle *pprofmt.MemoryLimitError
	switch {
	case errors.As(err, &mle) && !mle.NotProfile:
		return &LimitError{Flag: FlagMaxMemory, Limit: c.limits.MaxMemory,
			Suggest: powerAbove(float64(c.limits.MaxMemory), float64(mle.Need)*float64(c.limits.MaxMemory)/float64(lim.MaxMemory)),
			What: fmt.Sprintf("SelectMergeProfile %s: decoding the answer takes more than %s, the part of %s %s one profile answer may take at -parallel %d",
				c.base, showBytes(lim.MaxMemory), FlagMaxMemory, showBytes(c.limits.MaxMemory), c.parallel)}
	case errors.Is(err, report.ErrTooLarge) && !errors.Is(err, pprofmt.ErrMemoryLimit):
		flag, limit := FlagMaxBytes, c.limits.MaxBytes
		if lim.MaxBytes < c.limits.MaxBytes {
			flag, limit = FlagMaxMemory, c.limits.MaxMemory
		}
		return &LimitError{Flag: flag, Limit: limit, Suggest: powerAbove(float64(limit), float64(limit)),
			What: fmt.Sprintf("SelectMergeProfile %s: the answer decompresses to more than %s, the bound %s %s sets", c.base, showBytes(lim.MaxBytes), flag, showBytes(limit))}
	}
	return fmt.Errorf("SelectMergeProfile: %w", err)
}
