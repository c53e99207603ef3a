package pyroread

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/report"
)

func TestParseSeries(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		err  string
	}{
		{`{"series":[{"labels":[{"name":"type","value":"main.user"}],"points":[{"value":3,"timestamp":"10"},{"value":4.0,"timestamp":"20"}]}]}`, 7, ""},
		{`{"series":[{"labels":[{"name":"type","value":"main.user"}],"points":[{"value":3,"timestamp":"5"},{"value":7.0,"timestamp":"20"}]}]}`, 7, ""},
		{`{}`, -1, ""},
		{`{"series":[{"points":[{"value":-1}]}]}`, 0, "negative"},
		{`{"series":[{"points":[{"value":1e300}]}]}`, 0, "too large"},
		{`{"series":[{"points":[{"value":9007199254740992,"timestamp":"9"},{"value":9007199254740992,"timestamp":"10"}]}]}`, 0, "too large"},
		{`{"series":[`, 0, "malformed"},
		{`{"series":[{"points":[{"value":"NaN"}]}]}`, 0, "malformed"},
	}
	for _, tt := range tests {
		ss, err := collectSeries(tt.in, 5)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseSeries(%s) = %v, %v; want an error with %q", tt.in, ss, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseSeries(%s): %v", tt.in, err)
			continue
		}
		if tt.want < 0 {
			if len(ss) != 0 {
				t.Errorf("parseSeries(%s) = %v, want none", tt.in, ss)
			}
			continue
		}
		if len(ss) != 1 || ss[0].sum != tt.want || ss[0].labels["type"] != "main.user" {
			t.Errorf("parseSeries(%s) = %+v", tt.in, ss)
		}
	}
}

// collectSeries returns the series parseSeries hands on.
func collectSeries(in string, after int64) ([]series, error) {
	var ss []series
	err := parseSeries(strings.NewReader(in), after, func(s series) error {
		ss = append(ss, s)
		return nil
	})
	return ss, err
}

// FuzzParseSeries: an answer is refused or gives sums that are exact
// non-negative integers' worth.
func FuzzParseSeries(f *testing.F) {
	f.Add([]byte(`{"series":[{"labels":[{"name":"a","value":"b"}],"points":[{"value":3}]}]}`))
	f.Add([]byte(`{"series":[{"points":[{"value":1e16,"timestamp":"9"},{"value":1e16}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ss, err := collectSeries(string(b), -1)
		if err != nil {
			return
		}
		for _, s := range ss {
			if !(s.sum >= 0 && s.sum <= maxExact) || math.IsNaN(s.sum) {
				t.Fatalf("sum %g", s.sum)
			}
		}
	})
}

// TestClientBounds: answers past the bounds are refused, credentials go
// in headers, errors quote neither the password nor the token.
func TestClientBounds(t *testing.T) {
	var gotAuth, gotTenant string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotTenant = r.Header.Get("Authorization"), r.Header.Get("X-Scope-OrgID")
		switch {
		case strings.HasSuffix(r.URL.Path, "/SelectSeries"):
			w.Write([]byte(`{"series":[{"labels":[],"points":[{"value":1}]}],"pad":"` + strings.Repeat("x", 2<<20) + `"}`))
		case strings.HasSuffix(r.URL.Path, "/SelectMergeProfile"):
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"code":"invalid_argument","message":"the query time range exceeds the limit (max_query_length, actual: 48h, limit: 24h)"}`))
		}
	}))
	defer srv.Close()
	lim := report.ParseOptions{MaxBytes: 1 << 20, MaxMemory: 4 << 20}
	c, err := NewClient(Config{URL: strings.Replace(srv.URL, "http://", "http://bob:s3cr3t@", 1), Tenant: "team", Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	sel, _ := ParseSelector(`{service_name="shop"}`)
	ctx := context.Background()
	end := time.Now()
	err = c.selectSeries(ctx, typeID("memory", allocTypes[0].suffix), sel, end.Add(-time.Hour), end, nil, func(series) error { return nil })
	var le *LimitError
	if !errors.As(err, &le) || le.Flag != FlagMaxMemory || le.Suggest < 32<<20 || !strings.Contains(err.Error(), "-max-memory 64MiB") {
		t.Errorf("a 2 MiB answer within a 256 KiB bound: %v", err)
	}
	if !strings.HasPrefix(gotAuth, "Basic ") || gotTenant != "team" {
		t.Errorf("Authorization %q, X-Scope-OrgID %q", gotAuth, gotTenant)
	}
	_, err = c.selectMergeProfile(ctx, typeID("memory", allocTypes[0].suffix), sel, end.Add(-48*time.Hour), end)
	if err == nil || !strings.Contains(err.Error(), "max_query_length") || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("server error: %v", err)
	}
	if strings.Contains(c.Base(), "s3cr3t") || strings.Contains(c.Base(), "bob") {
		t.Errorf("Base %q holds credentials", c.Base())
	}
	if _, err := NewClient(Config{URL: "http://a:b@h", Token: "t"}); err == nil {
		t.Error("basic auth and a token: no error")
	}
	if _, err := NewClient(Config{URL: "ftp://x:pw@h"}); err == nil || strings.Contains(err.Error(), "pw") {
		t.Errorf("ftp URL: %v", err)
	}
}

func TestSplitRange(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, d := range []time.Duration{time.Minute, MaxRange, MaxRange + time.Millisecond, 50 * time.Hour} {
		ch := splitRange(t0, t0.Add(d), MaxRange)
		if ch[0][0] != t0 || ch[len(ch)-1][1] != t0.Add(d) {
			t.Errorf("%v: %v", d, ch)
		}
		for i, c := range ch {
			if c[1].Sub(c[0]) > MaxRange || !c[1].After(c[0]) {
				t.Errorf("%v: piece %v", d, c)
			}
			if i > 0 && c[0] != ch[i-1][1].Add(time.Millisecond) {
				t.Errorf("%v: gap or overlap between %v and %v", d, ch[i-1], c)
			}
		}
	}
}

func TestQueryLengthLimit(t *testing.T) {
	tests := []struct {
		msg  string
		want time.Duration
	}{
		{"the query time range exceeds the limit (max_query_length, actual: 48h0m0s, limit: 12h)", 12 * time.Hour},
		{"the query time range exceeds the limit (max_query_length, actual: 3d, limit: 1d12h)", 36 * time.Hour},
		{"the query time range exceeds the limit (max_query_length, actual: 3d, limit: 1w)", 7 * 24 * time.Hour},
		{"the query time range exceeds the limit (max_query_length, actual: 3d, limit: 30s)", 0},
		{"the query time range exceeds the limit (max_query_length, actual: 3d, limit: x)", 0},
		{"something else, limit: 1h", 0},
	}
	for _, tt := range tests {
		d, ok := queryLengthLimit(tt.msg)
		if d != tt.want || ok != (tt.want != 0) {
			t.Errorf("queryLengthLimit(%q) = %v, %v; want %v", tt.msg, d, ok, tt.want)
		}
	}
}

// FuzzQueryLengthLimit: a limit read from a server's message is at least a
// minute and never negative.
func FuzzQueryLengthLimit(f *testing.F) {
	f.Add("(max_query_length, actual: 48h, limit: 12h)")
	f.Add("max_query_length limit: 1y2w3d4h5m6s)")
	f.Fuzz(func(t *testing.T, msg string) {
		if d, ok := queryLengthLimit(msg); ok && d < time.Minute {
			t.Fatalf("%q: %v", msg, d)
		}
	})
}

// TestClientRetries: a query answered 5xx or 429 is asked again, up to
// four times in all; a 4xx other than 429 is not.
func TestClientRetries(t *testing.T) {
	tests := []struct {
		name      string
		failures  int // answers of status before the good one
		status    int
		wantErr   bool
		wantCalls int
	}{
		{"500 twice, then good", 2, http.StatusInternalServerError, false, 3},
		{"429 once, then good", 1, http.StatusTooManyRequests, false, 2},
		{"503 always", 10, http.StatusServiceUnavailable, true, maxAttempts},
		{"400 not retried", 10, http.StatusBadRequest, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls++
				if calls <= tt.failures {
					w.WriteHeader(tt.status)
					w.Write([]byte(`{"code":"canceled","message":"canceled: stream error: stream ID 39; CANCEL"}`))
					return
				}
				w.Write([]byte(`{"series":[{"labels":[],"points":[{"value":7,"timestamp":"9999999999999"}]}]}`))
			}))
			defer srv.Close()
			c, err := NewClient(Config{URL: srv.URL, Limits: report.ParseOptions{MaxBytes: 1 << 20, MaxMemory: 4 << 20}})
			if err != nil {
				t.Fatal(err)
			}
			sel, _ := ParseSelector(`{service_name="shop"}`)
			end := time.Now()
			var got []series
			err = c.selectSeries(context.Background(), typeID("memory", allocTypes[0].suffix), sel, end.Add(-time.Hour), end, nil, func(s series) error {
				got = append(got, s)
				return nil
			})
			if (err != nil) != tt.wantErr || calls != tt.wantCalls {
				t.Fatalf("err %v after %d calls; want error %v after %d", err, calls, tt.wantErr, tt.wantCalls)
			}
			if err == nil && (len(got) != 1 || got[0].sum != 7) {
				t.Errorf("series %+v, want one of sum 7", got)
			}
		})
	}
}

// TestClientCutAnswer: an answer cut short by the connection is said to
// be cut, not malformed.
func TestClientCutAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.Write([]byte(`{"series":[{"labels":[`))
	}))
	defer srv.Close()
	c, err := NewClient(Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	sel, _ := ParseSelector(`{service_name="shop"}`)
	end := time.Now()
	err = c.selectSeries(context.Background(), typeID("memory", allocTypes[0].suffix), sel, end.Add(-time.Hour), end, nil, func(series) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "reading the answer: unexpected EOF") {
		t.Errorf("an answer cut short: %v", err)
	}
}
