package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
