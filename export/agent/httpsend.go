package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/arenaprof/arenaprof/internal/redact"
)

// httpSender is what the HTTP destinations (NewPyroscope's, NewOTLP's) share:
// the client that never follows redirects, the credentials kept out of
// every message, the classification of failures into retryable,
// unconfirmed and final, and the probe that holds profiles back while a
// server that left a request unanswered stays silent.
type httpSender struct {
	kind     string // names the destination in messages: "pyroscope", "otlp"
	client   *http.Client
	own      *http.Transport // non-nil when the client is ours
	secrets  redact.Secrets
	probeURL string // GET target of the probe, without credentials

	// transient, if set, tells a 4xx answer that reports a passing
	// condition of the server (Pyroscope's unhealthy ring) from one about
	// the request.
	transient func(status int, body string) bool
	// accepted, if set, reads a 2xx answer's body (its first 64 KiB),
	// which may still report a failure (OTLP's partial success).
	accepted func(header http.Header, body []byte) error
	// refused, if set, reads a refusal (a status other than 2xx and its
	// body): a hint it returns says the request cannot succeed as it is
	// sent (OTLP's profiles version), so the upload fails at once, with
	// the hint.
	refused func(status int, body string) string

	// silent is set when a request went unanswered: until the server
	// answers a probe, no profile is sent (see post).
	silent atomic.Bool
}

// newHTTPSender returns a sender using a copy of client that never follows
// redirects, or a client of its own when client is nil.
func newHTTPSender(kind string, client *http.Client) *httpSender {
	h := &httpSender{kind: kind}
	if client != nil {
		c := *client
		c.CheckRedirect = noRedirect
		h.client = &c
	} else {
		h.own = http.DefaultTransport.(*http.Transport).Clone()
		h.client = &http.Client{Transport: h.own, CheckRedirect: noRedirect}
	}
	return h
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// hideAll adds secrets that must never appear in a message, in any form
// a server may echo them (see redact.Secrets).
func (h *httpSender) hideAll(secrets ...string) { h.secrets.Add(secrets...) }

// hideLong adds header values (often API keys) and tenants; very short
// values are not hidden, since replacing them would garble the message
// without hiding anything.
func (h *httpSender) hideLong(values ...string) {
	for _, s := range values {
		if len(s) >= 4 {
			h.secrets.Add(s)
		}
	}
}

// close releases the idle connections of the sender's own client.
func (h *httpSender) close() {
	if h.own != nil {
		h.own.CloseIdleConnections()
	}
}

// redact removes every credential from s.
func (h *httpSender) redact(s string) string { return h.secrets.Replace(s, "REDACTED") }

// post sends body (its pieces in order) to target (shown as endpoint in messages) with header
// and reports the outcome as an upload error: nil on 2xx; [Retryable] for
// network errors before the whole request was sent, 5xx, 429 and
// transient answers (honouring Retry-After); [Unconfirmed] for a request
// sent but not answered; a plain error otherwise.
//
// After an unconfirmed request the server may be stopped or overloaded:
// sending the next profiles would leave each of them unconfirmed in turn.
// So until the server answers again, post first probes it with a GET of
// probeURL, which is safe to repeat and sends no credentials; any HTTP
// answer will do. While the probe gets none, post returns a retryable
// error without sending the profile, so an outage costs at most one
// unconfirmed profile and the rest are retried.
func (h *httpSender) post(ctx context.Context, target, endpoint string, header http.Header, body [][]byte) error {
	if h.silent.Load() {
		if err := h.probe(ctx); err != nil {
			return Retryable(fmt.Errorf("agent: %s: server not answering since a request went unanswered; profile not sent: %s", h.kind, err), 0)
		}
		h.silent.Store(false)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, nil)
	if err != nil {
		return fmt.Errorf("agent: %s: building request: %s", h.kind, h.redact(err.Error()))
	}
	req.Header = header
	// The body's pieces are read where they are, not copied into one.
	for _, b := range body {
		req.ContentLength += int64(len(b))
	}
	req.Body = &piecesReader{pieces: body}
	req.GetBody = func() (io.ReadCloser, error) { return &piecesReader{pieces: body}, nil }
	if req.ContentLength == 0 {
		req.Body, req.GetBody = http.NoBody, nil
	}
	// Whether the whole request reached the connection decides what a
	// failure means: before, the server cannot have stored the profile and
	// a retry is safe; after, it may have (a stopped or overloaded server
	// reads it later), so the upload is unconfirmed.
	var wrote atomic.Bool
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		// The transport may resend on a new connection (a keep-alive
		// connection the server had closed): each attempt starts afresh.
		GotConn: func(httptrace.GotConnInfo) { wrote.Store(false) },
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				wrote.Store(true)
			}
		},
	}))
	resp, err := h.client.Do(req)
	if err != nil {
		// *url.Error repeats the URL; report the inner error against the
		// endpoint without the query.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if wrote.Load() {
			h.silent.Store(true)
			return Unconfirmed(fmt.Errorf("agent: %s: POST %s: request sent, no answer: %s", h.kind, endpoint, h.redact(err.Error())))
		}
		msg := fmt.Errorf("agent: %s: POST %s: %s", h.kind, endpoint, h.redact(err.Error()))
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return msg // cancelled by the agent: not worth a retry
		}
		return Retryable(msg, 0)
	}
	defer func() {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
	}()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if h.accepted == nil {
			return nil
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if err := h.accepted(resp.Header, b); err != nil {
			return fmt.Errorf("agent: %s: POST %s: %s", h.kind, endpoint, h.redact(err.Error()))
		}
		return nil
	}
	// Redact the whole body read, then cut it: cutting first could leave
	// the prefix of a secret that straddles the cut.
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
	text := h.redact(strings.ToValidUTF8(string(snippet), "?"))
	transient := h.transient != nil && h.transient(resp.StatusCode, text)
	text = strings.TrimSpace(strings.ToValidUTF8(truncate(text, 256), "?"))
	if h.refused != nil {
		if hint := h.refused(resp.StatusCode, text); hint != "" {
			return fmt.Errorf("agent: %s: POST %s: %s: %s (%s)", h.kind, endpoint, resp.Status, text, hint)
		}
	}
	err = fmt.Errorf("agent: %s: POST %s: %s: %s", h.kind, endpoint, resp.Status, text)
	if transient || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		return Retryable(err, parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()))
	}
	return err
}

// piecesReader reads a request body made of pieces, in order, without
// copying them into one; its WriteTo writes them as they are
// (io.MultiReader's takes a 32 KiB buffer each time).
type piecesReader struct {
	pieces [][]byte
}

func (r *piecesReader) Read(p []byte) (int, error) {
	for len(r.pieces) > 0 && len(r.pieces[0]) == 0 {
		r.pieces = r.pieces[1:]
	}
	if len(r.pieces) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.pieces[0])
	r.pieces[0] = r.pieces[0][n:]
	return n, nil
}

func (r *piecesReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for len(r.pieces) > 0 {
		n, err := w.Write(r.pieces[0])
		total += int64(n)
		r.pieces[0] = r.pieces[0][n:]
		if err != nil {
			return total, err
		}
		r.pieces = r.pieces[1:]
	}
	return total, nil
}

func (r *piecesReader) Close() error { return nil }

// probe sends GET probeURL and reports an error when no HTTP answer
// comes.
func (h *httpSender) probe(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.probeURL, nil)
	if err != nil {
		return errors.New("building the probe")
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := h.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("GET %s: %s", redact.URL(h.probeURL, "REDACTED"), h.redact(err.Error()))
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return nil
}

// userAgent is the User-Agent of every request the agent sends.
const userAgent = "arenaprof-agent"

// truncate cuts s to at most n bytes.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// writeHeaders writes ` Headers:"K1"=REDACTED,"K2"=REDACTED` (names
// sorted and quoted, so that a name with control characters prints
// inert), nothing without headers: how configs print their headers.
func writeHeaders(b *strings.Builder, headers map[string]string) {
	if len(headers) == 0 {
		return
	}
	b.WriteString(" Headers:")
	for i, k := range slices.Sorted(maps.Keys(headers)) {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, "%q=REDACTED", k)
	}
}

// redactedHeaders returns headers with every value "REDACTED", nil
// without headers: how configs marshal their headers to JSON.
func redactedHeaders(headers map[string]string) map[string]string {
	if len(headers) == 0 {
		return nil
	}
	m := make(map[string]string, len(headers))
	for k := range headers {
		m[k] = "REDACTED"
	}
	return m
}

// checkHeaders checks the header names and values the user gave as HTTP
// sends them (RFC 9110: a name is a token, a value holds no control
// character but tab), so that a bad one fails when the destination is
// set up, not at every upload, and no request can be split or smuggled
// through them. The error names the field and the header, but never
// prints a value, nor a name that is not a token (a name such as
// "Authorization: Bearer KEY" would hold the secret): only its length
// and where it goes wrong.
func checkHeaders(what string, headers map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(headers)) {
		if i := badHeaderNameByte(k); i >= 0 {
			if k == "" {
				return fmt.Errorf("agent: %s: invalid header name: empty", what)
			}
			return fmt.Errorf("agent: %s: invalid header name of %d bytes: byte %d is %s, and a name is a token (letters, digits and !#$%%&'*+-.^_`|~; a value goes in the map's value)", what, len(k), i, byteName(k[i]))
		}
		for i := 0; i < len(headers[k]); i++ {
			if c := headers[k][i]; (c < ' ' && c != '\t') || c == 0x7f {
				return fmt.Errorf("agent: %s: invalid header value of %q: a control character, %s, at byte %d", what, k, byteName(c), i)
			}
		}
	}
	return nil
}

// badHeaderNameByte returns the index of the first byte of k that a
// header name (a token) cannot hold, 0 for an empty k, -1 if k is a
// token.
func badHeaderNameByte(k string) int {
	if k == "" {
		return 0
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return i
		}
	}
	return -1
}

// byteName names byte c for an error without printing a secret around it:
// 'x' for a printable ASCII byte, its hex value otherwise.
func byteName(c byte) string {
	if c > ' ' && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("0x%02x", c)
}

// parseURL parses the destination URL field what (e.g.
// "PyroscopeConfig.URL") and checks what a request needs of it: the http
// or https scheme, a host, and a port, if given, in 1..65535. Its errors
// never quote the URL, which may hold credentials.
func parseURL(what, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// The parse error quotes the URL, which may hold credentials.
		return nil, fmt.Errorf("agent: %s is not a valid URL", what)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("agent: %s scheme %q: want http or https", what, u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("agent: %s has no host", what)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("agent: %s: port %s is outside 1..65535", what, p)
		}
	}
	return u, nil
}
