package agent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// echoForms are the ways a server may echo a credential it was sent.
var echoForms = []struct {
	name string
	form func(string) string
}{
	{"as sent", func(s string) string { return s }},
	{"upper case", strings.ToUpper},
	{"JSON", func(s string) string { b, _ := json.Marshal(s); return string(b) }},
	{"JSON, upper case", func(s string) string { b, _ := json.Marshal(strings.ToUpper(s)); return string(b) }},
	{"query", url.QueryEscape},
	{"path", url.PathEscape},
	{"JSON error", func(s string) string {
		b, _ := json.Marshal(map[string]string{"code": "unauthenticated", "message": "bad token " + s})
		return string(b)
	}},
}

// TestCredentialEchoesRedacted: a server that echoes the credentials it
// got (the Authorization header, the tenant, an API key header), in each
// form of echoForms, shows none of them in the upload error, in
// Stats.LastError, or in log lines (text and JSON), for a bearer token
// and for basic auth (whose base64 is a credential too).
func TestCredentialEchoesRedacted(t *testing.T) {
	const token, password, tenant, apiKey = "tok&Secret9", "pa55<w0rd>&x", "tenant&secret", "key-Secret&3"
	basic := base64.StdEncoding.EncodeToString([]byte("user:" + password))
	for _, ef := range echoForms {
		for _, auth := range []string{"bearer", "basic"} {
			t.Run(ef.name+"/"+auth, func(t *testing.T) {
				_, srv := newFakePyroscope(t, func(_ int, w http.ResponseWriter, r *http.Request) bool {
					w.WriteHeader(http.StatusUnauthorized)
					fmt.Fprintf(w, "denied: %s tenant=%s key=%s", ef.form(r.Header.Get("Authorization")),
						ef.form(r.Header.Get("X-Scope-OrgID")), ef.form(r.Header.Get("X-Api-Key")))
					return true
				})
				pc := PyroscopeConfig{URL: srv.URL, TenantID: tenant, Headers: map[string]string{"X-Api-Key": apiKey}}
				if auth == "bearer" {
					pc.BearerToken = token
				} else {
					pc.BasicAuthUser, pc.BasicAuthPassword = "user", password
				}
				py, err := newPyroscope(pc)
				if err != nil {
					t.Fatal(err)
				}
				var text, js syncBuffer
				cfg := fastConfig([]Source{&testSource{name: "arena"}}, py)
				cfg.Interval = time.Hour
				cfg.Logger = slog.New(teeHandler{slog.NewTextHandler(&text, &slog.HandlerOptions{Level: slog.LevelDebug}),
					slog.NewJSONHandler(&js, &slog.HandlerOptions{Level: slog.LevelDebug})})
				a, err := Start(cfg)
				if err != nil {
					t.Fatal(err)
				}
				stopAgent(t, a)
				s := a.Stats()
				uerr := py.Upload(t.Context(), &Upload{AppName: "a", Profile: "arena", Data: []byte("x")})
				if s.Failed != 1 || uerr == nil || !strings.Contains(uerr.Error(), "denied") {
					t.Fatalf("stats %+v, error %v", s, uerr)
				}
				for _, out := range []string{uerr.Error(), s.LastError, s.Destinations[0].LastError, text.String(), js.String()} {
					for _, secret := range []string{token, password, tenant, apiKey, basic} {
						for _, f := range echoForms {
							if e := f.form(secret); strings.Contains(out, strings.Trim(e, `"`)) {
								t.Errorf("%s form of %q in %s", f.name, secret, out)
							}
						}
					}
				}
			})
		}
	}
}

// teeHandler sends each record to two handlers.
type teeHandler [2]slog.Handler

func (h teeHandler) Enabled(ctx context.Context, l slog.Level) bool { return h[0].Enabled(ctx, l) }
func (h teeHandler) Handle(ctx context.Context, r slog.Record) error {
	if err := h[0].Handle(ctx, r.Clone()); err != nil {
		return err
	}
	return h[1].Handle(ctx, r)
}
func (h teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return teeHandler{h[0].WithAttrs(as), h[1].WithAttrs(as)}
}
func (h teeHandler) WithGroup(n string) slog.Handler {
	return teeHandler{h[0].WithGroup(n), h[1].WithGroup(n)}
}

// TestHeaderNamesQuoted: a header name with control characters is not
// echoed by the error that rejects it (an invalid name may hold a
// secret), which names the byte at fault; the config's String quotes it.
func TestHeaderNamesQuoted(t *testing.T) {
	bad := "X-\x1b[31mEvil"
	_, err := newPyroscope(PyroscopeConfig{URL: "http://h", Headers: map[string]string{bad: "v"}})
	if err == nil || strings.Contains(err.Error(), "\x1b") || strings.Contains(err.Error(), "Evil") || !strings.Contains(err.Error(), "invalid header name of 11 bytes: byte 2 is 0x1b") {
		t.Errorf("error %v", err)
	}
	s := PyroscopeConfig{URL: "http://h", Headers: map[string]string{bad: "v"}}.String()
	if strings.Contains(s, "\x1b") || !strings.Contains(s, `"X-\x1b[31mEvil"=REDACTED`) {
		t.Errorf("String %s", s)
	}
	if _, err := parseOTELList("X-\x01=%zz"); err == nil || strings.Contains(err.Error(), "\x01") {
		t.Errorf("error %v", err)
	}
}
