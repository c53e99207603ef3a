package redact

import (
	"net/url"
	"strings"
	"testing"
)

const redacted = "REDACTED"

// FuzzURL: URL never fails, and what it returns has no
// password but REDACTED, no credential-like query value but REDACTED, and
// a lone user name only as REDACTED.
func FuzzURL(f *testing.F) {
	for _, s := range []string{
		"", "http://pyroscope:4040", "https://u:p@h:1/x?token=t&a=b", "https://t0k@h/",
		"http:u:p@h", "http://h/?API_KEY=k&Key=2&x=%zz", "://bad", "http://h/#frag", "http://[::1]:4040/?access_token=a&access_token=b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		out := URL(raw, redacted)
		in, err := url.Parse(raw)
		if err != nil || raw == "" {
			return
		}
		got, err := url.Parse(out)
		if err != nil {
			t.Fatalf("URL(%q) = %q, which does not parse: %v", raw, out, err)
		}
		if in.User != nil {
			_, hasPw := in.User.Password()
			pw, gotPw := got.User.Password()
			switch {
			case hasPw && (!gotPw || pw != redacted):
				t.Errorf("URL(%q) = %q: password not redacted", raw, out)
			case !hasPw && got.User.Username() != redacted:
				t.Errorf("URL(%q) = %q: lone user name not redacted", raw, out)
			}
		}
		if in.Opaque != "" && got.Opaque != redacted {
			t.Errorf("URL(%q) = %q: opaque part kept", raw, out)
		}
		if q, err := url.ParseQuery(got.RawQuery); err == nil {
			for k, vs := range q {
				for _, v := range vs {
					if Name(k) && v != "" && v != redacted { // an empty value hides nothing
						t.Errorf("URL(%q) = %q: %s=%q kept", raw, out, k, v)
					}
				}
			}
		} else if got.RawQuery != redacted {
			t.Errorf("URL(%q) = %q: a query that does not parse is kept", raw, out)
		}
		if strings.ContainsAny(out, "\n\r") && !strings.ContainsAny(raw, "\n\r") {
			t.Errorf("URL(%q) = %q: a new line", raw, out)
		}
	})
}
