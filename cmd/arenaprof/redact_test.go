package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	pprofhttp "net/http/pprof"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/report"
)

// TestFetchErrorsRedactPassword: no fetch error shows the URL's password,
// whether the server refuses, is unreachable, or the URL is malformed.
func TestFetchErrorsRedactPassword(t *testing.T) {
	const password = "hunter2pass"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusNotFound)
	}))
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	srvURL := srv.URL
	defer srv.Close()
	for _, raw := range []string{
		strings.Replace(srvURL, "http://", "http://admin:"+password+"@", 1) + "/debug/arenaprof",
		strings.Replace(deadURL, "http://", "http://admin:"+password+"@", 1) + "/debug/arenaprof",
		"http://admin:" + password + "@host:bad port/x",
	} {
		_, err := loadArenaProfile(raw, report.ParseOptions{})
		if err == nil {
			t.Fatalf("%s: no error", raw)
		}
		if strings.Contains(err.Error(), password) {
			t.Errorf("password leaked: %v", err)
		}
	}
}

// TestTopPyroscopeEchoRedacted: `arenaprof top -pyroscope` against a
// server that echoes the request's Authorization header back in an
// error, in each form a server may use (the reported one: upper-cased, as
// `BEARER TOK&SECRET9`; JSON-escaped; percent-encoded), prints none of
// them.
func TestTopPyroscopeEchoRedacted(t *testing.T) {
	const token = "tok&Secret9"
	forms := []struct {
		name string
		form func(string) string
	}{
		{"as sent", func(s string) string { return s }},
		{"upper case", strings.ToUpper},
		{"JSON", func(s string) string { b, _ := json.Marshal(s); return strings.Trim(string(b), `"`) }},
		{"percent", url.QueryEscape},
		{"JSON, upper case", func(s string) string { b, _ := json.Marshal(strings.ToUpper(s)); return strings.Trim(string(b), `"`) }},
	}
	t.Setenv("ARENAPROF_TEST_TOKEN", token)
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprintf(w, `{"code":"unauthenticated","message":"invalid credentials %s"}`, f.form(r.Header.Get("Authorization")))
			}))
			defer srv.Close()
			var out, errb bytes.Buffer
			run([]string{"top", "-pyroscope", srv.URL, "-token-env", "ARENAPROF_TEST_TOKEN", `{service_name="x"}`}, &out, &errb)
			got := out.String() + errb.String()
			if !strings.Contains(got, "invalid credentials") {
				t.Fatalf("no server message in %q", got)
			}
			for _, g := range forms {
				if strings.Contains(got, g.form(token)) {
					t.Errorf("%s form of the token in %q", g.name, got)
				}
			}
		})
	}
}

// TestLeaksServicePasswordNowhere: `arenaprof leaks` on a service URL with
// user:password, against a service without the goroutine leak profile (or
// any other path), prints the password nowhere: not in the note, not in
// -json's goroutines_note, not in an error, with or without -seconds.
func TestLeaksServicePasswordNowhere(t *testing.T) {
	const password = "s3cretPW9"
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	base := strings.Replace(srv.URL, "http://", "http://alice:"+password+"@", 1)
	// A service serving its Go heap only: a whole read, with its notes.
	mux := http.NewServeMux()
	mux.Handle(serviceHeapPath, pprofhttp.Handler("heap"))
	heapOnly := httptest.NewServer(mux)
	defer heapOnly.Close()
	heapBase := strings.Replace(heapOnly.URL, "http://", "http://alice:"+password+"@", 1)
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"leaks", base}, 0},
		{[]string{"leaks", "-json", base}, 0},
		{[]string{"leaks", base + "/"}, 0},
		{[]string{"leaks", "-seconds", "0.7", "-every", "100ms", base}, 1},
		{[]string{"leaks", "-json", "-seconds", "0.7", "-every", "100ms", base}, 1},
		{[]string{"leaks", "-seconds", "0.7", "-every", "100ms", heapBase}, 0},
		{[]string{"leaks", "-json", "-seconds", "0.7", "-every", "100ms", heapBase}, 0},
		{[]string{"html", "-o", filepath.Join(t.TempDir(), "leaks.html"), "-leaks", "-seconds", "0.7", "-every", "100ms", heapBase}, 0},
	} {
		code, out, errOut := runCLI(c.args...)
		if c.args[0] == "html" {
			page, err := os.ReadFile(c.args[2])
			if err != nil {
				t.Fatal(err)
			}
			out += string(page)
		}
		if strings.Contains(out, password) || strings.Contains(errOut, password) {
			t.Errorf("%v: exit %d, the password printed:\nstdout: %s\nstderr: %s", c.args, code, out, errOut)
		}
		if code != c.code {
			t.Errorf("%v: exit %d, want %d: %s", c.args, code, c.code, errOut)
		} else if !strings.Contains(out+errOut, "alice:xxxxx@") {
			t.Errorf("%v: the service is not named, redacted:\n%s%s", c.args, out, errOut)
		}
	}
}

// TestDiffHeadingsRedacted: the headings of diff (sampled and live
// arenas) name their inputs with the URLs' passwords redacted.
func TestDiffHeadingsRedacted(t *testing.T) {
	const password = "s3cretPW9"
	opts := diffOptions{base: "http://alice:" + password + "@h:1/debug/arenaprof", next: "http://alice:" + password + "@h:2/debug/arenaprof"}
	for name, lines := range map[string][]string{
		"diff":     diffHeading(opts, &arenaProfile{facts: &pprofmt.Facts{}}, &arenaProfile{facts: &pprofmt.Facts{}}, &report.DiffResult{}),
		"holdings": holdingsDiffHeading(opts, "stack"),
	} {
		if s := strings.Join(lines, "\n"); strings.Contains(s, password) || !strings.Contains(s, "alice:xxxxx@h:2") {
			t.Errorf("%s heading: %s", name, s)
		}
	}
}
