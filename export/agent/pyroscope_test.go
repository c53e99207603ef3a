package agent

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofenc"
)

// ingested is one request as a Pyroscope server understands it.
type ingested struct {
	at          time.Time
	app         string
	labels      map[string]string
	from, until int64
	spyName     string
	format      string
	profile     *profile.Profile
	sampleTypes map[string]sampleTypeConfig // nil when the part is absent
	header      http.Header
}

// fakePyroscope parses each request the way Pyroscope's /ingest does and
// answers with what respond returns (nil: 200 OK).
type fakePyroscope struct {
	t       *testing.T
	mu      sync.Mutex
	reqs    []ingested
	bad     []string // parse errors, reported as 422
	respond func(n int, w http.ResponseWriter, r *http.Request) bool
	calls   int
}

func newFakePyroscope(t *testing.T, respond func(n int, w http.ResponseWriter, r *http.Request) bool) (*fakePyroscope, *httptest.Server) {
	f := &fakePyroscope{t: t, respond: respond}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakePyroscope) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls++
	n := f.calls
	f.mu.Unlock()
	if f.respond != nil && f.respond(n, w, r) {
		return
	}
	in, err := parseIngest(r)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.bad = append(f.bad, err.Error())
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return
	}
	f.reqs = append(f.reqs, in)
}

func (f *fakePyroscope) requests() ([]ingested, []string, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ingested(nil), f.reqs...), append([]string(nil), f.bad...), f.calls
}

func parseIngest(r *http.Request) (ingested, error) {
	in := ingested{at: time.Now(), header: r.Header.Clone()}
	if r.Method != http.MethodPost {
		return in, fmt.Errorf("method %s", r.Method)
	}
	if !strings.HasSuffix(r.URL.Path, "/ingest") {
		return in, fmt.Errorf("path %s", r.URL.Path)
	}
	q := r.URL.Query()
	var err error
	if in.app, in.labels, err = parseName(q.Get("name")); err != nil {
		return in, err
	}
	if in.from, err = strconv.ParseInt(q.Get("from"), 10, 64); err != nil {
		return in, fmt.Errorf("from: %v", err)
	}
	if in.until, err = strconv.ParseInt(q.Get("until"), 10, 64); err != nil {
		return in, fmt.Errorf("until: %v", err)
	}
	in.spyName, in.format = q.Get("spyName"), q.Get("format")
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var data []byte
	// The real server reads the body as raw pprof whenever format=pprof,
	// before it looks at the content type; a multipart body with
	// format=pprof is rejected there with 422.
	if in.format != "pprof" && mt == "multipart/form-data" {
		if params["boundary"] == "" {
			return in, errors.New("no boundary")
		}
		if err := r.ParseMultipartForm(32 << 20); err != nil {
			return in, fmt.Errorf("multipart: %v", err)
		}
		fh := r.MultipartForm.File["profile"]
		if len(fh) != 1 || fh[0].Filename != "profile.pprof" {
			return in, fmt.Errorf("profile part: %v", fh)
		}
		if data, err = readPart(fh[0].Open()); err != nil {
			return in, err
		}
		if st := r.MultipartForm.File["sample_type_config"]; len(st) > 0 {
			if st[0].Filename != "sample_type_config.json" {
				return in, fmt.Errorf("sample_type_config file %q", st[0].Filename)
			}
			js, err := readPart(st[0].Open())
			if err != nil {
				return in, err
			}
			if err := json.Unmarshal(js, &in.sampleTypes); err != nil {
				return in, fmt.Errorf("sample_type_config: %v", err)
			}
		}
	} else {
		if in.format != "pprof" {
			return in, fmt.Errorf("raw body with format %q", in.format)
		}
		if mt == "multipart/form-data" {
			return in, errors.New("parsing IngestInput-pprof failed: multipart body with format=pprof")
		}
		if data, err = io.ReadAll(r.Body); err != nil {
			return in, err
		}
	}
	if in.profile, err = profile.ParseData(data); err != nil {
		return in, fmt.Errorf("pprof: %v", err)
	}
	return in, nil
}

func readPart(f io.ReadCloser, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// parseName splits "app{k=v,...}" as Pyroscope's segment keys do.
func parseName(name string) (string, map[string]string, error) {
	app, rest, has := strings.Cut(name, "{")
	if app == "" {
		return "", nil, errors.New("empty app name")
	}
	for _, r := range app {
		if !appNameRune(r) {
			return "", nil, fmt.Errorf("app name %q has %q", app, r)
		}
	}
	labels := map[string]string{}
	if !has {
		return app, labels, nil
	}
	body, ok := strings.CutSuffix(rest, "}")
	if !ok || strings.ContainsAny(body, "{}") {
		return "", nil, fmt.Errorf("bad label set %q", rest)
	}
	for _, kv := range strings.Split(body, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || v == "" || strings.Contains(v, "=") {
			return "", nil, fmt.Errorf("bad label %q", kv)
		}
		for _, r := range k {
			if !tagKeyRune(r) {
				return "", nil, fmt.Errorf("label key %q has %q", k, r)
			}
		}
		if _, dup := labels[k]; dup {
			return "", nil, fmt.Errorf("duplicate label %q", k)
		}
		labels[k] = v
	}
	return app, labels, nil
}

func TestIngestName(t *testing.T) {
	tests := []struct {
		app    string
		labels map[string]string
		want   string
	}{
		{"shop", nil, "shop"},
		{"shop", map[string]string{"memory": "arena"}, "shop{memory=arena}"},
		{"my shop/v2", map[string]string{"env": "prod"}, "my_shop_v2{env=prod}"},
		{"shop.v2", map[string]string{"b": "2", "a": "1"}, "shop.v2{a=1,b=2}"},
		{"shop", map[string]string{"path": "a b/ü,{x}=y\x00"}, "shop{path=a_b/ü__x__y_}"},
		{"ü", map[string]string{"k.x": "1", "k_x": "2"}, "_{k_x=1}"},
		{"", map[string]string{"k": ""}, "_{k=_}"},
	}
	for _, tt := range tests {
		got := ingestName(tt.app, tt.labels)
		if got != tt.want {
			t.Errorf("ingestName(%q, %v) = %q, want %q", tt.app, tt.labels, got, tt.want)
		}
		if _, _, err := parseName(got); err != nil {
			t.Errorf("%q does not parse: %v", got, err)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"-5", 0},
		{"3", 3 * time.Second},
		{" 7 ", 7 * time.Second},
		{"99999999999999999999", 0}, // overflows int64: malformed
		{"86400000", maxRetryAfter},
		{"1.5", 0},
		{"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{now.Add(1000 * time.Hour).Format(http.TimeFormat), maxRetryAfter},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestNewPyroscopeErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  PyroscopeConfig
		sub  string
	}{
		{"empty", PyroscopeConfig{}, "URL is empty"},
		{"scheme", PyroscopeConfig{URL: "ftp://h"}, "scheme"},
		{"no host", PyroscopeConfig{URL: "http:///x"}, "no host"},
		{"port only", PyroscopeConfig{URL: "http://:4040"}, "no host"},
		{"port above 65535", PyroscopeConfig{URL: "http://h:65536"}, "port 65536 is outside 1..65535"},
		{"port 0", PyroscopeConfig{URL: "https://u:s3cret@h:0/"}, "port 0 is outside 1..65535"},
		{"header value with DEL", PyroscopeConfig{URL: "http://h", Headers: map[string]string{"X": "a\x7f"}}, `invalid header value of "X": a control character, 0x7f, at byte 1`},
		{"header value with NUL", PyroscopeConfig{URL: "http://h", Headers: map[string]string{"X": "\x00"}}, "0x00, at byte 0"},
		{"bad url keeps secret", PyroscopeConfig{URL: "http://u:s3cret@h:bad port/"}, "not a valid URL"},
		{"both auths", PyroscopeConfig{URL: "http://h", BasicAuthUser: "u", BearerToken: "t"}, "not both"},
		{"url and basic", PyroscopeConfig{URL: "http://u:p@h", BasicAuthUser: "u"}, "both in the URL"},
		{"bad header", PyroscopeConfig{URL: "http://h", Headers: map[string]string{"a b": "x"}}, "invalid header"},
		{"header injection", PyroscopeConfig{URL: "http://h", Headers: map[string]string{"X": "a\r\nB: c"}}, "invalid header"},
		{"tenant newline", PyroscopeConfig{URL: "http://h", TenantID: "a\nb"}, "line break"},
	}
	for _, tt := range tests {
		_, err := newPyroscope(tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.sub) {
			t.Errorf("%s: err %v, want %q", tt.name, err, tt.sub)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: error reveals the password: %v", tt.name, err)
		}
	}
}

// TestPyroscopeIngest runs the agent against a server that parses every
// request as Pyroscope does, and checks names, labels, times, headers and
// the profiles themselves.
func TestPyroscopeIngest(t *testing.T) {
	tests := []struct {
		name   string
		cfg    func(url string) PyroscopeConfig
		prefix string
		check  func(t *testing.T, h http.Header)
	}{
		{"bearer and tenant", func(u string) PyroscopeConfig {
			return PyroscopeConfig{URL: u, TenantID: "team-a", BearerToken: "tok", Headers: map[string]string{"X-Extra": "1", "Authorization": "ignored"}}
		}, "", func(t *testing.T, h http.Header) {
			if h.Get("Authorization") != "Bearer tok" || h.Get("X-Scope-OrgID") != "team-a" || h.Get("X-Extra") != "1" {
				t.Errorf("headers %v", h)
			}
		}},
		{"basic auth in URL, path prefix", func(u string) PyroscopeConfig {
			return PyroscopeConfig{URL: strings.Replace(u, "http://", "http://alice:pw@", 1) + "/pyroscope/"}
		}, "/pyroscope", func(t *testing.T, h http.Header) {
			want := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:pw"))
			if h.Get("Authorization") != want || h.Get("X-Scope-OrgID") != "" {
				t.Errorf("headers %v", h)
			}
		}},
		{"basic auth fields, raw body", func(u string) PyroscopeConfig {
			return PyroscopeConfig{URL: u, BasicAuthUser: "bob", BasicAuthPassword: "pw2", RawBody: true, SpyName: "custom"}
		}, "", func(t *testing.T, h http.Header) {
			if u, p, ok := (&http.Request{Header: h}).BasicAuth(); !ok || u != "bob" || p != "pw2" {
				t.Errorf("basic auth %q %q %v", u, p, ok)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var paths sync.Map
			f, srv := newFakePyroscope(t, func(n int, w http.ResponseWriter, r *http.Request) bool {
				paths.Store(r.URL.Path, true)
				return false
			})
			pcfg := tt.cfg(srv.URL)
			py, err := newPyroscope(pcfg)
			if err != nil {
				t.Fatal(err)
			}
			src := &testSource{name: "arena"}
			cfg := fastConfig([]Source{src, WallSource()}, py)
			cfg.Labels["odd"] = "a b/ü,{x}=y"
			start := time.Now()
			a, err := Start(cfg)
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "3 intervals", func() bool { return a.Stats().Uploaded >= 6 })
			stopAgent(t, a)
			s := a.Stats()
			checkBalance(t, s)
			reqs, bad, calls := f.requests()
			if len(bad) > 0 || s.Failed != 0 || s.Retried != 0 || uint64(len(reqs)) != s.Uploaded || calls != len(reqs) {
				t.Fatalf("stats %+v, %d requests, rejected: %v", s, len(reqs), bad)
			}
			if _, ok := paths.Load(tt.prefix + "/ingest"); !ok {
				t.Errorf("no request to %s/ingest", tt.prefix)
			}
			wantSpy := pcfg.SpyName
			if wantSpy == "" {
				wantSpy = defaultSpyName
			}
			var lastArena int64
			var wall int
			for _, in := range reqs {
				tt.check(t, in.header)
				wantLabels := map[string]string{"env": "test", "region": "eu-1", "odd": "a_b/ü__x__y"}
				if in.profile.PeriodType.Type != "wallclock" {
					wantLabels[seriesLabel] = "arena"
				}
				if fmt.Sprint(in.labels) != fmt.Sprint(wantLabels) {
					t.Errorf("labels %v, want %v", in.labels, wantLabels)
				}
				if in.from < start.Unix() || in.until < in.from || in.until > in.at.Unix() {
					t.Errorf("from %d until %d, started %d, received %d", in.from, in.until, start.Unix(), in.at.Unix())
				}
				if wantFormat := map[bool]string{true: "pprof"}[pcfg.RawBody]; in.spyName != wantSpy || in.format != wantFormat {
					t.Errorf("spyName %q format %q", in.spyName, in.format)
				}
				if pcfg.RawBody != (in.sampleTypes == nil) {
					t.Errorf("raw body %v but sample_type_config %v", pcfg.RawBody, in.sampleTypes)
				}
				for _, st := range in.profile.SampleType {
					c, ok := in.sampleTypes[st.Type]
					if pcfg.RawBody {
						continue
					}
					wantAgg := "sum"
					if strings.HasPrefix(st.Type, "inuse") {
						wantAgg = "average"
					}
					if !ok || c.Aggregation != wantAgg || c.Units == "" || c.Cumulative {
						t.Errorf("%s: sample type config %+v", st.Type, c)
					}
				}
				if in.app != "shop" {
					t.Errorf("app %q, want shop", in.app)
				}
				switch in.profile.PeriodType.Type {
				case "space":
					v := sampleValue(t, in.profile, "alloc_samples")
					if v <= lastArena {
						t.Errorf("arena interval %d after %d", v, lastArena)
					}
					lastArena = v
					if got := sampleValue(t, in.profile, "inuse_space"); got != 5000 {
						t.Errorf("inuse_space %d", got)
					}
					if typ := in.profile.Sample[0].Label["type"]; len(typ) != 1 || typ[0] != "main.user" {
						t.Errorf("type label %v", typ)
					}
					if leaf := in.profile.Sample[0].Location[0].Line[0].Function; leaf.Name != "main.user" || leaf.Filename != pprofenc.TypeFrameFile {
						t.Errorf("leaf frame %s (%s), want the type as the leaf", leaf.Name, leaf.Filename)
					}
					if m := in.profile.Sample[0].Label["sampling_mean"]; len(m) != 1 || m[0] != strconv.FormatInt(in.profile.Sample[0].NumLabel["sampling_mean"][0], 10) {
						t.Errorf("sampling_mean string label %v, numeric %v", m, in.profile.Sample[0].NumLabel["sampling_mean"])
					}
				case "wallclock":
					wall++
					if in.profile.PeriodType.Type != "wallclock" {
						t.Errorf("wall period type %v", in.profile.PeriodType)
					}
				default:
					t.Errorf("period type %v", in.profile.PeriodType)
				}
			}
			if lastArena != src.count() || wall == 0 {
				t.Errorf("last arena interval %d of %d, %d wall profiles", lastArena, src.count(), wall)
			}
		})
	}
}

// TestPyroscopeFaults injects server failures. Each case collects exactly
// one profile (the partial interval flushed by Stop) and checks the
// counters and the number of requests the server saw.
func TestPyroscopeFaults(t *testing.T) {
	status := func(code int, hdr ...string) func(int, http.ResponseWriter, *http.Request) bool {
		return func(_ int, w http.ResponseWriter, _ *http.Request) bool {
			for i := 0; i+1 < len(hdr); i += 2 {
				w.Header().Set(hdr[i], hdr[i+1])
			}
			http.Error(w, "injected", code)
			return true
		}
	}
	firstN := func(n int, f func(int, http.ResponseWriter, *http.Request) bool) func(int, http.ResponseWriter, *http.Request) bool {
		return func(i int, w http.ResponseWriter, r *http.Request) bool {
			return i <= n && f(i, w, r)
		}
	}
	hang := func(_ int, w http.ResponseWriter, r *http.Request) bool {
		io.Copy(io.Discard, r.Body) // then the server notices the client leave
		select {
		case <-r.Context().Done(): // the client gave up
		case <-time.After(10 * time.Second):
		}
		return true
	}
	// hangup reads the whole request, then closes the connection without
	// an answer. (Closing before the body is read makes the client's
	// write fail: a request not wholly sent, rightly retried.)
	hangup := func(_ int, w http.ResponseWriter, r *http.Request) bool {
		io.Copy(io.Discard, r.Body)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return true
	}
	body := func(code int, text string) func(int, http.ResponseWriter, *http.Request) bool {
		return func(_ int, w http.ResponseWriter, _ *http.Request) bool {
			http.Error(w, text, code)
			return true
		}
	}
	redirect := func(_ int, w http.ResponseWriter, r *http.Request) bool {
		http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusTemporaryRedirect)
		return true
	}
	slow := func(_ int, w http.ResponseWriter, r *http.Request) bool {
		time.Sleep(30 * time.Millisecond) // within the 2 s timeout
		return false
	}
	emptyRing := body(422, `{"code":"unknown","message":"empty ring"}`)
	const some = -1 // at least three calls (two retries), as many as MaxRetryTime allows
	tests := []struct {
		name                     string
		respond                  func(int, http.ResponseWriter, *http.Request) bool
		timeout                  time.Duration
		maxRetries               int           // 0: fastConfig's 2
		maxRetryTime             time.Duration // 0: the default
		uploaded, failed, unconf uint64
		calls                    int
		minGap                   time.Duration // between the first two attempts
	}{
		{"500 always", status(500), 0, 0, 0, 0, 1, 0, 3, 0},
		{"500 always, retried until MaxRetryTime", status(500), 0, maxRetriesLimit, 200 * time.Millisecond, 0, 1, 0, some, 0},
		{"503 twice", firstN(2, status(503)), 0, 0, 0, 1, 0, 0, 3, 0},
		{"429 with Retry-After", firstN(1, status(429, "Retry-After", "1")), 0, 0, 0, 1, 0, 0, 2, 30 * time.Millisecond},
		{"429 without Retry-After", firstN(1, status(429)), 0, 0, 0, 1, 0, 0, 2, 0},
		{"400 is not retried", status(400), 0, 0, 0, 0, 1, 0, 1, 0},
		{"401 is not retried", status(401), 0, 0, 0, 0, 1, 0, 1, 0},
		// The real server's answers while its ring is not ready.
		{"422 empty ring is retried", firstN(2, emptyRing), 0, 0, 0, 1, 0, 0, 3, 0},
		{"422 empty ring ten times is retried", firstN(10, emptyRing), 0, maxRetriesLimit, 0, 1, 0, 0, 11, 0},
		{"422 empty ring for ever: given up at MaxRetryTime", emptyRing, 0, maxRetriesLimit, 200 * time.Millisecond, 0, 1, 0, some, 0},
		{"422 unhealthy instances is retried", firstN(1, body(422, `{"code":"unknown","message":"at least 1 live replicas required, could only find 0 - unhealthy instances: 127.0.0.1:9095"}`)), 0, 0, 0, 1, 0, 0, 2, 0},
		{"422 v2 segment writer unavailable is retried", firstN(1, body(422, `{"code":"unknown","message":"pushing IngestInput-pprof failed push series with index 0 and id  failed: unknown: rpc error: code = Unavailable desc = service is unavailable"}`)), 0, 0, 0, 1, 0, 0, 2, 0},
		{"422 rate limit is retried", firstN(1, body(422, `{"code":"unknown","message":"pushing IngestInput-pprof failed resource_exhausted: push rate limit (4.0 MiB) exceeded while adding 2.1 KiB"}`)), 0, 0, 0, 1, 0, 0, 2, 0},
		{"422 series limit is not retried", body(422, `{"code":"unknown","message":"pushing IngestInput-pprof failed push series with index 0 and id  failed: resource_exhausted: Maximum active series limit exceeded (20/20), reduce the number of active streams"}`), 0, 0, 0, 0, 1, 0, 1, 0},
		{"422 unparsable is not retried", body(422, `{"code":"unknown","message":"parsing IngestInput-pprof failed"}`), 0, 0, 0, 0, 1, 0, 1, 0},
		{"redirect is not followed", redirect, 0, 0, 0, 0, 1, 0, 1, 0},
		{"slow answer within the timeout", slow, 0, 0, 0, 1, 0, 0, 1, 0},
		// Sent, no answer: the server may have stored it; a retry could
		// store it twice.
		{"hang past timeout is unconfirmed", hang, 50 * time.Millisecond, 0, 0, 0, 0, 1, 1, 0},
		{"connection closed after the request is unconfirmed", hangup, 0, 0, 0, 0, 0, 1, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var times []time.Time
			f, srv := newFakePyroscope(t, func(n int, w http.ResponseWriter, r *http.Request) bool {
				mu.Lock()
				times = append(times, time.Now())
				mu.Unlock()
				return tt.respond(n, w, r)
			})
			py, err := newPyroscope(PyroscopeConfig{URL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			cfg := fastConfig([]Source{&testSource{name: "arena"}}, py)
			cfg.Interval = time.Hour
			if tt.timeout > 0 {
				cfg.Timeout = tt.timeout
			}
			if tt.maxRetries != 0 {
				cfg.MaxRetries = tt.maxRetries
			}
			cfg.MaxRetryTime = tt.maxRetryTime
			a, err := Start(cfg)
			if err != nil {
				t.Fatal(err)
			}
			stopAgent(t, a)
			s := a.Stats()
			checkBalance(t, s)
			reqs, bad, calls := f.requests()
			if s.Uploaded != tt.uploaded || s.Failed != tt.failed || s.Unconfirmed != tt.unconf || s.Dropped != 0 {
				t.Errorf("stats %+v, want uploaded %d failed %d unconfirmed %d", s, tt.uploaded, tt.failed, tt.unconf)
			}
			if want := uint64(max(calls-1, 0)); s.Retried != want {
				t.Errorf("%d retries, want %d (one per call after the first)", s.Retried, want)
			}
			callsOK := calls == tt.calls || tt.calls == some && calls >= 3
			if !callsOK || len(bad) > 0 || uint64(len(reqs)) != tt.uploaded {
				t.Errorf("%d calls (want %d), %d ingested, rejected %v", calls, tt.calls, len(reqs), bad)
			}
			mu.Lock()
			defer mu.Unlock()
			if tt.minGap > 0 && len(times) >= 2 && times[1].Sub(times[0]) < tt.minGap {
				t.Errorf("retry after %v, want at least %v", times[1].Sub(times[0]), tt.minGap)
			}
		})
	}
}

// TestDeadBackendNeverBlocksCollection: with a server that never answers,
// collection goes on at its pace, the queue drops its oldest profiles, and
// Stop returns by its deadline with everything accounted for.
func TestDeadBackendNeverBlocksCollection(t *testing.T) {
	_, srv := newFakePyroscope(t, func(_ int, w http.ResponseWriter, r *http.Request) bool {
		io.Copy(io.Discard, r.Body) // then the server notices the client leave
		<-r.Context().Done()
		return true
	})
	py, err := newPyroscope(PyroscopeConfig{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	src := &testSource{name: "arena"}
	cfg := fastConfig([]Source{src}, py)
	cfg.Interval = 5 * time.Millisecond
	cfg.Timeout = time.Hour
	cfg.QueueSize = 4
	a, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "20 collections", func() bool { return src.count() >= 20 })
	ctx, cancel := contextWithTimeout(100 * time.Millisecond)
	defer cancel()
	begin := time.Now()
	err = a.Stop(ctx)
	if err == nil || time.Since(begin) > 5*time.Second {
		t.Fatalf("Stop: %v after %v", err, time.Since(begin))
	}
	s := a.Stats()
	checkBalance(t, s)
	// The upload in flight when Stop gave up had been sent: unconfirmed.
	if s.Uploaded != 0 || s.Failed != 0 || s.Unconfirmed > 1 || s.Dropped+s.Unconfirmed != s.Collected || s.Collected < 20 {
		t.Fatalf("stats %+v", s)
	}
}

// TestSecretsNeverLeak: the password, the token and the encoded basic
// credentials appear in no error, log line or name, whatever the server
// echoes back.
// TestSecretStraddlingTheCut: an error body is redacted before it is cut,
// so a token crossing the cut leaks no prefix.
func TestSecretStraddlingTheCut(t *testing.T) {
	const token = "tok-SUPERSECRET-0123456789"
	for pad := 230; pad < 260; pad++ {
		_, srv := newFakePyroscope(t, func(_ int, w http.ResponseWriter, r *http.Request) bool {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, "%s%s", strings.Repeat("x", pad), r.Header.Get("Authorization"))
			return true
		})
		py, err := newPyroscope(PyroscopeConfig{URL: srv.URL, BearerToken: token})
		if err != nil {
			t.Fatal(err)
		}
		uerr := py.Upload(t.Context(), &Upload{AppName: "a", Profile: "arena", Data: []byte("x")})
		if uerr == nil {
			t.Fatal("no error")
		}
		if msg := uerr.Error(); strings.Contains(msg, "tok-S") {
			t.Fatalf("pad %d: token prefix leaked: %s", pad, msg)
		}
	}
}

// TestConfigPrintsRedacted: %v, %+v, %s, %#v, slog and encoding/json
// never show a secret, also inside a struct that holds the config.
func TestConfigPrintsRedacted(t *testing.T) {
	c := PyroscopeConfig{
		URL:      "http://admin:hunter2pass@host:4040/?access_token=qtok-secret-4",
		TenantID: "tenant-secret", BasicAuthUser: "u", BasicAuthPassword: "pw-secret-1",
		BearerToken: "tok-secret-2", Headers: map[string]string{"X-Api-Key": "key-secret-3"},
	}
	var logs strings.Builder
	slog.New(slog.NewTextHandler(&logs, nil)).Info("cfg", "config", c)
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("cfg", "config", c)
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	jsPtr, err := json.Marshal(struct{ Pyroscope *PyroscopeConfig }{&c})
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(js, &back); err != nil || back["BasicAuthUser"] != "u" || back["BearerToken"] != "REDACTED" {
		t.Errorf("JSON %s: %v", js, err)
	}
	for _, out := range []string{fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%s", c), fmt.Sprintf("%#v", c), fmt.Sprint(&c), logs.String(), string(js), string(jsPtr)} {
		for _, secret := range []string{"hunter2pass", "tenant-secret", "pw-secret-1", "tok-secret-2", "key-secret-3", "qtok-secret-4"} {
			if strings.Contains(out, secret) {
				t.Errorf("%q leaked in %s", secret, out)
			}
		}
		if !strings.Contains(out, "host:4040") || !strings.Contains(out, "X-Api-Key") {
			t.Errorf("lost the non-secret parts: %s", out)
		}
	}
}

// TestHeaderAndTenantNotInErrors: a server echoing the request's headers
// shows neither header values nor the tenant in the upload error.
func TestHeaderAndTenantNotInErrors(t *testing.T) {
	_, srv := newFakePyroscope(t, func(_ int, w http.ResponseWriter, r *http.Request) bool {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "denied %s %s", r.Header.Get("X-Api-Key"), r.Header.Get("X-Scope-OrgID"))
		return true
	})
	py, err := newPyroscope(PyroscopeConfig{URL: srv.URL, TenantID: "tenant-secret", Headers: map[string]string{"X-Api-Key": "key-secret-3"}})
	if err != nil {
		t.Fatal(err)
	}
	uerr := py.Upload(t.Context(), &Upload{AppName: "a", Profile: "arena", Data: []byte("x")})
	if uerr == nil || strings.Contains(uerr.Error(), "tenant-secret") || strings.Contains(uerr.Error(), "key-secret-3") {
		t.Fatalf("error %v", uerr)
	}
}

func TestSecretsNeverLeak(t *testing.T) {
	const password, token = "pa55-w0rd-xyz", "t0ken-abc-123"
	echo := func(_ int, w http.ResponseWriter, r *http.Request) bool {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "denied %s for %s", r.Header.Get("Authorization"), r.URL.String())
		return true
	}
	_, srv := newFakePyroscope(t, echo)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close() // connection refused
	encoded := base64.StdEncoding.EncodeToString([]byte("user:" + password))
	cfgs := []PyroscopeConfig{
		{URL: strings.Replace(srv.URL, "http://", "http://user:"+password+"@", 1)},
		{URL: srv.URL, BearerToken: token},
		{URL: srv.URL, BasicAuthUser: "user", BasicAuthPassword: password},
		{URL: strings.Replace(deadURL, "http://", "http://user:"+password+"@", 1)},
		{URL: deadURL, BearerToken: token},
	}
	for i, pc := range cfgs {
		var logs syncBuffer
		py, err := newPyroscope(pc)
		if err != nil {
			t.Fatal(err)
		}
		cfg := fastConfig([]Source{&testSource{name: "arena"}}, py)
		cfg.Interval = time.Hour
		cfg.Logger = debugLogger(&logs)
		a, err := Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		stopAgent(t, a)
		s := a.Stats()
		if s.Failed != 1 {
			t.Fatalf("config %d: stats %+v", i, s)
		}
		uerr := py.Upload(t.Context(), &Upload{AppName: "a", Profile: "arena", Data: []byte("x")})
		js, _ := json.Marshal(py)
		all := logs.String() + fmt.Sprint(s) + py.String() + fmt.Sprint(uerr) + fmt.Sprintf("%#v %+v %v", py, py, cfg) + string(js)
		if !strings.Contains(logs.String(), "upload failed") || uerr == nil {
			t.Fatalf("config %d: failure not reported: %s / %v", i, logs.String(), uerr)
		}
		for _, secret := range []string{password, token, encoded} {
			if strings.Contains(all, secret) {
				t.Fatalf("config %d: secret %q leaked in:\n%s", i, secret, all)
			}
		}
	}
}

// TestPyroscopePausedServer: a server that stops answering for a while (as
// one stopped with SIGSTOP) costs at most the one profile in flight, counted
// unconfirmed; the uploader probes /ready instead of sending the next
// profiles into the silence, and they are uploaded once it answers again.
func TestPyroscopePausedServer(t *testing.T) {
	resume := make(chan struct{})
	var mu sync.Mutex
	var probes int
	f, srv := newFakePyroscope(t, func(_ int, w http.ResponseWriter, r *http.Request) bool {
		select {
		case <-resume:
		default:
			io.Copy(io.Discard, r.Body)
			select {
			case <-resume: // answered now, if the client still waits
				if r.URL.Path == "/ready" && r.Context().Err() == nil {
					mu.Lock()
					probes++
					mu.Unlock()
				}
			case <-r.Context().Done():
			}
			return true
		}
		if r.URL.Path == "/ready" {
			mu.Lock()
			probes++
			mu.Unlock()
			return true
		}
		return false
	})
	py, err := newPyroscope(PyroscopeConfig{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	src := &testSource{name: "arena"}
	cfg := fastConfig([]Source{src}, py)
	cfg.Interval = 10 * time.Millisecond
	cfg.Timeout = 50 * time.Millisecond
	cfg.MaxRetries = 0 // bounded by MaxRetryTime only
	cfg.QueueSize = 1000
	a, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a silent attempt and retries", func() bool { s := a.Stats(); return s.Unconfirmed >= 1 && s.Retried >= 3 })
	close(resume)
	waitFor(t, "uploads after the pause", func() bool { return a.Stats().Uploaded >= 5 })
	stopAgent(t, a)
	s := a.Stats()
	checkBalance(t, s)
	reqs, bad, _ := f.requests()
	mu.Lock()
	defer mu.Unlock()
	if s.Unconfirmed != 1 || s.Failed != 0 || s.Dropped != 0 || s.Uploaded != s.Collected-1 || uint64(len(reqs)) != s.Uploaded || len(bad) > 0 || probes == 0 {
		t.Fatalf("stats %+v, %d ingested, %d probes answered, rejected %v", s, len(reqs), probes, bad)
	}
}

// TestPyroscopeData: memory uploads carry the string labels a reader needs
// and, unless turned off, the type as the leaf frame of arena stacks, and
// leave trace_id out (span_id stays); other profiles are sent as they are.
func TestPyroscopeData(t *testing.T) {
	arenaP := arenaLikeProfile(3, 3000, 500)
	arenaP.Sample[0].Label["span_id"] = []string{"00000000000000aa"}
	arenaP.Sample[0].Label["trace_id"] = []string{"000000000000000000000000000000bb"}
	var buf bytes.Buffer
	if err := arenaP.Write(&buf); err != nil {
		t.Fatal(err)
	}
	u := &Upload{Profile: "arena", Data: buf.Bytes(), sampleTypes: sampleTypesOf(arenaP)}
	for _, frames := range []bool{true, false} {
		p, err := profile.ParseData(pyroscopeData(u, frames))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.CheckValid(); err != nil {
			t.Fatal(err)
		}
		s := p.Sample[0]
		if got := s.Label["sampling_mean"]; len(got) != 1 || got[0] != "524288" {
			t.Errorf("frames %v: sampling_mean string label %v", frames, got)
		}
		if len(s.Label["bytes"]) != 0 {
			t.Errorf("frames %v: an arena sample got a bytes string label", frames)
		}
		if len(s.Label["trace_id"]) != 0 || len(s.Label["span_id"]) != 1 {
			t.Errorf("frames %v: labels %v, want span_id and no trace_id", frames, s.Label)
		}
		leaf := s.Location[0].Line[0].Function
		if want := map[bool]string{true: "main.user", false: "main.handle"}[frames]; leaf.Name != want || len(s.Location) != map[bool]int{true: 2, false: 1}[frames] {
			t.Errorf("frames %v: leaf %s, %d frames", frames, leaf.Name, len(s.Location))
		}
	}
	bad := &Upload{Profile: "wall", Data: []byte("not even a profile"), sampleTypes: map[string]sampleTypeConfig{"wall": {}}}
	if got := pyroscopeData(bad, true); string(got) != string(bad.Data) {
		t.Error("an upload that does not decode was changed")
	}
}

// TestPyroscopeDataDropsTraceID: every kind of profile (CPU, wall-clock,
// a source of the user's) reaches Pyroscope without trace_id, which CPU
// samples carry where a goroutine's labels hold it; span_id, span_name,
// the other labels and every value stay, whether the agent encoded the
// upload at collection or it was made by hand.
func TestPyroscopeDataDropsTraceID(t *testing.T) {
	for _, c := range []struct {
		name   string
		period string
		types  []string
	}{
		{"cpu", "cpu", []string{"samples/count", "cpu/nanoseconds"}},
		{"wall", "wallclock", []string{"samples/count", "wall/nanoseconds"}},
		{"goroutines", "goroutine", []string{"goroutine/count"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fn := &profile.Function{ID: 1, Name: "main.handle"}
			loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
			p := &profile.Profile{PeriodType: &profile.ValueType{Type: c.period, Unit: "nanoseconds"}, Period: 10_000_000,
				Function: []*profile.Function{fn}, Location: []*profile.Location{loc}}
			for _, st := range c.types {
				ty, unit, _ := strings.Cut(st, "/")
				p.SampleType = append(p.SampleType, &profile.ValueType{Type: ty, Unit: unit})
			}
			for i := range 3 {
				s := &profile.Sample{Location: []*profile.Location{loc}, Label: map[string][]string{"req": {fmt.Sprint(i)}}}
				for j := range c.types {
					s.Value = append(s.Value, int64(10*i+j+1))
				}
				if i > 0 {
					s.Label["span_id"] = []string{fmt.Sprintf("%016x", i)}
					s.Label["span_name"] = []string{"GET /x"}
					s.Label["trace_id"] = []string{fmt.Sprintf("%032x", i)}
				}
				p.Sample = append(p.Sample, s)
			}
			var buf bytes.Buffer
			if err := p.Write(&buf); err != nil {
				t.Fatal(err)
			}
			byHand := &Upload{Profile: c.name, Data: buf.Bytes(), sampleTypes: sampleTypesOf(p)}
			py, err := newPyroscope(PyroscopeConfig{URL: "http://x.invalid"})
			if err != nil {
				t.Fatal(err)
			}
			a := &Agent{cfg: Config{AppName: "shop"}, dests: []*dest{{up: py, name: uploaderName(py)}}}
			collected, err := a.newUploadOf(c.name, profileEncodable{p}, time.Now(), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range []*Upload{byHand, collected} {
				q, err := profile.ParseData(pyroscopeData(u, true))
				if err != nil {
					t.Fatal(err)
				}
				if len(q.Sample) != len(p.Sample) {
					t.Fatalf("%d samples, want %d", len(q.Sample), len(p.Sample))
				}
				for i, s := range q.Sample {
					want := maps.Clone(p.Sample[i].Label)
					delete(want, "trace_id")
					if !reflect.DeepEqual(s.Label, want) || !slices.Equal(s.Value, p.Sample[i].Value) {
						t.Errorf("sample %d: labels %v, values %v; want %v, %v", i, s.Label, s.Value, want, p.Sample[i].Value)
					}
				}
			}
		})
	}
}

// TestPyroscopeDataAtCollection: the agent encodes a memory profile for
// its Pyroscope destinations when it collects it, once per kind of
// destination (with and without type frames), to what an Upload made by
// hand gets by decoding the plain profile and encoding it again; Data is
// then the plain profile only when another destination needs it.
func TestPyroscopeDataAtCollection(t *testing.T) {
	arenaP := typicalProfile(t)
	frames, err := newPyroscope(PyroscopeConfig{URL: "http://x.invalid"})
	if err != nil {
		t.Fatal(err)
	}
	noFrames, err := newPyroscope(PyroscopeConfig{URL: "http://x.invalid", NoTypeFrames: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := funcUploader{"dir", func(context.Context, *Upload) error { return nil }}
	cases := []struct {
		name      string
		ups       []Uploader
		variants  [2]bool // pyroscope encodings made: without, with type frames
		plainData bool
	}{
		{"frames", []Uploader{frames}, [2]bool{false, true}, false},
		{"no frames", []Uploader{noFrames}, [2]bool{true, false}, false},
		{"both", []Uploader{frames, noFrames}, [2]bool{true, true}, false},
		{"and a directory", []Uploader{dir, frames}, [2]bool{false, true}, true},
		{"directory alone", []Uploader{dir}, [2]bool{false, false}, true},
	}
	for _, c := range cases {
		for _, src := range []string{"arena", "heap"} {
			t.Run(c.name+"/"+src, func(t *testing.T) {
				a := &Agent{cfg: Config{AppName: "shop"}}
				for _, up := range c.ups {
					a.dests = append(a.dests, &dest{up: up, name: uploaderName(up)})
				}
				var e encodable = profileEncodable{arenaP}
				if src == "heap" {
					if e, err = collectSource(context.Background(), HeapSource()); err != nil {
						t.Fatal(err)
					}
				}
				u, err := a.newUploadOf(src, e, time.Unix(0, 0), time.Unix(15, 0))
				if err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				if err := e.writeGzip(new(pprofenc.Writer), &buf, nil); err != nil {
					t.Fatal(err)
				}
				plain := &Upload{Profile: src, sampleTypes: u.sampleTypes, Data: buf.Bytes()}
				for v, want := range c.variants {
					if got := u.pyroscope[v] != nil; got != want {
						t.Fatalf("variant %d made %v, want %v", v, got, want)
					}
					if !want {
						continue
					}
					if g, w := describe(t, u.pyroscope[v]), describe(t, pyroscopeData(plain, v == 1)); g != w {
						t.Errorf("variant %d:\n%s\ndecoding and encoding again gives\n%s", v, g, w)
					}
				}
				if got := bytes.Equal(u.Data, u.pyroscope[0]) || bytes.Equal(u.Data, u.pyroscope[1]); got == c.plainData {
					t.Errorf("Data is a Pyroscope encoding: %v, want %v", got, !c.plainData)
				}
				if _, err := profile.ParseData(u.Data); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// describe decodes a profile and lists its samples (stack, labels,
// values) in order, whatever the ids and string table order.
func describe(t *testing.T, data []byte) string {
	t.Helper()
	p, err := profile.ParseData(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, s := range p.Sample {
		for _, l := range s.Location {
			for _, ln := range l.Line {
				fmt.Fprintf(&b, "%s:%s:%d;", ln.Function.Name, ln.Function.Filename, ln.Line)
			}
		}
		fmt.Fprintf(&b, " %v %v %v %v\n", s.Label, s.NumLabel, s.NumUnit, s.Value)
	}
	fmt.Fprintf(&b, "%v %d %d %d", p.Comments, p.Period, p.TimeNanos, p.DurationNanos)
	return b.String()
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
