package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	def := now.Add(-time.Hour)
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"", def, true},
		{"now", now, true},
		{"-1h", now.Add(-time.Hour), true},
		{"now-90m", now.Add(-90 * time.Minute), true},
		{"-7d", now.Add(-7 * 24 * time.Hour), true},
		{"-1.5d", now.Add(-36 * time.Hour), true},
		{"+10m", now.Add(10 * time.Minute), true},
		{"2026-01-02T15:04:05Z", time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC), true},
		{"2026-01-02T15:04:05.5+02:00", time.Date(2026, 1, 2, 13, 4, 5, 5e8, time.UTC), true},
		{"1h", time.Time{}, false},
		{"-", time.Time{}, false},
		{"--1h", time.Time{}, false},
		{"-1y", time.Time{}, false},
		{"-99999d", time.Time{}, false},
		{"-NaNd", time.Time{}, false},
		{"-1e300h", time.Time{}, false},
		{"yesterday", time.Time{}, false},
	}
	for _, tt := range tests {
		got, err := parseTime(tt.in, now, def)
		if (err == nil) != tt.ok || (tt.ok && !got.Equal(tt.want)) {
			t.Errorf("parseTime(%q) = %v, %v; want %v ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// FuzzParseTime: an accepted time is within ten years of now, or an
// RFC 3339 time that formats back.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"", "now", "-1h", "now-2d", "2026-01-02T15:04:05Z", "-1.5d", "+3m"} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseTime(s, now, now)
		if err != nil {
			return
		}
		if _, rerr := time.Parse(time.RFC3339Nano, strings.TrimSpace(s)); rerr == nil {
			return
		}
		if d := got.Sub(now); d > maxRelative || d < -maxRelative {
			t.Fatalf("parseTime(%q) = %v, %v from now", s, got, d)
		}
	})
}

func TestPyroscopeFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"top", "-from", "-1h", "a.pb.gz"}, "-from is for -pyroscope"},
		{[]string{"top", "-pyroscope", "http://127.0.0.1:1", "-from", "-1h", "-to", "-2h", "{a=\"b\"}"}, "is not before"},
		{[]string{"top", "-pyroscope", "http://127.0.0.1:1", "-from", "yesterday", "{a=\"b\"}"}, "bad -from"},
		{[]string{"top", "-pyroscope", "http://127.0.0.1:1", "{a=\"b\"}", "{c=\"d\"}"}, "one label selector"},
		{[]string{"top", "-pyroscope", "http://127.0.0.1:1", "a=b"}, "bad label selector"},
		{[]string{"top", "-pyroscope", "http://127.0.0.1:1", "-sample", "inuse", "{a=\"b\"}"}, "in-use bytes are levels"},
		{[]string{"top", "-pyroscope", "ftp://u:pw1234@h", "{a=\"b\"}"}, "bad -pyroscope"},
		{[]string{"top", "-pyroscope", "http://h", "-parallel", "0", "{a=\"b\"}"}, "bad -parallel"},
		{[]string{"top", "-pyroscope", "http://h", "-max-requests", "0", "{a=\"b\"}"}, "bad -max-requests"},
		{[]string{"diff", "-pyroscope", "http://h", "-max-requests", "2000000", "{a=\"b\"}", "{a=\"c\"}"}, "bad -max-requests"},
		{[]string{"top", "-max-requests", "5000", "a.pb.gz"}, "-max-requests is for -pyroscope"},
		{[]string{"top", "-pyroscope", "http://127.0.0.1:1", "{a=\"b\",memory=\"peak\"}"}, "a sum of peaks is no quantity"},
		{[]string{"diff", "-pyroscope", "http://u:pw1234@127.0.0.1:1", "{a=\"b\"}", "{a=\"c\"}"}, "connection refused"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := run(tt.args, &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tt.args, code, errb.String(), tt.want)
		}
		if strings.Contains(errb.String(), "pw1234") {
			t.Errorf("%v: the password is printed: %q", tt.args, errb.String())
		}
	}
	// A range older than Pyroscope's default lookback gets a warning.
	var warn bytes.Buffer
	warnings = &warn
	defer func() { warnings = os.Stderr }()
	run([]string{"top", "-pyroscope", "http://127.0.0.1:1", "-from", "-8d", "{a=\"b\"}"}, &bytes.Buffer{}, &bytes.Buffer{})
	if !strings.Contains(warn.String(), "max_query_lookback") {
		t.Errorf("no lookback warning for -from -8d: %q", warn.String())
	}
	// The token from the environment is never printed.
	os.Setenv("ARENAPROF_TEST_TOKEN", "tok-9876")
	defer os.Unsetenv("ARENAPROF_TEST_TOKEN")
	var out, errb bytes.Buffer
	run([]string{"top", "-pyroscope", "http://127.0.0.1:1/tok-9876", "-token-env", "ARENAPROF_TEST_TOKEN", "{a=\"b\"}"}, &out, &errb)
	if strings.Contains(errb.String(), "tok-9876") || errb.Len() == 0 {
		t.Errorf("stderr %q", errb.String())
	}
}

// TestPyroscopeMaxRequests: a week against a server whose
// max_query_length is a minute is refused before its queries are sent,
// naming the server's limit, the range and -max-requests, which raises
// the cap.
func TestPyroscopeMaxRequests(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"code":"invalid_argument","message":"the query time range exceeds the limit (max_query_length, actual: 1d, limit: 1m)"}`))
	}))
	defer srv.Close()
	tests := []struct {
		args []string
		want string
	}{
		{nil, "takes 10081 pieces of at most the server's max_query_length, 1m0s and 70575 queries or more, more than -max-requests 1000 allows: narrow -from and -to; raise -max-requests (e.g. -max-requests 200000)"},
		{[]string{"-max-requests", "20000"}, "more than -max-requests 20000 allows"},
	}
	for _, tt := range tests {
		calls.Store(0)
		args := append([]string{"top", "-pyroscope", srv.URL, "-from", "-7d"}, tt.args...)
		var out, errb bytes.Buffer
		code := run(append(args, `{service_name="shop"}`), &out, &errb)
		if code != 1 || !strings.Contains(errb.String(), tt.want) || !strings.Contains(errb.String(), "168h0m0s") {
			t.Errorf("%v: exit %d, stderr %q; want %q", args, code, errb.String(), tt.want)
		}
		if calls.Load() != 1 {
			t.Errorf("%v: %d requests sent, want the one that told the limit", args, calls.Load())
		}
	}
}
