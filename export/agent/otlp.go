package agent

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/otlp"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/redact"
)

// otlpProfilesPath is the path of OTLP/HTTP's profiles signal
// (development), appended to [OTLPConfig].URL.
const otlpProfilesPath = "/v1development/profiles"

// OTLPConfig configures an OpenTelemetry (OTLP/HTTP, protobuf)
// destination: an OpenTelemetry Collector with the profiles signal on, or
// a backend that ingests OTLP profiles itself (Grafana Pyroscope serves
// them at the same path).
//
// A field left at its zero value is taken from the standard environment
// variables, as OpenTelemetry's SDKs read them (the explicit value always
// wins):
//
//   - URL: OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT (the full URL, used as it
//     is), else OTEL_EXPORTER_OTLP_ENDPOINT (a base URL,
//     "/v1development/profiles" appended);
//   - Headers: OTEL_EXPORTER_OTLP_PROFILES_HEADERS and
//     OTEL_EXPORTER_OTLP_HEADERS ("k1=v1,k2=v2", values percent-encoded),
//     merged under the explicit ones;
//   - Compression: OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION, then
//     OTEL_EXPORTER_OTLP_COMPRESSION ("gzip" or "none");
//   - Timeout: OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT, then
//     OTEL_EXPORTER_OTLP_TIMEOUT (milliseconds);
//   - ResourceAttributes: OTEL_RESOURCE_ATTRIBUTES ("k1=v1,k2=v2"),
//     merged under the explicit ones and the agent's labels;
//   - ProfilesVersion: ARENAPROF_OTLP_PROFILES_VERSION ("v0.3.0" or
//     "v0.2.0"; OpenTelemetry defines no variable for it).
//
// The resource attribute service.name is the agent's AppName (or, when it
// is empty, OTEL_SERVICE_NAME).
type OTLPConfig struct {
	// URL is the receiver's base URL (http or https), e.g.
	// "http://otel-collector:4318" or "http://pyroscope:4040";
	// "/v1development/profiles" is appended to its path. User information
	// in the URL ("https://user:password@host") is sent as basic
	// authentication and removed from the URL.
	URL string
	// Headers are added to every request (e.g. "Authorization"); they
	// cannot override Content-Type or Content-Encoding.
	Headers map[string]string
	// Compression is "gzip" (the default) or "none".
	Compression string
	// Timeout bounds one request; 0 leaves it to the agent's
	// Config.Timeout (the shorter of the two applies).
	Timeout time.Duration
	// TLS, if set, configures the uploader's own client for https (a
	// private CA, client certificates). It is ignored when Client is set.
	TLS *tls.Config
	// ResourceAttributes are added to the resource of every request,
	// after service.name and the agent's labels, which win.
	ResourceAttributes map[string]string
	// ProfilesVersion is the wire format of the profiles, the version of
	// opentelemetry-proto's profiles/v1development: "v0.3.0" (the
	// default), read by Grafana Pyroscope v2.2 and OpenTelemetry Collector
	// v0.148.0 and later, or "v0.2.0", read by Pyroscope v1.19 and
	// Collector v0.147.0 and earlier. The two number a sample's fields
	// differently; an upload that the receiver refuses in a way that shows
	// the mismatch fails with an error naming this setting.
	ProfilesVersion string
	// Client sends the requests; nil selects a client of the uploader's own
	// (closed when the agent stops). Redirects are never followed, so
	// credentials are never sent to another host.
	Client *http.Client
}

// String describes c with every secret redacted: the URL's password (or
// its lone user name) and credential-like query values, and the values of
// the headers. It serves fmt's %v, %+v and %s.
func (c OTLPConfig) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "{URL:%s", redact.URL(c.URL, "REDACTED"))
	writeHeaders(&b, c.Headers)
	if c.Compression != "" {
		fmt.Fprintf(&b, " Compression:%s", c.Compression)
	}
	if c.Timeout != 0 {
		fmt.Fprintf(&b, " Timeout:%s", c.Timeout)
	}
	if c.TLS != nil {
		b.WriteString(" TLS:true")
	}
	if len(c.ResourceAttributes) > 0 {
		b.WriteString(" ResourceAttributes:")
		for i, k := range slices.Sorted(maps.Keys(c.ResourceAttributes)) {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(k + "=" + c.ResourceAttributes[k])
		}
	}
	if c.ProfilesVersion != "" {
		fmt.Fprintf(&b, " ProfilesVersion:%s", c.ProfilesVersion)
	}
	if c.Client != nil {
		b.WriteString(" Client:true")
	}
	b.WriteString("}")
	return b.String()
}

// GoString is String, so that %#v redacts too.
func (c OTLPConfig) GoString() string { return "agent.OTLPConfig" + c.String() }

// LogValue is String, so that log/slog redacts too.
func (c OTLPConfig) LogValue() slog.Value { return slog.StringValue(c.String()) }

// MarshalJSON encodes c with every secret redacted, as String does:
// "REDACTED" for each header value; TLS and Client become true when set.
// There is no UnmarshalJSON: the output describes a configuration, it
// cannot restore one.
func (c OTLPConfig) MarshalJSON() ([]byte, error) {
	var timeout string
	if c.Timeout != 0 {
		timeout = c.Timeout.String()
	}
	return json.Marshal(struct {
		URL                string
		Headers            map[string]string `json:",omitempty"`
		Compression        string            `json:",omitempty"`
		Timeout            string            `json:",omitempty"`
		TLS                bool              `json:",omitempty"`
		ResourceAttributes map[string]string `json:",omitempty"`
		ProfilesVersion    string            `json:",omitempty"`
		Client             bool              `json:",omitempty"`
	}{
		URL:                redact.URL(c.URL, "REDACTED"),
		Headers:            redactedHeaders(c.Headers),
		Compression:        c.Compression,
		Timeout:            timeout,
		TLS:                c.TLS != nil,
		ResourceAttributes: c.ResourceAttributes,
		ProfilesVersion:    c.ProfilesVersion,
		Client:             c.Client != nil,
	})
}

// otlpUploader is the destination NewOTLP returns.
type otlpUploader struct {
	target   string // the request URL, without user information
	endpoint string // target as messages show it (credential-like query values redacted)
	cfg      OTLPConfig
	header   http.Header
	resource []otlp.KeyValue // the attributes besides service.name, sorted
	envName  string          // OTEL_SERVICE_NAME, for an empty AppName
	version  otlp.Version
	send     *httpSender
	gzips    sync.Pool // of *gzip.Writer at BestSpeed
}

// NewOTLP checks cfg, fills what it leaves unset from the environment (see
// [OTLPConfig]) and returns a destination that uploads profiles as
// OpenTelemetry profiles over OTLP/HTTP:
//
//	POST {URL}/v1development/profiles
//	Content-Type: application/x-protobuf
//	Content-Encoding: gzip
//
// with an ExportProfilesServiceRequest in the wire format of
// [OTLPConfig].ProfilesVersion (opentelemetry-proto profiles v0.3.0 by
// default; v0.2.0 for Grafana Pyroscope v1.19 and OpenTelemetry Collector
// v0.147.0 and earlier). Each upload is one request: a
// resource (service.name = AppName, the agent's labels, the configured and
// environment resource attributes), one scope ("arenaprof"; for a memory
// profile, with the attribute memory=SOURCE: "arena", "heap") and one
// Profile per pprof sample type sharing one dictionary. In Pyroscope this
// gives the series of the pprof uploads: service_name=APP, memory=arena or
// heap, type=..., sampling_mean=... (numeric labels that a reader of the
// sums needs go as string attributes, since Pyroscope keeps no other).
// A sample that carries a span (the label span_id, 16 lowercase hex
// digits, as the module otelarena sets it) is linked to it through the
// profiles' link table instead of a span_id attribute; Pyroscope makes
// the label span_id of the link. Every value and label of the pprof
// profile crosses; see docs/opentelemetry.md for the mapping and for what
// a backend keeps of it.
//
// Failures are classified as for [NewPyroscope]: network errors before the
// whole request was sent, 5xx and 429 (honouring Retry-After) are
// retryable; a request sent but not answered is [Unconfirmed], and until
// the receiver answers a GET of the endpoint again no profile is sent;
// other answers fail the upload, and so does a 2xx answer whose partial
// success reports rejected profiles. An answer that shows the receiver
// reads the other profiles version (Pyroscope v2.2's "failed to convert
// otel profile", a Collector's "wrong wireType" for a Sample field) fails
// the upload without a retry, with an error that names ProfilesVersion and
// the version to set. No error or log message holds a
// header value or the URL's password.
func NewOTLP(cfg OTLPConfig) (Uploader, error) { return uploader(newOTLP(cfg)) }

func newOTLP(cfg OTLPConfig) (*otlpUploader, error) {
	cfg, asIs, err := otlpFromEnv(cfg, os.Getenv)
	if err != nil {
		return nil, err
	}
	if cfg.URL == "" {
		return nil, errors.New("agent: OTLPConfig.URL is empty and neither OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT nor OTEL_EXPORTER_OTLP_ENDPOINT is set")
	}
	u, err := parseURL("OTLPConfig.URL", cfg.URL)
	if err != nil {
		return nil, err
	}
	switch cfg.Compression {
	case "", "gzip", "none":
	default:
		return nil, fmt.Errorf("agent: OTLPConfig.Compression %q: want gzip or none", cfg.Compression)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("agent: OTLPConfig.Timeout is %s: want 0 or more", cfg.Timeout)
	}
	if err := checkHeaders("OTLPConfig.Headers", cfg.Headers); err != nil {
		return nil, err
	}
	version, err := otlp.ParseVersion(cfg.ProfilesVersion)
	if err != nil {
		return nil, fmt.Errorf("agent: OTLPConfig.ProfilesVersion: %w", err)
	}
	o := &otlpUploader{cfg: cfg, header: make(http.Header), envName: os.Getenv("OTEL_SERVICE_NAME"), version: version}
	var user, password string
	if u.User != nil {
		user = u.User.Username()
		password, _ = u.User.Password()
		u.User = nil
		if strings.ContainsAny(user+password, "\r\n\x00") {
			return nil, errors.New("agent: OTLPConfig.URL: credentials contain a line break or NUL")
		}
	}
	if !asIs {
		u.Path = strings.TrimSuffix(u.Path, "/") + otlpProfilesPath
		u.RawPath = ""
	}
	u.Fragment = ""
	o.target = u.String()
	o.endpoint = redact.URL(o.target, "REDACTED")

	for k, v := range cfg.Headers {
		o.header.Set(k, v)
	}
	if user != "" || password != "" {
		o.header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+password)))
	}
	o.header.Set("Content-Type", "application/x-protobuf")
	o.header.Set("User-Agent", userAgent)
	if cfg.Compression != "none" {
		o.header.Set("Content-Encoding", "gzip")
	}

	o.send = newHTTPSender("otlp", cfg.Client)
	if o.send.own != nil && cfg.TLS != nil {
		o.send.own.TLSClientConfig = cfg.TLS.Clone()
	}
	o.send.probeURL = o.target
	o.send.accepted = partialSuccess
	o.send.refused = o.versionMismatch
	o.send.hideAll(password)
	o.send.hideLong(user) // a lone user name is often a token
	if password != "" || user != "" {
		o.send.hideAll(base64.StdEncoding.EncodeToString([]byte(user + ":" + password)))
	}
	for _, v := range cfg.Headers {
		o.send.hideLong(v)
		// "Bearer TOKEN", "Basic B64": the credential alone too.
		if _, cred, ok := strings.Cut(v, " "); ok {
			o.send.hideLong(cred)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.ResourceAttributes)) {
		o.resource = append(o.resource, otlp.KeyValue{Key: k, Value: cfg.ResourceAttributes[k]})
	}
	return o, nil
}

// String names the destination by its endpoint, without credentials.
func (o *otlpUploader) String() string { return "otlp:" + o.endpoint }

// GoString is String, so that %#v shows no credentials either.
func (o *otlpUploader) GoString() string { return "&agent.otlpUploader{" + o.String() + "}" }

// Close releases the idle connections of the uploader's own client.
func (o *otlpUploader) Close() error {
	o.send.close()
	return nil
}

func (o *otlpUploader) readsParsed() {}

// Upload converts u's profile and sends it in one request.
func (o *otlpUploader) Upload(ctx context.Context, u *Upload) error {
	p := u.parsed
	if p == nil {
		var err error
		if p, err = profile.ParseData(u.Data); err != nil {
			return fmt.Errorf("agent: otlp: reading the %s profile: %w", u.Profile, err)
		}
	}
	body := o.encode(p, u)
	if o.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.cfg.Timeout)
		defer cancel()
	}
	return o.send.post(ctx, o.target, o.endpoint, o.header.Clone(), [][]byte{body})
}

// memoryProfile reports whether Pyroscope names a profile of p's sample
// types "memory" when it comes as pprof (pkg/og/convert/pprof,
// RawProfile.metricName): no sample type is named wall, none holds "cpu",
// and one holds alloc_ or inuse_ or is space or objects. Such profiles
// carry the scope attribute memory=SOURCE, which Pyroscope keeps as the
// series label that tells arena memory from the Go heap, as the pprof
// uploads' memory label does.
func memoryProfile(p *profile.Profile) bool {
	memory := false
	for _, st := range p.SampleType {
		switch t := st.Type; {
		case t == "wall", strings.Contains(t, "cpu"):
			return false
		case strings.Contains(t, "alloc_"), strings.Contains(t, "inuse_"), t == "space", t == "objects":
			memory = true
		}
	}
	return memory
}

// rssPeriodType is the period type an OTLP upload of a resident-memory
// profile is sent with: Pyroscope then stores it as
// resident:resident:bytes:resident:bytes.
var rssPeriodType = &profile.ValueType{Type: "resident", Unit: "bytes"}

// numAsString selects the numeric labels sent as string attributes, with
// their unit: those a reader of a backend's sums needs to compute
// intervals (the sampling mean of arena samples; the MemProfileRate and
// the object size of Go heap samples), which Pyroscope would otherwise
// drop, as it drops every numeric attribute.
func numAsString(s *profile.Sample, key string) bool {
	switch key {
	case pprofmt.LabelMean, pprofmt.LabelHeapRate:
		return true
	case pprofmt.LabelBytes:
		m := s.Label[pprofmt.LabelMemory]
		return len(m) > 0 && m[0] == pprofmt.MemoryHeap
	}
	return false
}

// versionMismatch reads a refusal (status and body) and, when it shows
// that the receiver reads the other profiles version than the one sent,
// returns what to set. Measured answers:
//
//   - Pyroscope v1.19.3 given v0.3.0: 500 "failed to convert otel profile:
//     sample values length mismatch" (it reads attribute indices as
//     values);
//   - Pyroscope v2.2.1 given v0.2.0: 500 "failed to convert otel profile:
//     sample value is required" (when it does not answer 200 and drop the
//     profile: see the README);
//   - Collector v0.147.0 given v0.3.0, and v0.165.0 given v0.2.0: 400
//     "proto: wrong wireType = 2 for field LinkIndex".
func (o *otlpUploader) versionMismatch(status int, body string) string {
	if !strings.Contains(body, "failed to convert otel profile") &&
		!strings.Contains(body, "wrong wireType") {
		return ""
	}
	other := otlp.V020
	if o.version == otlp.V020 {
		other = otlp.V030
	}
	return fmt.Sprintf("the receiver reads another OTLP profiles version than the %s sent: set OTLPConfig.ProfilesVersion (or ARENAPROF_OTLP_PROFILES_VERSION) to %s", o.version, other)
}

// partialSuccess reads a receiver's 2xx answer: an OTLP
// ExportProfilesServiceResponse whose partial_success may say that it
// rejected profiles, which fails the upload (OTLP: not to be retried).
// Other answers (empty, not protobuf, malformed) accept it, as their status
// says.
func partialSuccess(h http.Header, body []byte) error {
	ct := h.Get("Content-Type")
	if len(body) == 0 || (ct != "application/x-protobuf" && ct != "application/protobuf") {
		return nil
	}
	rejected, msg, err := otlp.PartialSuccess(body)
	if err == nil && rejected > 0 {
		msg = strings.TrimSpace(strings.ToValidUTF8(truncate(msg, 256), "?"))
		return fmt.Errorf("the receiver rejected %d profiles: %s", rejected, msg)
	}
	return nil
}

// encode returns the request body for p: the protobuf request, gzipped
// unless Compression is "none".
func (o *otlpUploader) encode(p *profile.Profile, u *Upload) []byte {
	name := u.AppName
	if name == "" {
		name = o.envName
	}
	if name == "" {
		name = "unknown_service"
	}
	res := make([]otlp.KeyValue, 0, 1+len(u.Labels)+len(o.resource))
	res = append(res, otlp.KeyValue{Key: "service.name", Value: name})
	seen := map[string]bool{"service.name": true}
	for _, k := range slices.Sorted(maps.Keys(u.Labels)) {
		if !seen[k] {
			seen[k] = true
			res = append(res, otlp.KeyValue{Key: k, Value: u.Labels[k]})
		}
	}
	for _, kv := range o.resource {
		if !seen[kv.Key] {
			seen[kv.Key] = true
			res = append(res, kv)
		}
	}
	req := otlp.Request{
		Resource:    res,
		ScopeName:   "arenaprof",
		Version:     o.version,
		NumAsString: numAsString,
	}
	if memoryProfile(p) && u.Profile != "" {
		req.ScopeAttributes = []otlp.KeyValue{{Key: pprofmt.LabelMemory, Value: u.Profile}}
	}
	if pprofmt.IsRSS(p) {
		// Pyroscope names an OTLP profile's type after its period type:
		// resident, as the pprof uploads' (after their last sample type),
		// rather than the heap sampling's space.
		req.PeriodType = rssPeriodType
	}
	if o.version == otlp.V030 {
		// Every OpenTelemetry Collector that sends v0.3.0 (v0.148.0 to
		// v0.165.0, measured) rewrites the resource and scope attributes
		// into references to the string table (key_strindex,
		// string_value_strindex), which Grafana Pyroscope v2.2.1 does not
		// resolve: through a Collector it stored every profile under
		// service_name=unknown_service, without the agent's labels or the
		// memory label. Pyroscope also reads service.name and labels from
		// the samples' attributes, which the Collector passes as they are,
		// so they go there too.
		req.SampleAttributes = append(slices.Clip(res), req.ScopeAttributes...)
	}
	raw := otlp.Encode(nil, p, req)
	if o.cfg.Compression == "none" {
		return raw
	}
	// gzip.BestSpeed: an OTLP request repeats each sample's stack and
	// attribute indices once per sample type, short and alike records on
	// which the default level's match search is slow for little gain.
	// Measured: a typical profile (18 KB of protobuf) took about 0.5 ms
	// for 4.3 KB at the default level, 0.2 ms for 5.1 KB at BestSpeed; one
	// of 100,000 buckets (9.1 MB) 3.0 s for 1.56 MB at the default level,
	// 44 ms for 1.31 MB at BestSpeed.
	var buf bytes.Buffer
	buf.Grow(len(raw) / 4)
	zw, _ := o.gzips.Get().(*gzip.Writer)
	if zw == nil {
		zw, _ = gzip.NewWriterLevel(&buf, gzip.BestSpeed) // the level is valid
	} else {
		zw.Reset(&buf)
	}
	zw.Write(raw) // a bytes.Buffer does not fail
	zw.Close()
	o.gzips.Put(zw)
	return buf.Bytes()
}
