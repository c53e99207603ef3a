package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// jsonString returns s JSON-escaped as encoding/json writes it (HTML
// characters as \u0026 and the like), without the quotes.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// percentAll percent-encodes every byte of s, in lower-case hex.
func percentAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02x", s[i])
	}
	return b.String()
}

// TestSecretsReplace redacts the reported token (tok&Secret9), a
// password with a space and non-ASCII letters, and basic auth's base64, in
// every form a server may echo them.
func TestSecretsReplace(t *testing.T) {
	const tok, pass = "tok&Secret9", "pä ss/Wörd+1"
	b64 := base64.StdEncoding.EncodeToString([]byte("user:" + pass))
	var s Secrets
	s.Add("Bearer "+tok, tok, pass, b64, "")
	cases := []struct {
		name, echo string
	}{
		{"as sent", "Bearer " + tok},
		{"upper case", strings.ToUpper("Bearer " + tok)},
		{"lower case", strings.ToLower(tok)},
		{"JSON", jsonString(tok)},
		{"JSON, upper case", jsonString(strings.ToUpper(tok))},
		{"JSON twice", jsonString(jsonString(`"` + tok))},
		{"query", url.QueryEscape(tok)},
		{"path", url.PathEscape(pass)},
		{"query, password", url.QueryEscape(pass)},
		{"every byte", percentAll(tok)},
		{"every byte, upper case", strings.ToUpper(percentAll(pass))},
		{"HTML", html.EscapeString(tok)},
		{"numeric HTML", "tok&#38;Secret9"},
		{"hex HTML", "tok&#x26;secret9"},
		{"password upper case", strings.ToUpper(pass)},
		{"password JSON", jsonString(pass)},
		{"JSON, every character", `\u0074\u006f\u006b\u0026\u0053\u0065\u0063\u0072\u0065\u0074\u0039`},
		{"base64", "Basic " + b64},
		{"base64 upper case", strings.ToUpper(b64)},
		{"base64 JSON", strings.ReplaceAll(b64, "/", `\/`)},
		{"base64 percent", url.QueryEscape(b64)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, text := range []string{c.echo, "401: bad credentials \"" + c.echo + "\" for x", `{"error":"` + c.echo + `"}`} {
				got := s.Replace(text, redacted)
				if strings.Contains(got, c.echo) || !strings.Contains(got, redacted) {
					t.Errorf("Replace(%q) = %q", text, got)
				}
			}
		})
	}
	for _, keep := range []string{"tok&Secret", "Secret9", "token expired", "%zz\\u12&amp", ""} {
		if got := s.Replace(keep, redacted); got != keep {
			t.Errorf("Replace(%q) = %q: nothing to redact", keep, got)
		}
	}
}

// echoForm writes secret as a server might echo it: each character, at
// random, as itself in either case, percent-encoded, JSON-escaped or as an
// HTML character reference.
func echoForm(r *rand.Rand, secret string) string {
	var b strings.Builder
	for _, c := range secret {
		switch r.IntN(7) {
		case 0:
			b.WriteString(strings.ToUpper(string(c)))
		case 1:
			b.WriteString(strings.ToLower(string(c)))
		case 2:
			b.WriteString(percentAll(string(c)))
		case 3:
			b.WriteString(strings.ToUpper(percentAll(string(c))))
		case 4:
			if c > 0xffff {
				b.WriteString(jsonString(string(c)))
			} else {
				fmt.Fprintf(&b, `\u%04X`, c)
			}
		case 5:
			fmt.Fprintf(&b, "&#%d;", c)
		default:
			b.WriteString(jsonString(string(c)))
		}
	}
	return b.String()
}

// FuzzSecretsEcho echoes a secret, in a random mix of the forms a server
// may use, inside random text: Replace leaves no trace of it.
func FuzzSecretsEcho(f *testing.F) {
	f.Add("tok&Secret9", "error: ", " rejected", uint64(1))
	f.Add("pä ss/Wörd+1", `{"message":"`, `"}`, uint64(2))
	f.Add("dXNlcjpwYXNz", "<p>", "</p>", uint64(3))
	f.Fuzz(func(t *testing.T, secret, before, after string, seed uint64) {
		if len(secret) < 3 || !utf8.ValidString(secret) {
			return
		}
		var s Secrets
		s.Add(secret)
		r := rand.New(rand.NewPCG(seed, 39))
		echo := echoForm(r, secret)
		got := s.Replace(before+echo+after, redacted)
		if strings.Contains(got, echo) {
			t.Fatalf("secret %q echoed as %q: still in %q", secret, echo, got)
		}
		// The secret as sent is gone too, unless the text around it (or
		// the mark) holds it again.
		if strings.Contains(got, secret) && !strings.Contains(before+redacted+after, secret) {
			t.Fatalf("secret %q echoed as %q: still in %q", secret, echo, got)
		}
	})
}
