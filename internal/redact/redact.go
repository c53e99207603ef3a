// Package redact removes credentials from what arenaprof prints: URLs
// (user information, credential-like query values) and the names that
// mark a value as a credential. The root package's Config, the agent's
// Pyroscope configuration and the CLI share it, so that one URL is
// redacted the same way wherever it is printed.
package redact

import (
	"net/url"
	"strings"
)

// Name reports whether a query parameter or a field named name carries a
// credential: token, access_token, key, api_key, apikey, password, passwd,
// secret, auth, signature, sig, session, X-Amz-Signature,
// X-Amz-Credential, X-Amz-Security-Token and the like, in any case.
func Name(name string) bool {
	n := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return -1
	}, name)
	switch n {
	case "key", "sig", "pass", "pw", "pwd", "jwt", "code":
		return true
	}
	for _, part := range []string{"token", "secret", "passw", "signature", "credential", "auth", "session"} {
		if strings.Contains(n, part) {
			return true
		}
	}
	return strings.HasSuffix(n, "key") // api_key, apikey, access_key, x-api-key
}

// URL returns raw with its credentials replaced by mark: the password of
// its user information (the whole user information when it has no
// password: a lone user name is usually a token), an opaque part
// ("scheme:user:password@host" parses as one), the values of query
// parameters that [Name] marks, in place and in order (the whole query
// when it does not parse), and the fragment. A URL that does not parse is
// redacted whole.
func URL(raw, mark string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL, " + mark + ")"
	}
	if u.Opaque != "" {
		u.Opaque = mark
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), mark)
		} else {
			u.User = url.User(mark)
		}
	}
	if u.RawQuery != "" {
		if _, err := url.ParseQuery(u.RawQuery); err != nil {
			u.RawQuery = mark
		} else {
			parts := strings.Split(u.RawQuery, "&")
			for i, p := range parts {
				name, _, hasValue := strings.Cut(p, "=")
				if n, err := url.QueryUnescape(name); err == nil && hasValue && Name(n) {
					parts[i] = name + "=" + mark
				}
			}
			u.RawQuery = strings.Join(parts, "&")
		}
	}
	if u.Fragment != "" {
		u.Fragment, u.RawFragment = mark, ""
	}
	return u.String()
}
