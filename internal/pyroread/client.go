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
	"github.com/arenaprof/arenaprof/internal/pprofmt"

	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"

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
	// Limits bound each answer: a profile is read with report.Parse
	// within them; a JSON answer may take at most a quarter of MaxMemory.
	Limits report.ParseOptions
	// Timeout bounds each request; 0 means one minute.
	Timeout time.Duration
	// Parallel bounds the requests in flight at once; 0 means
	// DefaultParallel.
	Parallel int
}

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
	c := &Client{token: cfg.Token, tenant: cfg.Tenant, limits: cfg.Limits, parallel: cfg.Parallel}
	if c.parallel <= 0 {
		c.parallel = DefaultParallel
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

// call posts body to the querier method and returns the answer's body,
// read within max bytes.
func (c *Client) call(ctx context.Context, method, contentType string, body []byte, max int64) ([]byte, error) {
	// Queries are reads: an answer of 5xx or 429 (a querier stream the
	// server cancelled under load, an overloaded scheduler) is asked again,
	// after 0.25, 0.5 and 1 s.
	wait := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		data, err := c.callOnce(ctx, method, contentType, body, max)
		var se *ServerError
		if err == nil || attempt == maxAttempts || !errors.As(err, &se) || !(se.Code >= 500 || se.Code == http.StatusTooManyRequests) {
			return data, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// maxAttempts bounds the requests of one query: the first and three more.
const maxAttempts = 4

// callOnce sends one request of call.
func (c *Client) callOnce(ctx context.Context, method, contentType string, body []byte, max int64) ([]byte, error) {
	endpoint := c.base + "/querier.v1.QuerierService/" + method
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", method, err)
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
		return nil, fmt.Errorf("%s %s: %v", method, c.base, err)
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
		return nil, &ServerError{Method: method, Status: resp.Status, Code: resp.StatusCode, Message: msg}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the answer: %v", method, c.base, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s %s: answer larger than %d bytes: %w", method, c.base, max, report.ErrTooLarge)
	}
	return data, nil
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

// selectSeries sums, per combination of the groupBy labels, the values of
// one profile type over [start, end]: SelectSeries with sum aggregation.
//
// The server (pkg/querier, SelectSeries) reads profiles from start - step
// to end and puts those up to start in a first point stamped start: so the
// query starts 1 ms before start, with one step over the range, and only
// the points stamped after it, holding (start - 1 ms, end], are kept.
// Reading the step before start costs the server twice the range's data.
func (c *Client) selectSeries(ctx context.Context, typeID string, sel Selector, start, end time.Time, groupBy []string) ([]series, error) {
	from, to := start.UnixMilli()-1, end.UnixMilli()
	req, err := json.Marshal(map[string]any{
		"profileTypeID": typeID,
		"labelSelector": sel.String(),
		"start":         from,
		"end":           to,
		"groupBy":       groupBy,
		"step":          float64(to-from) / 1000,
		"aggregation":   "TIME_SERIES_AGGREGATION_TYPE_SUM",
	})
	if err != nil {
		return nil, err
	}
	data, err := c.call(ctx, "SelectSeries", "application/json", req, max(c.limits.MaxMemory/4, 1<<20))
	if err != nil {
		return nil, err
	}
	return parseSeries(data, from)
}

// parseSeries reads a SelectSeries answer (Connect JSON), adding up each
// series' points stamped after the given millisecond.
func parseSeries(data []byte, after int64) ([]series, error) {
	var resp struct {
		Series []struct {
			Labels []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"labels"`
			Points []struct {
				Value     float64 `json:"value"`
				Timestamp int64   `json:"timestamp,string"`
			} `json:"points"`
		} `json:"series"`
	}
	if err := json.Unmarshal(data, &resp); err != nil {
		return nil, fmt.Errorf("SelectSeries: malformed answer: %v", err)
	}
	out := make([]series, 0, len(resp.Series))
	for _, s := range resp.Series {
		m := make(map[string]string, len(s.Labels))
		for _, l := range s.Labels {
			m[l.Name] = l.Value
		}
		var sum float64
		for _, p := range s.Points {
			if !(p.Value >= 0 && p.Value <= maxExact) {
				return nil, fmt.Errorf("SelectSeries: a point's value %g is negative or too large to be exact", p.Value)
			}
			if p.Timestamp > after {
				sum += p.Value
			}
		}
		if sum > maxExact {
			return nil, fmt.Errorf("SelectSeries: a series sums to %g, too large to be exact", sum)
		}
		out = append(out, series{m, sum})
	}
	return out, nil
}

// labelValues returns the values of a label among the series sel matches
// over [start, end]: LabelValues.
func (c *Client) labelValues(ctx context.Context, name string, sel Selector, start, end time.Time) ([]string, error) {
	req, err := json.Marshal(map[string]any{
		"name":     name,
		"matchers": []string{sel.String()},
		"start":    start.UnixMilli(),
		"end":      end.UnixMilli(),
	})
	if err != nil {
		return nil, err
	}
	data, err := c.call(ctx, "LabelValues", "application/json", req, max(c.limits.MaxMemory/4, 1<<20))
	if err != nil {
		return nil, err
	}
	var resp struct {
		Names []string `json:"names"`
	}
	if err := json.Unmarshal(data, &resp); err != nil {
		return nil, fmt.Errorf("LabelValues: malformed answer: %v", err)
	}
	return resp.Names, nil
}

// maxExact is the largest integer a float64 holds exactly: sums of counts
// and bytes beyond it would not be exact.
const maxExact = 1 << 53

// selectMergeProfile returns the stacks of one profile type over
// [start, end], merged over every series sel matches: SelectMergeProfile,
// whose answer (google.v1.Profile) is a pprof profile.
func (c *Client) selectMergeProfile(ctx context.Context, typeID string, sel Selector, start, end time.Time) (*profile.Profile, error) {
	var req []byte
	req = appendString(req, 1, typeID)
	req = appendString(req, 2, sel.String())
	req = appendVarint(req, 3, uint64(start.UnixMilli()))
	req = appendVarint(req, 4, uint64(end.UnixMilli()))
	data, err := c.call(ctx, "SelectMergeProfile", "application/proto", req, c.limits.MaxBytes)
	if err != nil {
		return nil, err
	}
	p, err := report.Parse(bytes.NewReader(data), c.limits)
	if err != nil {
		return nil, fmt.Errorf("SelectMergeProfile: %w", err)
	}
	return p, nil
}

// appendVarint appends a protobuf varint field.
func appendVarint(b []byte, field int, v uint64) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3)
	return binary.AppendUvarint(b, v)
}

// appendString appends a protobuf length-delimited field.
func appendString(b []byte, field int, s string) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}
