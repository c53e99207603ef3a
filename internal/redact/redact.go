// Package redact removes credentials from what arenaprof prints: URLs
// (user information, credential-like query values) and the names that
// mark a value as a credential. The root package's Config, the agent's
// Pyroscope configuration and the CLI share it, so that one URL is
// redacted the same way wherever it is printed.
package redact

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
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

// Secrets is a set of credentials to remove from text a server may have
// echoed: an error page, a JSON error, a log line. A server echoes a
// credential as it was sent, or upper-cased (`BEARER TOK&SECRET9`), or
// escaped for its format: JSON (`tok\u0026Secret9`), percent-encoding in
// a URL or a form (`tok%26Secret9`, `+` for a space), HTML (`&amp;`).
// [Secrets.Replace] finds each credential under any mix of these forms,
// letters compared without case; the base64 of basic authentication is a
// credential of its own (add it). The zero value is an empty set, safe
// for concurrent use.
type Secrets struct {
	mu   sync.RWMutex
	list []string // longest first
}

// Add adds each non-empty secret to the set.
func (s *Secrets) Add(secrets ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range secrets {
		if x != "" && !slices.Contains(s.list, x) {
			s.list = append(s.list, x)
		}
	}
	// Longest first, so that "Bearer tok" goes before "tok".
	slices.SortStableFunc(s.list, func(a, b string) int { return len(b) - len(a) })
}

// Len returns the number of secrets in the set.
func (s *Secrets) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.list)
}

// Replace returns text with every occurrence of a secret of the set, in
// any of the forms Secrets describes, replaced by mark.
func (s *Secrets) Replace(text, mark string) string {
	s.mu.RLock()
	list := s.list
	s.mu.RUnlock()
	if len(list) == 0 || text == "" {
		return text
	}
	var b strings.Builder
	copied := 0 // text[:copied] is in b
	for i := 0; i < len(text); {
		end := -1
		for _, sec := range list {
			if e, ok := matchAt(text, i, sec); ok {
				end = e
				break
			}
		}
		if end < 0 {
			i++
			continue
		}
		b.WriteString(text[copied:i])
		b.WriteString(mark)
		i, copied = end, end
	}
	if copied == 0 {
		return text
	}
	b.WriteString(text[copied:])
	return b.String()
}

// matchAt reports whether secret occurs in text at i in an echoed form
// (see Secrets), and where its longest match ends. Each character of the
// secret may appear as itself (letters in either case; a space also as
// '+'), percent-encoded byte by byte, JSON-escaped (at any depth), or as
// an HTML character reference. Some texts read two ways (`\\\u005C` is
// `\\` then `\u005C`, or one escape nested twice), so every reading is
// followed: reach[j] holds the text positions after which secret[:j] has
// been read.
func matchAt(text string, i int, secret string) (end int, ok bool) {
	if !startsAt(text, i, secret) {
		return 0, false // the common case, without allocating
	}
	reach := make([][]int, len(secret)+1)
	reach[0] = []int{i}
	add := func(j, pos int) {
		if !slices.Contains(reach[j], pos) {
			reach[j] = append(reach[j], pos)
		}
	}
	for j := range len(secret) {
		sr, sn := utf8.DecodeRuneInString(secret[j:])
		for _, pos := range reach[j] {
			if pos >= len(text) {
				continue
			}
			if b, n := percentByte(text[pos:]); n > 0 && foldByte(b) == foldByte(secret[j]) {
				add(j+1, pos+n)
			}
			if j+sn > len(secret) || !utf8.RuneStart(secret[j]) {
				continue
			}
			for _, alt := range runeForms(text[pos:]) {
				if alt.n > 0 && foldRune(alt.r, sr) {
					add(j+sn, pos+alt.n)
				}
			}
		}
	}
	if len(reach[len(secret)]) == 0 {
		return 0, false
	}
	return slices.Max(reach[len(secret)]), true
}

// startsAt reports whether the first character of secret may begin at
// text[i]: as itself, or as the start of an escape.
func startsAt(text string, i int, secret string) bool {
	switch c := text[i]; c {
	case '%', '\\', '&', '+':
		return true
	default:
		if secret[0] < utf8.RuneSelf {
			return foldByte(c) == foldByte(secret[0])
		}
		return c >= utf8.RuneSelf
	}
}

// percentByte decodes a percent-encoded byte at the start of s: the byte
// and 3, or 0, 0.
func percentByte(s string) (byte, int) {
	if len(s) >= 3 && s[0] == '%' && isHex(s[1]) && isHex(s[2]) {
		return unhex(s[1])<<4 | unhex(s[2]), 3
	}
	return 0, 0
}

// runeForm is one reading of the start of a text: a rune and the bytes
// it takes (0: none).
type runeForm struct {
	r rune
	n int
}

// runeForms returns the readings of the start of s as one character: the
// character itself, a '+' as a space, a JSON escape (nested or a pair of
// backslashes), an HTML character reference.
func runeForms(s string) [4]runeForm {
	var f [4]runeForm
	r, n := utf8.DecodeRuneInString(s)
	f[0] = runeForm{r, n}
	switch s[0] {
	case '+':
		f[1] = runeForm{' ', 1}
	case '\\':
		f[1].r, f[1].n = jsonEscape(s)
		if len(s) >= 2 && s[1] == '\\' {
			f[2] = runeForm{'\\', 2}
		}
	case '&':
		f[1].r, f[1].n = htmlEntity(s)
	}
	return f
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// foldByte folds an ASCII letter to lower case.
func foldByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// foldRune reports whether a and b are equal under simple Unicode case
// folding.
func foldRune(a, b rune) bool {
	if a == b {
		return true
	}
	for r := unicode.SimpleFold(a); r != a; r = unicode.SimpleFold(r) {
		if r == b {
			return true
		}
	}
	return false
}

// jsonEscape decodes the JSON escape at the start of s (a backslash):
// the rune and its length, 0 if s does not start with one. A surrogate
// pair counts as one rune. The backslash may be escaped itself, any
// number of times (`\\u0026`: JSON quoted in JSON).
func jsonEscape(s string) (rune, int) {
	n := 0 // leading backslashes
	for n < len(s) && s[n] == '\\' {
		n++
	}
	if n == 0 || n == len(s) {
		if n >= 2 {
			return '\\', 2
		}
		return 0, 0
	}
	switch s[n] {
	case '"', '/':
		return rune(s[n]), n + 1
	case 'b':
		return '\b', n + 1
	case 'f':
		return '\f', n + 1
	case 'n':
		return '\n', n + 1
	case 'r':
		return '\r', n + 1
	case 't':
		return '\t', n + 1
	case 'u':
		r, ok := hex4(s[n+1:])
		if !ok {
			break
		}
		end := n + 5
		if utf16.IsSurrogate(r) && len(s) >= 2*end && s[end:end+n] == s[:n] && s[end+n] == 'u' {
			if lo, ok := hex4(s[end+n+1:]); ok {
				if p := utf16.DecodeRune(r, lo); p != utf8.RuneError {
					return p, 2 * end
				}
			}
		}
		return r, end
	}
	if n >= 2 {
		return '\\', 2 // an escaped backslash
	}
	return 0, 0
}

func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for k := range 4 {
		if !isHex(s[k]) {
			return 0, false
		}
		r = r<<4 | rune(unhex(s[k]))
	}
	return r, true
}

// htmlEntity decodes the HTML character reference at the start of s
// (an ampersand): the named ones HTML escapers write (&amp; &lt; &gt;
// &quot; &apos;) and numeric ones (&#38; &#x26;).
func htmlEntity(s string) (rune, int) {
	for _, e := range []struct {
		name string
		r    rune
	}{{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}} {
		if len(s) >= len(e.name) && strings.EqualFold(s[:len(e.name)], e.name) {
			return e.r, len(e.name)
		}
	}
	if len(s) < 4 || s[1] != '#' {
		return 0, 0
	}
	base, k := 10, 2
	if s[2] == 'x' || s[2] == 'X' {
		base, k = 16, 3
	}
	semi := strings.IndexByte(s[:min(len(s), k+8)], ';')
	if semi <= k {
		return 0, 0
	}
	n, err := strconv.ParseUint(s[k:semi], base, 21)
	if err != nil || n > unicode.MaxRune {
		return 0, 0
	}
	return rune(n), semi + 1
}
