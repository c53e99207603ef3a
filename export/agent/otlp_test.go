package agent

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/internal/otlp"
)

// otlpServer records the requests an OTLP receiver gets and answers with
// status (200 when 0) and body.
type otlpServer struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []*http.Request
	bodies [][]byte
	status int
	answer string
}

func newOTLPServer(t *testing.T) *otlpServer {
	s := &otlpServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				http.Error(w, "bad gzip", http.StatusBadRequest)
				return
			}
			b, _ = io.ReadAll(zr)
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, r)
		s.bodies = append(s.bodies, b)
		status, answer := s.status, s.answer
		s.mu.Unlock()
		if status != 0 {
			w.Header().Set("Retry-After", "7")
			http.Error(w, answer, status)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func testUpload(t *testing.T) *Upload {
	p := arenaLikeProfile(3, 4096, 1024)
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return &Upload{AppName: "shop", Labels: map[string]string{"env": "prod"}, Profile: "arena", From: time.Unix(100, 0), Until: time.Unix(115, 0), Data: buf.Bytes(), sampleTypes: sampleTypesOf(p)}
}

// clearOTELEnv unsets every variable NewOTLP reads, for the test.
func clearOTELEnv(t *testing.T) {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS",
		"OTEL_EXPORTER_OTLP_PROFILES_HEADERS", "OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION",
		"OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_SERVICE_NAME", "ARENAPROF_OTLP_PROFILES_VERSION"} {
		t.Setenv(v, "")
	}
}

func TestOTLPRequest(t *testing.T) {
	clearOTELEnv(t)
	tests := []struct {
		name     string
		cfg      func(base string) OTLPConfig
		env      map[string]string
		path     string
		headers  map[string]string // want these request headers
		resource []string          // want these strings in the body
		gzip     bool
	}{
		{"url", func(b string) OTLPConfig { return OTLPConfig{URL: b} }, nil,
			"/v1development/profiles", nil, []string{"service.name", "shop", "env", "prod"}, true},
		{"base path and slash", func(b string) OTLPConfig { return OTLPConfig{URL: b + "/otlp/", Compression: "none"} }, nil,
			"/otlp/v1development/profiles", nil, nil, false},
		{"basic auth from the URL", func(b string) OTLPConfig {
			return OTLPConfig{URL: strings.Replace(b, "http://", "http://alice:s3cret@", 1)}
		}, nil, "/v1development/profiles", map[string]string{"Authorization": "Basic YWxpY2U6czNjcmV0"}, nil, true},
		{"endpoint from the environment", func(string) OTLPConfig { return OTLPConfig{} },
			map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "BASE/col", "OTEL_EXPORTER_OTLP_HEADERS": "X-Key=a%20b, Authorization = Bearer t0ken",
				"OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=staging,env=ignored", "OTEL_EXPORTER_OTLP_COMPRESSION": "none"},
			"/col/v1development/profiles", map[string]string{"X-Key": "a b", "Authorization": "Bearer t0ken"},
			[]string{"deployment.environment", "staging"}, false},
		{"signal endpoint used as it is", func(string) OTLPConfig { return OTLPConfig{} },
			map[string]string{"OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT": "BASE/custom/path", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://unused:1"},
			"/custom/path", nil, nil, true},
		{"explicit config wins", func(b string) OTLPConfig {
			return OTLPConfig{URL: b, Headers: map[string]string{"x-key": "mine"}, Compression: "gzip"}
		}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://unused:1", "OTEL_EXPORTER_OTLP_HEADERS": "X-Key=env,X-Other=o",
			"OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION": "none"},
			"/v1development/profiles", map[string]string{"X-Key": "mine", "X-Other": "o"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newOTLPServer(t)
			for k, v := range tt.env {
				t.Setenv(k, strings.ReplaceAll(v, "BASE", srv.URL))
			}
			o, err := newOTLP(tt.cfg(srv.URL))
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if err := o.Upload(context.Background(), testUpload(t)); err != nil {
				t.Fatal(err)
			}
			r, body := srv.reqs[0], srv.bodies[0]
			if r.URL.Path != tt.path || r.Method != http.MethodPost {
				t.Errorf("%s %s, want POST %s", r.Method, r.URL.Path, tt.path)
			}
			if got := r.Header.Get("Content-Type"); got != "application/x-protobuf" {
				t.Errorf("Content-Type %q", got)
			}
			if got := r.Header.Get("Content-Encoding") == "gzip"; got != tt.gzip {
				t.Errorf("gzip %v, want %v", got, tt.gzip)
			}
			for k, v := range tt.headers {
				if got := r.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			for _, s := range tt.resource {
				if !bytes.Contains(body, []byte(s)) {
					t.Errorf("body lacks %q", s)
				}
			}
			if bytes.Contains(body, []byte("ignored")) {
				t.Error("OTEL_RESOURCE_ATTRIBUTES overrode the agent's label env")
			}
		})
	}
}

func TestOTLPErrors(t *testing.T) {
	clearOTELEnv(t)
	for _, tt := range []struct {
		status    int
		answer    string
		retryable bool
		hint      string // what the error must say to change, if anything
	}{
		{http.StatusBadRequest, "failed to convert otel profile", false, "OTLPConfig.ProfilesVersion (or ARENAPROF_OTLP_PROFILES_VERSION) to v0.2.0"},
		// Answers of receivers that read the other version (measured):
		// final, not retried, and the error says what to set.
		{http.StatusInternalServerError, "failed to convert otel profile: sample 2: could not access attribute at index 4096", false, "v0.2.0"},
		{http.StatusBadRequest, "proto: wrong wireType = 2 for field LinkIndex", false, "set OTLPConfig.ProfilesVersion"},
		{http.StatusUnauthorized, "no s3cret-header-value here", false, ""},
		{http.StatusTooManyRequests, "slow down", true, ""},
		{http.StatusInternalServerError, "failed to make a GRPC request: empty ring", true, ""},
		{http.StatusServiceUnavailable, "unavailable", true, ""},
	} {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			srv := newOTLPServer(t)
			srv.status, srv.answer = tt.status, tt.answer
			o, err := newOTLP(OTLPConfig{URL: srv.URL + "?api_key=s3cret-query", Headers: map[string]string{"X-Api-Key": "s3cret-header-value"}})
			if err != nil {
				t.Fatal(err)
			}
			err = o.Upload(context.Background(), testUpload(t))
			if err == nil {
				t.Fatal("no error")
			}
			retry, after := isRetryable(err)
			if retry != tt.retryable {
				t.Errorf("%v: retryable %v, want %v", err, retry, tt.retryable)
			}
			if retry && after != 7*time.Second {
				t.Errorf("Retry-After %s, want 7s", after)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error shows a header value: %v", err)
			}
			if !strings.Contains(err.Error(), "agent: otlp: POST "+srv.URL+otlpProfilesPath+"?api_key=REDACTED") {
				t.Errorf("error %q does not name the endpoint", err)
			}
			if tt.hint != "" && !strings.Contains(err.Error(), tt.hint) {
				t.Errorf("error %q does not say %q", err, tt.hint)
			}
			if tt.hint == "" && strings.Contains(err.Error(), "ProfilesVersion") {
				t.Errorf("error %q blames the profiles version", err)
			}
		})
	}
}

// TestOTLPProfilesVersion checks that the version comes from the
// configuration, then the environment, and that the hint of a refusal
// names the other version.
func TestOTLPProfilesVersion(t *testing.T) {
	clearOTELEnv(t)
	for _, tt := range []struct {
		cfg, env string
		want     otlp.Version
		hint     string
	}{
		{"", "", otlp.V030, "to v0.2.0"},
		{"", "v0.2.0", otlp.V020, "to v0.3.0"},
		{"v0.3.0", "0.2.0", otlp.V030, "to v0.2.0"},
		{"0.2.0", "", otlp.V020, "to v0.3.0"},
	} {
		t.Run(tt.cfg+"/"+tt.env, func(t *testing.T) {
			t.Setenv("ARENAPROF_OTLP_PROFILES_VERSION", tt.env)
			o, err := newOTLP(OTLPConfig{URL: "http://h", ProfilesVersion: tt.cfg})
			if err != nil {
				t.Fatal(err)
			}
			if o.version != tt.want {
				t.Errorf("version %v, want %v", o.version, tt.want)
			}
			if h := o.versionMismatch(500, "failed to convert otel profile: sample"); !strings.HasSuffix(h, tt.hint) {
				t.Errorf("hint %q, want one ending %q", h, tt.hint)
			}
		})
	}
}

func TestNewOTLPInvalid(t *testing.T) {
	clearOTELEnv(t)
	for _, tt := range []struct {
		name string
		cfg  OTLPConfig
		env  map[string]string
		want string
	}{
		{"nothing", OTLPConfig{}, nil, "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{"scheme", OTLPConfig{URL: "grpc://h:4317"}, nil, "http or https"},
		{"no host", OTLPConfig{URL: "http:///x"}, nil, "no host"},
		{"compression", OTLPConfig{URL: "http://h", Compression: "zstd"}, nil, "gzip or none"},
		{"header", OTLPConfig{URL: "http://h", Headers: map[string]string{"X-A": "a\r\nb"}}, nil, "invalid header"},
		{"env headers", OTLPConfig{URL: "http://h"}, map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "Authorization"}, "OTEL_EXPORTER_OTLP_HEADERS: member 1"},
		{"env timeout", OTLPConfig{URL: "http://h"}, map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "10s"}, "milliseconds"},
		{"env attributes", OTLPConfig{URL: "http://h"}, map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "a=%zz"}, "percent"},
		{"version", OTLPConfig{URL: "http://h", ProfilesVersion: "v0.4.0"}, nil, "OTLPConfig.ProfilesVersion: OTLP profiles version \"v0.4.0\""},
		{"env version", OTLPConfig{URL: "http://h"}, map[string]string{"ARENAPROF_OTLP_PROFILES_VERSION": "1"}, "want v0.3.0 or v0.2.0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			_, err := newOTLP(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestParseOTELList(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want map[string]string
	}{
		{"", nil},
		{" a=1 , b = x%2Cy ,, a=2", map[string]string{"a": "2", "b": "x,y"}},
		{"k=v=w", map[string]string{"k": "v=w"}},
		{"service.name=shop", map[string]string{"service.name": "shop"}},
	} {
		got, err := parseOTELList(tt.in)
		if err != nil {
			t.Fatalf("%q: %v", tt.in, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%q: %v, want %v", tt.in, got, tt.want)
		}
	}
}

func FuzzParseOTELList(f *testing.F) {
	f.Add("a=1,b=x%2Cy")
	f.Add("Authorization=Bearer%20t0ken")
	f.Add("=,%,a=%0A")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseOTELList(s)
		if err != nil {
			if strings.Contains(err.Error(), s) && len(s) > 8 {
				t.Fatalf("error %q quotes the input", err)
			}
			return
		}
		for k, v := range m {
			if k == "" || strings.ContainsAny(k+v, "\r\n\x00") {
				t.Fatalf("entry %q=%q", k, v)
			}
		}
	})
}

func TestOTLPConfigRedacted(t *testing.T) {
	c := OTLPConfig{URL: "https://u:pw-s3cret@h:4318", Headers: map[string]string{"Authorization": "Bearer t0ken-s3cret"}, TLS: nil}
	js, err := c.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{c.String(), c.GoString(), fmt.Sprintf("%v", c), string(js), c.LogValue().String()} {
		if strings.Contains(out, "s3cret") {
			t.Errorf("%q shows a secret", out)
		}
		if !strings.Contains(out, "Authorization") {
			t.Errorf("%q lacks the header name", out)
		}
	}
}

func TestOTLPPartialSuccess(t *testing.T) {
	clearOTELEnv(t)
	for _, tt := range []struct {
		name, contentType string
		body              []byte
		want              string // "" for success
	}{
		{"empty", "application/x-protobuf", nil, ""},
		{"accepted, a warning", "application/x-protobuf", []byte{0x0a, 0x04, 0x12, 0x02, 'o', 'k'}, ""},
		{"rejected", "application/x-protobuf", []byte{0x0a, 0x07, 0x08, 0x03, 0x12, 0x03, 'b', 'a', 'd'}, "rejected 3 profiles: bad"},
		{"malformed", "application/x-protobuf", []byte{0x0a, 0x7f}, ""},
		{"json", "application/json", []byte(`{"partialSuccess":{}}`), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				w.Write(tt.body)
			}))
			defer srv.Close()
			o, err := newOTLP(OTLPConfig{URL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			err = o.Upload(context.Background(), testUpload(t))
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if retry, _ := isRetryable(err); retry {
				t.Errorf("rejected profiles retried: %v", err)
			}
		})
	}
}
