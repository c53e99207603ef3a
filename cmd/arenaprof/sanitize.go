package main

import (
	"encoding/base64"
	"io"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/arenaprof/arenaprof/internal/redact"
)

// What the command prints passes through two filters. Messages (errors,
// names of inputs) are redacted: a URL's password (or lone user name) and the values of its
// credential-like query parameters become "xxxxx", and so does any
// credential the command sent (a password, a token, the base64 of basic
// auth) wherever it appears, e.g. echoed in a server's error page. Then
// everything written to the terminal, tables included, is made inert: control
// characters (ESC sequences, BEL, CR, other C0 and C1 codes) and
// bidirectional overrides become U+FFFD, so neither a hostile server nor a
// hostile profile can retitle the window, clear the screen or reorder text.

// redacted replaces a secret in what the command prints.
const redacted = "xxxxx"

// secrets holds the credentials the command has sent or may send, to be
// replaced wherever they show up, in any form a server may echo them
// (upper-cased, JSON-escaped, percent-encoded: see redact.Secrets).
var secrets redact.Secrets

// addSecret records s as a credential; values shorter than 3 bytes are
// left alone, as replacing them would garble every message.
func addSecret(s string) {
	if len(s) >= 3 {
		secrets.Add(s)
	}
}

// registerURL records the credentials a request to u sends: the URL's user
// info (password, and the basic auth header made of it) and the values of
// its credential-like query parameters.
func registerURL(u *url.URL) {
	if u.User != nil {
		name := u.User.Username()
		pass, hasPass := u.User.Password()
		if hasPass {
			addSecret(pass)
		} else {
			addSecret(name) // a user name alone is usually a token
		}
		b64 := base64.StdEncoding.EncodeToString([]byte(name + ":" + pass))
		addSecret(b64)
		addSecret("Basic " + b64)
	}
	for name, vals := range u.Query() {
		if !redact.Name(name) {
			continue
		}
		for _, v := range vals {
			addSecret(v)
		}
	}
}

// redactURL returns u as it may be printed (see redact.URL).
func redactURL(u *url.URL) string { return redact.URL(u.String(), redacted) }

// urlInText finds the URLs in a message.
var urlInText = regexp.MustCompile(`(?i)\bhttps?://[^\s"'<>]*[^\s"'<>.,:;)]`)

// paramInText finds name=value pairs in a message, in or out of URLs.
var paramInText = regexp.MustCompile(`[A-Za-z0-9_.-]+=[^&\s"'<>;,]*[^&\s"'<>;,.:)]`)

// redactText returns s with its URLs redacted, the values of credential-like
// name=value pairs and every registered secret replaced.
func redactText(s string) string {
	s = urlInText.ReplaceAllStringFunc(s, func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil {
			return redactUnparsed(raw)
		}
		return redactURL(u)
	})
	s = paramInText.ReplaceAllStringFunc(s, func(kv string) string {
		name, _, _ := strings.Cut(kv, "=")
		if redact.Name(name) {
			return name + "=" + redacted
		}
		return kv
	})
	return secrets.Replace(s, redacted)
}

// redactUnparsed redacts a URL url.Parse refuses: everything between the
// scheme and an @ in its authority, and the values of credential-like
// query parameters.
func redactUnparsed(raw string) string {
	scheme, rest, _ := strings.Cut(raw, "://")
	auth, path, _ := strings.Cut(rest, "/")
	if at := strings.LastIndex(auth, "@"); at >= 0 {
		auth = redacted + auth[at:]
	}
	out := scheme + "://" + auth
	if path != "" || strings.Contains(rest, "/") {
		out += "/" + path
	}
	if base, q, ok := strings.Cut(out, "?"); ok {
		parts := strings.Split(q, "&")
		for i, p := range parts {
			if name, _, has := strings.Cut(p, "="); has && redact.Name(name) {
				parts[i] = name + "=" + redacted
			}
		}
		out = base + "?" + strings.Join(parts, "&")
	}
	return out
}

// unsafeRune reports whether r must not reach a terminal: C0 controls
// other than newline and tab, DEL, C1 controls, and the bidirectional
// marks, embeddings, overrides and isolates.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\n' && r != '\t'
	case r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f,
		r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return r == utf8.RuneError
}

// excerptMax bounds the part of a server's answer a message quotes.
const excerptMax = 200

// htmlTag matches a tag of an HTML page, to quote its text only.
var htmlTag = regexp.MustCompile(`<[^>]*>`)

// excerpt returns the start of a server's answer as it may be quoted in a
// one-line message: the first line of a text, or the text of an HTML page
// without its tags, every control character
// and run of white space turned into one space, credentials redacted, and
// cut to about excerptMax bytes on a character boundary.
func excerpt(body []byte) string {
	s := string(body)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "<") {
		s = htmlTag.ReplaceAllString(s, " ")
	} else {
		// A plain-text error's first line is its message (net/http/pprof,
		// http.Error); what follows is detail.
		s, _, _ = strings.Cut(t, "\n")
	}
	s = strings.Map(func(r rune) rune {
		if unsafeRune(r) && r != utf8.RuneError {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	s = redactText(s)
	if len(s) <= excerptMax {
		return s
	}
	cut := excerptMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// termWriter makes what it writes safe for a terminal: every unsafe rune
// and every byte that is not UTF-8 becomes U+FFFD. It holds back an
// incomplete UTF-8 sequence at the end of a write until the next one or
// Flush.
type termWriter struct {
	w     io.Writer
	carry []byte
	buf   []byte
}

func (t *termWriter) Write(p []byte) (int, error) {
	data := p
	if len(t.carry) > 0 {
		data = append(t.carry, p...)
		t.carry = nil
	}
	out := t.buf[:0]
	for i := 0; i < len(data); {
		c := data[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			out = append(out, c)
			i++
			continue
		}
		if c >= utf8.RuneSelf && !utf8.FullRune(data[i:]) {
			t.carry = append([]byte(nil), data[i:]...)
			break
		}
		r, n := utf8.DecodeRune(data[i:])
		if unsafeRune(r) {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, data[i:i+n]...)
		}
		i += n
	}
	t.buf = out
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what an incomplete UTF-8 sequence at the end held back, as
// U+FFFD.
// CarriageReturn writes a carriage return, which Write would replace: a
// line that updates in place (advise's countdown) starts with it.
func (t *termWriter) CarriageReturn() error {
	_, err := io.WriteString(t.w, "\r")
	return err
}

func (t *termWriter) Flush() error {
	if len(t.carry) == 0 {
		return nil
	}
	t.carry = nil
	_, err := io.WriteString(t.w, "\uFFFD")
	return err
}
