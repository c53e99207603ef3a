package main

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/internal/testkit/memtest"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

func gzipBytes(data []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(data)
	zw.Close()
	return buf.Bytes()
}

// bombs are built once: a decoder bomb (64 MiB of empty Sample records,
// 2 bytes each on the wire and about 200 decoded, in ~64 KiB of gzip) and
// a gzip of 256 MiB of zeros (~256 KiB).
var bombs = sync.OnceValues(func() (decoder, zeros []byte) {
	return gzipBytes(bytes.Repeat([]byte{0x12, 0x00}, 32<<20)), gzipBytes(make([]byte, 256<<20))
})

// hostileMaxAlloc bounds the bytes the command may allocate refusing a bomb
// with the default bounds: the data it reads before the scan refuses it
// (a few MiB), the buffers of gzip and HTTP.
const hostileMaxAlloc = 64 << 20

// TestBombsRefusedBounded: bombs are refused through a file, standard
// input, a URL, a redirect and diff, with a message that names
// -max-memory, allocating a small part of what reading them would.
func TestBombsRefusedBounded(t *testing.T) {
	decoder, zeros := bombs()
	good := fixturePath(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/decoder":
			w.Write(decoder)
		case "/zeros":
			w.Write(zeros)
		case "/redirect":
			http.Redirect(w, r, "/decoder", http.StatusFound)
		}
	}))
	defer srv.Close()
	decoderFile := writeTemp(t, "decoder.pb.gz", decoder)
	zerosFile := writeTemp(t, "zeros.pb.gz", zeros)
	for _, tc := range []struct {
		name  string
		args  []string
		stdin []byte
		want  string
	}{
		{"decoder bomb, file", []string{"top", decoderFile}, nil, "-max-memory"},
		{"gzip of zeros, file", []string{"top", zerosFile}, nil, "not a profile"},
		{"gzip of zeros, -max-memory 64MiB", []string{"top", "-max-memory", "64MiB", zerosFile}, nil, "not a profile"},
		{"decoder bomb, stdin", []string{"top", "-"}, decoder, "standard input: reading it takes 7.25GiB of memory, more than -max-memory 512MiB; raise -max-memory (e.g. -max-memory 8GiB)"},
		{"decoder bomb, URL", []string{"top", srv.URL + "/decoder"}, nil, "-max-memory 512MiB"},
		{"gzip of zeros, URL", []string{"top", srv.URL + "/zeros"}, nil, "not a profile"},
		{"decoder bomb, redirect", []string{"top", srv.URL + "/redirect"}, nil, "-max-memory"},
		{"decoder bomb, diff NEW", []string{"diff", good, decoderFile}, nil, "-max-memory"},
		{"decoder bomb, diff BASE URL", []string{"diff", srv.URL + "/decoder", good}, nil, "-max-memory"},
		{"decoder bomb, small -max-memory", []string{"top", "-max-memory", "1MiB", decoderFile}, nil, "-max-memory 1MiB"},
		{"gzip of zeros, -max-bytes", []string{"top", "-max-bytes", "1MiB", "-max-memory", "1GiB", srv.URL + "/zeros"}, nil, "/zeros: not a profile: its data is no protobuf message and starts like no legacy profile (refused at -max-bytes 1MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.stdin != nil {
				old := stdin
				defer func() { stdin = old }()
				stdin = bytes.NewReader(tc.stdin)
			}
			var code int
			var out, errOut bytes.Buffer
			got := memtest.AllocDuring(func() { code = run(tc.args, &out, &errOut) })
			t.Logf("allocated %d bytes: %s", got, errOut.String())
			if code != 1 || !strings.Contains(errOut.String(), tc.want) || strings.Count(errOut.String(), "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want 1 and one line with %q", code, errOut.String(), tc.want)
			}
			if got > hostileMaxAlloc {
				t.Errorf("allocated %d bytes refusing a bomb, want at most %d", got, hostileMaxAlloc)
			}
			checkSuggestion(t, tc.args, errOut.String())
		})
	}
}

// shortHTTPTimeout makes the command give up on a server after d.
func shortHTTPTimeout(t *testing.T, d time.Duration) {
	old := httpBaseTimeout
	httpBaseTimeout = d
	t.Cleanup(func() { httpBaseTimeout = old })
}

// TestHostileServers: servers that trickle, never end, loop, answer HTML,
// send terminal escapes, echo the credentials sent or send huge headers
// get a one-line error, within the timeout and a bounded allocation, that
// quotes nothing raw and no credential.
func TestHostileServers(t *testing.T) {
	shortHTTPTimeout(t, 1500*time.Millisecond)
	const (
		user     = "admin"
		password = "hunter2pass"
		token    = "tok3nSecretValue"
		sig      = "s1gnatureValue"
	)
	basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	escapes := "\x1b]0;pwned\x07\x1b[2J\x1b[31mred\r\x9b1m\u202eevil\u2066"
	mux := http.NewServeMux()
	mux.HandleFunc("/trickle", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		for {
			if _, err := w.Write([]byte{0x0a}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	mux.HandleFunc("/endless-zeros", func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 64<<10)
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/endless-records", func(w http.ResponseWriter, r *http.Request) {
		// An unknown field, repeated: nothing to decode, so only the
		// data's own size counts.
		chunk := bytes.Repeat([]byte{0xa0, 0x06, 0x01}, 20000)
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop?access_token="+token, http.StatusFound)
	})
	mux.HandleFunc("/redirect-token", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/echo?X-Amz-Signature="+sig, http.StatusFound)
	})
	mux.HandleFunc("/html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body><h1>Please sign in</h1>"+strings.Repeat("<p>lorem ipsum</p>", 500)+"</body></html>")
	})
	mux.HandleFunc("/html404", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<html><body><h1>Not Found</h1><script>"+escapes+"</script></body></html>")
	})
	mux.HandleFunc("/escapes", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, escapes+strings.Repeat("x", 10000))
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "denied: Authorization=%q query=%s url=%s\n", r.Header.Get("Authorization"), r.URL.RawQuery, r.URL.String())
	})
	mux.HandleFunc("/huge-header", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Junk", strings.Repeat("a", 1<<20))
		w.WriteHeader(http.StatusOK)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	withCreds := strings.Replace(srv.URL, "http://", "http://"+user+":"+password+"@", 1)
	for _, tc := range []struct {
		name string
		url  string
		args []string
		want string
	}{
		{"trickle", srv.URL + "/trickle", nil, "did not arrive within 1.5s"},
		{"endless zeros", srv.URL + "/endless-zeros", nil, "-max-memory"},
		{"endless records", srv.URL + "/endless-records", []string{"-max-memory", "8MiB"}, "-max-memory 8MiB"},
		{"redirect loop", withCreds + "/loop", nil, "more than 5 redirects"},
		{"redirect adds a signature", withCreds + "/redirect-token?token=" + token, nil, "401 Unauthorized: denied"},
		{"HTML page", srv.URL + "/html", nil, "HTML page, not a profile (Sign in Please sign in lorem ipsum"},
		{"HTML 404", srv.URL + "/html404", nil, "404 Not Found: Not Found"},
		{"escapes", srv.URL + "/escapes", nil, "500 Internal Server Error:"},
		{"echoed credentials", withCreds + "/echo?api_key=" + token + "&Sig=" + sig + "&seconds=1", nil, "401 Unauthorized: denied: Authorization="},
		{"huge header", srv.URL + "/huge-header", nil, "cannot fetch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var code int
			var out, errOut bytes.Buffer
			args := append(append([]string{"top"}, tc.args...), tc.url)
			start := time.Now()
			got := memtest.AllocDuring(func() { code = run(args, &out, &errOut) })
			msg := errOut.String()
			t.Logf("%v, %d bytes allocated: %s", time.Since(start).Round(time.Millisecond), got, msg)
			if code != 1 || !strings.Contains(msg, tc.want) || strings.Count(msg, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want 1 and one line with %q", code, msg, tc.want)
			}
			for _, secret := range []string{password, token, sig, basic, "\x1b", "\x07", "\r", "\x9b", "\u202e", "\u2066", "<"} {
				if strings.Contains(msg, secret) {
					t.Errorf("stderr shows %q: %q", secret, msg)
				}
			}
			if len(msg) > 600 {
				t.Errorf("stderr is %d bytes long", len(msg))
			}
			if got > hostileMaxAlloc {
				t.Errorf("allocated %d bytes, want at most %d", got, hostileMaxAlloc)
			}
		})
	}
}

// TestRedactURL: passwords, lone user names and credential-like query values are hidden,
// other parameters kept.
func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://h:1/debug/arenaprof?seconds=5", "http://h:1/debug/arenaprof?seconds=5"},
		{"http://u:p4ss@h/x", "http://u:xxxxx@h/x"}, // the user name stays, as url.URL.Redacted keeps it
		{"http://t0ken@h/x", "http://xxxxx@h/x"},
		{"https://h/x?token=a&seconds=3&ACCESS_TOKEN=b&api_key=c&apikey=d&Password=e&passwd=f&secret=g&auth=h&signature=i&sig=j&X-Amz-Signature=k&X-Amz-Credential=l&X-Amz-Security-Token=m&key=n&client_secret=o",
			"https://h/x?token=xxxxx&seconds=3&ACCESS_TOKEN=xxxxx&api_key=xxxxx&apikey=xxxxx&Password=xxxxx&passwd=xxxxx&secret=xxxxx&auth=xxxxx&signature=xxxxx&sig=xxxxx&X-Amz-Signature=xxxxx&X-Amz-Credential=xxxxx&X-Amz-Security-Token=xxxxx&key=xxxxx&client_secret=xxxxx"},
		{"http://h/x?debug=1&name=a", "http://h/x?debug=1&name=a"},
	} {
		if got := redactText(tc.in); got != tc.want {
			t.Errorf("redactText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// A URL url.Parse refuses is redacted all the same.
	if got := redactText("see http://u:pw@host:bad port/x?token=zzz"); strings.Contains(got, "pw@") || strings.Contains(got, "zzz") {
		t.Errorf("unparsed URL: %q", got)
	}
}

// TestTermWriter: control characters, bidi controls and bytes that are not
// UTF-8 become U+FFFD; text, newlines, tabs and UTF-8 cut across writes
// pass.
func TestTermWriter(t *testing.T) {
	for _, tc := range []struct {
		writes []string
		want   string
	}{
		{[]string{"plain\ttext\n"}, "plain\ttext\n"},
		{[]string{"\x1b[2J\x07bell\r"}, "\uFFFD[2J\uFFFDbell\uFFFD"},
		{[]string{"a\u202eb\u2067c\u0085d\x7f"}, "a\uFFFDb\uFFFDc\uFFFDd\uFFFD"},
		{[]string{"caf\xc3", "\xa9 \xe2\x82", "\xac"}, "café €"},
		{[]string{"bad \xff\xc3(", ")"}, "bad \uFFFD\uFFFD()"},
		{[]string{"end \xe2\x82"}, "end \uFFFD"},
	} {
		var buf bytes.Buffer
		tw := &termWriter{w: &buf}
		for _, w := range tc.writes {
			tw.Write([]byte(w))
		}
		tw.Flush()
		if buf.String() != tc.want {
			t.Errorf("%q: got %q, want %q", tc.writes, buf.String(), tc.want)
		}
	}
}

// FuzzRedact checks that redaction and excerpts never panic, never show a
// registered secret or a terminal control character, and stay short.
func FuzzRedact(f *testing.F) {
	f.Add("http://u:pw@h/x?token=abc", []byte("echo pw abc \x1b[2J"))
	f.Add("http://h/?sig=%zz", []byte("<html>\u202e</html>"))
	f.Fuzz(func(t *testing.T, raw string, body []byte) {
		_ = redactText(raw)
		e := excerpt(body)
		if len(e) > excerptMax+3 {
			t.Fatalf("excerpt of %d bytes", len(e))
		}
		for _, r := range e {
			if unsafeRune(r) && r != '\uFFFD' {
				t.Fatalf("excerpt has %U", r)
			}
		}
	})
}

// checkSuggestion checks that a refusal at -max-memory that suggests a
// value suggests a larger one than given, and that one that says the input
// is no profile suggests none.
func checkSuggestion(t *testing.T, args []string, msg string) {
	t.Helper()
	given := int64(pprofmt.DefaultMaxMemory)
	for i, a := range args {
		if a == "-max-memory" {
			n, ok := parseByteSize(args[i+1])
			if !ok {
				t.Fatalf("bad -max-memory %q", args[i+1])
			}
			given = n
		}
	}
	_, sugg, ok := strings.Cut(msg, "e.g. -max-memory ")
	if strings.Contains(msg, "not a profile") {
		if ok {
			t.Errorf("%q: suggests a -max-memory for data that is no profile", msg)
		}
		return
	}
	if !ok {
		return
	}
	sugg, _, _ = strings.Cut(sugg, ")")
	if n, ok := parseByteSize(sugg); !ok || n <= given {
		t.Errorf("%q: suggests -max-memory %s, want more than the %d bytes given", msg, sugg, given)
	}
}
