package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/arenaprof/arenaprof/internal/redact"
)

// defaultSpyName is the spyName query parameter NewPyroscope sends: the
// value of Go's own Pyroscope SDK, which tells the server the profiles come
// from a Go program.
const defaultSpyName = "gospy"

// PyroscopeConfig configures a Pyroscope-compatible HTTP destination.
type PyroscopeConfig struct {
	// URL is the server's base URL (http or https), e.g.
	// "http://pyroscope:4040"; "/ingest" is appended to its path. User
	// information in the URL ("https://user:password@host") is taken as
	// basic-auth credentials and removed from the URL.
	URL string
	// TenantID, if set, is sent as the X-Scope-OrgID header.
	TenantID string
	// BasicAuthUser and BasicAuthPassword set basic authentication.
	BasicAuthUser, BasicAuthPassword string
	// BearerToken sets "Authorization: Bearer ..."; it excludes basic auth.
	BearerToken string
	// Headers are added to every request (they cannot override the
	// authentication, tenant or content-type headers).
	Headers map[string]string
	// SpyName is the spyName query parameter; default "gospy", the value
	// of Go's own Pyroscope SDK, which tells the server the profiles come
	// from a Go program.
	SpyName string
	// RawBody sends the gzipped pprof as the request body with
	// format=pprof instead of a multipart form. The raw body cannot carry
	// sample_type_config, so servers fall back to their default sample
	// types and may ignore types they do not know (alloc_samples,
	// alloc_tail, wall-clock samples).
	RawBody bool
	// NoTypeFrames leaves arena stacks as they are. By default each arena
	// sample's type is added as the leaf frame of its stack (as
	// go tool pprof -tagleaf=type does locally: a function named after the
	// type, without a line, in a file named "type"), so
	// that Pyroscope's and Grafana's flame graphs end in types. The frames
	// add no series (the type is a series label already) and a few
	// percent to each upload (see the README, "Fleet").
	NoTypeFrames bool
	// Client sends the requests; nil selects a client of the uploader's own
	// (closed when the agent stops). Redirects are never followed, so
	// credentials are never sent to another host.
	Client *http.Client
}

// String describes c with every secret redacted: the URL's password, the
// basic-auth password, the bearer token, the tenant and header values. It
// serves fmt's %v, %+v and %s.
func (c PyroscopeConfig) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "{URL:%s", redact.URL(c.URL, "REDACTED"))
	if c.TenantID != "" {
		b.WriteString(" TenantID:REDACTED")
	}
	if c.BasicAuthUser != "" {
		fmt.Fprintf(&b, " BasicAuthUser:%s", c.BasicAuthUser)
	}
	if c.BasicAuthPassword != "" {
		b.WriteString(" BasicAuthPassword:REDACTED")
	}
	if c.BearerToken != "" {
		b.WriteString(" BearerToken:REDACTED")
	}
	writeHeaders(&b, c.Headers)
	if c.SpyName != "" {
		fmt.Fprintf(&b, " SpyName:%s", c.SpyName)
	}
	if c.RawBody {
		b.WriteString(" RawBody:true")
	}
	if c.NoTypeFrames {
		b.WriteString(" NoTypeFrames:true")
	}
	b.WriteString("}")
	return b.String()
}

// GoString is String, so that %#v redacts too.
func (c PyroscopeConfig) GoString() string { return "agent.PyroscopeConfig" + c.String() }

// LogValue is String, so that log/slog redacts too.
func (c PyroscopeConfig) LogValue() slog.Value { return slog.StringValue(c.String()) }

// MarshalJSON encodes c with every secret redacted, as String does: the
// URL without its password and query values, "REDACTED" for the tenant,
// the basic-auth password, the bearer token and each header value. Client
// becomes true when set. There is no UnmarshalJSON: the output describes a
// configuration, it cannot restore one.
func (c PyroscopeConfig) MarshalJSON() ([]byte, error) {
	redacted := func(s string) string {
		if s == "" {
			return ""
		}
		return "REDACTED"
	}
	return json.Marshal(struct {
		URL               string
		TenantID          string            `json:",omitempty"`
		BasicAuthUser     string            `json:",omitempty"`
		BasicAuthPassword string            `json:",omitempty"`
		BearerToken       string            `json:",omitempty"`
		Headers           map[string]string `json:",omitempty"`
		SpyName           string            `json:",omitempty"`
		RawBody           bool              `json:",omitempty"`
		NoTypeFrames      bool              `json:",omitempty"`
		Client            bool              `json:",omitempty"`
	}{
		URL:               redact.URL(c.URL, "REDACTED"),
		TenantID:          redacted(c.TenantID),
		BasicAuthUser:     c.BasicAuthUser,
		BasicAuthPassword: redacted(c.BasicAuthPassword),
		BearerToken:       redacted(c.BearerToken),
		Headers:           redactedHeaders(c.Headers),
		SpyName:           c.SpyName,
		RawBody:           c.RawBody,
		NoTypeFrames:      c.NoTypeFrames,
		Client:            c.Client != nil,
	})
}

// pyroscopeUploader is the destination NewPyroscope returns.
type pyroscopeUploader struct {
	endpoint string // scheme://host/path/ingest, without credentials
	cfg      PyroscopeConfig
	send     *httpSender
}

// NewPyroscope checks cfg and returns a destination that uploads profiles
// to a Pyroscope-compatible ingest endpoint:
//
//	POST {URL}/ingest?name=APP{k=v,...}&from=UNIX_S&until=UNIX_S&spyName=gospy
//
// with a multipart/form-data body holding a "profile" part (file
// profile.pprof, the gzipped pprof) and a "sample_type_config" part (file
// sample_type_config.json: units, and "sum" or "average" for each sample
// type). As with pyroscope-go, one
// application is one service_name, whatever its profiles: the server tells
// CPU, wall-clock and memory profiles apart by their sample types, and
// memory profiles carry the series label memory=SOURCE ("arena", "heap"),
// since arena and Go heap profiles share sample type names:
//
//	memory:alloc_space:bytes:space:bytes{service_name="shop", memory="arena"}
//	memory:alloc_space:bytes:space:bytes{service_name="shop", memory="heap"}
//	process_cpu:cpu:nanoseconds:cpu:nanoseconds{service_name="shop"}
//	wall:wall:nanoseconds:wallclock:nanoseconds{service_name="shop"}
//
// (memory takes precedence over a Config.Labels entry of the same key). Memory profiles also carry the numeric labels a reader
// of the server's sums needs (sampling_mean; memprofilerate and bytes of
// Go heap samples) as string labels, since the server keeps only those.
// The multipart request carries no format parameter: the
// server reads the body as raw pprof whenever format=pprof is present,
// before it looks at the content type, so format=pprof is sent only with
// [PyroscopeConfig.RawBody].
//
// Names follow Pyroscope's rules: in the application name, characters other
// than ASCII letters, digits, '_', '-' and '.' become '_'; label values keep
// every character except the ones that delimit the name ('{', '}', ',', '=')
// and white space or control characters, which become '_'; the whole name is
// then URL-encoded as a query value.
//
// Network errors and timeouts before the whole request was sent, 5xx and
// 429 responses are retryable, honouring a Retry-After header, and so is
// a 422 that reports an unhealthy ring ("empty ring" while the server
// starts, "unhealthy instances" while it stops) or the tenant's ingestion
// rate limit ("push rate limit ... exceeded": the server's /ingest answers
// every refusal with 422); other responses (such as 422 for a body the
// server cannot parse or for the series limit, 401, or a redirect, which is
// never followed) fail the upload. A timeout or network error after the
// request was sent makes the upload [Unconfirmed]: the server may still
// store it (a server stopped with SIGSTOP reads it when it resumes), and a
// retry could store it twice; after such an upload no profile is sent
// until the server answers a GET of {URL}/ready again. No error or log
// message holds the password, the token or URL user information. The
// destination is closed (its idle connections released) when the agent
// stops.
func NewPyroscope(cfg PyroscopeConfig) (Uploader, error) { return uploader(newPyroscope(cfg)) }

func newPyroscope(cfg PyroscopeConfig) (*pyroscopeUploader, error) {
	if cfg.URL == "" {
		return nil, errors.New("agent: PyroscopeConfig.URL is empty")
	}
	u, err := parseURL("PyroscopeConfig.URL", cfg.URL)
	if err != nil {
		return nil, err
	}
	if u.User != nil {
		if cfg.BasicAuthUser != "" || cfg.BasicAuthPassword != "" {
			return nil, errors.New("agent: PyroscopeConfig: credentials both in the URL and in BasicAuthUser/BasicAuthPassword")
		}
		cfg.BasicAuthUser = u.User.Username()
		cfg.BasicAuthPassword, _ = u.User.Password()
		u.User = nil
	}
	if cfg.BearerToken != "" && (cfg.BasicAuthUser != "" || cfg.BasicAuthPassword != "") {
		return nil, errors.New("agent: PyroscopeConfig: set either basic auth or a bearer token, not both")
	}
	if err := checkHeaders("PyroscopeConfig.Headers", cfg.Headers); err != nil {
		return nil, err
	}
	for _, s := range []string{cfg.TenantID, cfg.BearerToken, cfg.BasicAuthUser, cfg.BasicAuthPassword} {
		if strings.ContainsAny(s, "\r\n\x00") {
			return nil, errors.New("agent: PyroscopeConfig: tenant or credentials contain a line break or NUL")
		}
	}
	if cfg.SpyName == "" {
		cfg.SpyName = defaultSpyName
	}
	u.RawQuery, u.Fragment = "", ""
	u.Path = strings.TrimSuffix(u.Path, "/") + "/ingest"
	u.RawPath = ""
	p := &pyroscopeUploader{endpoint: u.String(), cfg: cfg, send: newHTTPSender("pyroscope", cfg.Client)}
	p.send.probeURL = strings.TrimSuffix(p.endpoint, "/ingest") + "/ready"
	p.send.transient = func(status int, body string) bool {
		return status == http.StatusUnprocessableEntity && (ringUnhealthy(body) || strings.Contains(body, "push rate limit"))
	}
	p.send.hideAll(cfg.BasicAuthPassword, cfg.BearerToken)
	p.send.hideLong(cfg.TenantID)
	for _, v := range cfg.Headers {
		p.send.hideLong(v)
	}
	if cfg.BasicAuthPassword != "" {
		// The encoded header value is as good as the password.
		p.send.hideAll(base64.StdEncoding.EncodeToString([]byte(cfg.BasicAuthUser + ":" + cfg.BasicAuthPassword)))
	}
	return p, nil
}

// typeFrames reports whether the destination adds type frames (see
// pyroscopeDest).
func (p *pyroscopeUploader) typeFrames() bool { return !p.cfg.NoTypeFrames }

// String names the destination by its endpoint, without credentials.
func (p *pyroscopeUploader) String() string { return "pyroscope:" + p.endpoint }

// GoString is String, so that %#v shows no credentials either.
func (p *pyroscopeUploader) GoString() string { return "&agent.pyroscopeUploader{" + p.String() + "}" }

// Close releases the idle connections of the uploader's own client.
func (p *pyroscopeUploader) Close() error {
	p.send.close()
	return nil
}

// Upload sends u in one request. After a request went unanswered (an
// Unconfirmed error), no profile is sent until the server answers a GET
// of {URL}/ready again.
func (p *pyroscopeUploader) Upload(ctx context.Context, u *Upload) error {
	if u.sampleTypes == nil {
		// An Upload made by hand: its types come from its data.
		c := *u
		c.sampleTypes = u.types()
		u = &c
	}
	q := url.Values{}
	q.Set("name", ingestName(u.AppName, seriesLabels(u)))
	q.Set("from", strconv.FormatInt(u.From.Unix(), 10))
	q.Set("until", strconv.FormatInt(u.Until.Unix(), 10))
	q.Set("spyName", p.cfg.SpyName)

	var body [][]byte
	var contentType string
	if p.cfg.RawBody {
		q.Set("format", "pprof")
		body, contentType = [][]byte{pyroscopeData(u, !p.cfg.NoTypeFrames)}, "application/octet-stream"
	} else {
		var err error
		body, contentType, err = multipartParts(u, pyroscopeData(u, !p.cfg.NoTypeFrames))
		if err != nil {
			return fmt.Errorf("agent: pyroscope: building request: %w", err)
		}
	}
	h := make(http.Header, len(p.cfg.Headers)+4)
	for k, v := range p.cfg.Headers {
		h.Set(k, v)
	}
	h.Set("Content-Type", contentType)
	h.Set("User-Agent", userAgent)
	if p.cfg.TenantID != "" {
		h.Set("X-Scope-OrgID", p.cfg.TenantID)
	}
	switch {
	case p.cfg.BearerToken != "":
		h.Set("Authorization", "Bearer "+p.cfg.BearerToken)
	case p.cfg.BasicAuthUser != "" || p.cfg.BasicAuthPassword != "":
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(p.cfg.BasicAuthUser+":"+p.cfg.BasicAuthPassword)))
	default:
		h.Del("Authorization")
	}
	return p.send.post(ctx, p.endpoint+"?"+q.Encode(), p.endpoint, h, body)
}

// ringUnhealthy reports whether a 422 body is the server's complaint that
// its ring is not ready (at start-up or shutdown) rather than about the
// request. Pyroscope v2.2.1, ready but its segment writer not yet, answers
// "rpc error: code = Unavailable desc = service is unavailable" (seen
// right after a restart).
func ringUnhealthy(body string) bool {
	return strings.Contains(body, "empty ring") || strings.Contains(body, "unhealthy instances") ||
		strings.Contains(body, "too many unhealthy instances") || strings.Contains(body, "code = Unavailable")
}

// multipartParts returns the multipart form of an upload of data: a
// "profile" part (file profile.pprof) and, when u has sample types, a
// "sample_type_config" part (file sample_type_config.json), as
// mime/multipart writes them, in pieces that leave data where it is (the
// body of a Go heap upload is megabytes) and its content type.
func multipartParts(u *Upload, data []byte) ([][]byte, string, error) {
	boundary := randomBoundary()
	for bytes.Contains(data, []byte(boundary)) {
		boundary = randomBoundary()
	}
	var head, tail bytes.Buffer
	fmt.Fprintf(&head, "--%s\r\nContent-Disposition: form-data; name=\"profile\"; filename=\"profile.pprof\"\r\n"+
		"Content-Type: application/octet-stream\r\n\r\n", boundary)
	if len(u.sampleTypes) > 0 {
		js := u.typesJSON
		if js == nil {
			var err error
			if js, err = json.Marshal(u.sampleTypes); err != nil {
				return nil, "", err
			}
		}
		fmt.Fprintf(&tail, "\r\n--%s\r\nContent-Disposition: form-data; name=\"sample_type_config\"; filename=\"sample_type_config.json\"\r\n"+
			"Content-Type: application/json\r\n\r\n", boundary)
		tail.Write(js)
	}
	fmt.Fprintf(&tail, "\r\n--%s--\r\n", boundary)
	return [][]byte{head.Bytes(), data, tail.Bytes()}, "multipart/form-data; boundary=" + boundary, nil
}

// randomBoundary returns a multipart boundary as mime/multipart makes one:
// 30 random bytes in hex.
func randomBoundary() string {
	var b [30]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// maxRetryAfter bounds what parseRetryAfter returns.
const maxRetryAfter = 24 * time.Hour

// parseRetryAfter reads a Retry-After header value: a number of seconds or
// an HTTP date (relative to now). It returns 0 for an empty, malformed,
// negative or past value, and at most maxRetryAfter.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		if n >= int64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		return time.Duration(n) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	d := t.Sub(now)
	if d <= 0 {
		return 0
	}
	return min(d, maxRetryAfter)
}

// ingestName builds the name query parameter of Pyroscope's /ingest:
// "APP{k1=v1,k2=v2}" with keys sorted, or "APP" without labels; the server
// takes APP as the service_name. See NewPyroscope for the escaping rules.
// Label keys are sanitised like the application name, minus '.' and '-';
// a key that collides with an earlier one after sanitising is dropped.
func ingestName(app string, labels map[string]string) string {
	var b strings.Builder
	b.WriteString(mapRunes(app, appNameRune))
	if len(labels) == 0 {
		return b.String()
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	seen := make(map[string]bool, len(keys))
	b.WriteByte('{')
	first := true
	for _, k := range keys {
		sk := mapRunes(k, tagKeyRune)
		if seen[sk] {
			continue
		}
		seen[sk] = true
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(sk)
		b.WriteByte('=')
		b.WriteString(mapRunes(labels[k], tagValueRune))
	}
	b.WriteByte('}')
	return b.String()
}

func tagKeyRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_'
}

func appNameRune(r rune) bool { return tagKeyRune(r) || r == '-' || r == '.' }

func tagValueRune(r rune) bool {
	switch r {
	case '{', '}', ',', '=', utf8.RuneError:
		return false
	}
	return !unicode.IsSpace(r) && !unicode.IsControl(r) && unicode.IsPrint(r)
}

// mapRunes replaces each rune of s that ok rejects (and each invalid UTF-8
// byte) with '_'; an empty result becomes "_".
func mapRunes(s string, ok func(rune) bool) string {
	var b strings.Builder
	for _, r := range s {
		if ok(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}
