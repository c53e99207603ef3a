package export_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/buildlimit"
)

// TestUIHandler serves the live page: HTML with the security headers,
// the rows of the running profile, hostile label values as text, and
// 400 for bad parameters.
func TestUIHandler(t *testing.T) {
	setMeanBytes(t, 1)
	p := startProfiler(t)
	a := newTestArena(t, 9, hooks.NewLabels("endpoint", `<script>alert(1)</script>"'`+"\x1b[31m"))
	allocSmall(a, 10)
	h := export.UIHandler(p)
	for _, tc := range []struct {
		query string
		code  int
		want  string
	}{
		{"", 200, `data-key="`},
		{"by=func&sample=inuse", 200, "in-use bytes by func"},
		{"by=label=endpoint", 200, `data-key="&lt;script&gt;alert(1)&lt;/script&gt;&#34;&#39;&#x1b;[31m"`},
		{"by=stack", 200, "data-frame="},
		{"sample=x", 400, "bad sample parameter"},
		{"by=nope", 400, "unknown grouping"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/arenaprof/ui?"+tc.query, nil))
		body := rec.Body.String()
		if rec.Code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("?%s: status %d, want %d and %q in %.300s", tc.query, rec.Code, tc.code, tc.want, body)
			continue
		}
		if tc.code != 200 {
			continue
		}
		hd := rec.Result().Header
		csp := hd.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'sha256-") || !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe") {
			t.Errorf("?%s: Content-Security-Policy %q", tc.query, csp)
		}
		if hd.Get("Content-Type") != "text/html; charset=utf-8" || hd.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("?%s: headers %v", tc.query, hd)
		}
		if strings.Count(body, "<script") != 1 || !strings.Contains(body, `id="refresh" href="?`+strings.ReplaceAll(tc.query, "&", "&amp;")+`"`) {
			t.Errorf("?%s: want one script and a refresh link to the same query", tc.query)
		}
	}
}

// TestUIHandlerLimit: the live page waits for a build slot like the
// other handlers, and gets 429 with Retry-After when none frees up.
func TestUIHandlerLimit(t *testing.T) {
	p := startProfiler(t)
	l := buildlimit.New(1)
	if !l.Acquire(context.Background(), 0) {
		t.Fatal("no slot")
	}
	defer l.Release()
	h := buildlimit.Share(l, export.UIHandler(p))
	start := time.Now()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/arenaprof/ui", nil))
	if rec.Code != http.StatusTooManyRequests || rec.Result().Header.Get("Retry-After") == "" {
		t.Errorf("status %d, Retry-After %q; want 429 with Retry-After", rec.Code, rec.Result().Header.Get("Retry-After"))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refused after %v", d)
	}
}

// TestHandlers: the handler set holds every handler by its path, the
// live page among them, and mounts on a mux.
func TestHandlers(t *testing.T) {
	p := startProfiler(t)
	hs := export.Handlers(p)
	var paths []string
	mux := http.NewServeMux()
	for path, h := range hs {
		paths = append(paths, path)
		mux.Handle(path, h)
	}
	slices.Sort(paths)
	want := []string{"/debug/arenaprof", "/debug/arenaprof/arenas", "/debug/arenaprof/memory", "/debug/arenaprof/peak", "/debug/arenaprof/rss", "/debug/arenaprof/ui"}
	if !slices.Equal(paths, want) {
		t.Fatalf("paths %v, want %v", paths, want)
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/arenaprof/ui", nil))
	if rec.Code != 200 || !strings.HasPrefix(rec.Body.String(), "<!DOCTYPE html>") {
		t.Errorf("/debug/arenaprof/ui: status %d", rec.Code)
	}
}
