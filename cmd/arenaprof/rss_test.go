package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/internal/rss"
)

// rssServer serves the resident-memory profile of this process where
// arenaprof.Start mounts it.
func rssServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/debug/arenaprof/rss", export.RSSHandler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestRSSCommand(t *testing.T) {
	srv := rssServer(t)
	resp, err := http.Get(srv.URL + "/debug/arenaprof/rss")
	if err != nil {
		t.Fatal(err)
	}
	saved, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	file := filepath.Join(t.TempDir(), "rss.pb.gz")
	if err := os.WriteFile(file, saved, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{srv.URL, srv.URL + "/", srv.URL + "/debug/arenaprof/rss", file} {
		var out, errOut bytes.Buffer
		if code := run([]string{"rss", "-by", "stack", src}, &out, &errOut); code != 0 {
			t.Fatalf("arenaprof rss %s: exit %d: %s", src, code, errOut.String())
		}
		text := out.String()
		for _, want := range []string{"RSS ", "CLASS", "  heap\n", "      live\n", "  arena\n", "binary\n", "nongo\n", "unattributed\n"} {
			if !strings.Contains(text, want) {
				t.Errorf("arenaprof rss %s: no %q in\n%s", src, want, text)
			}
		}
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"rss", "-json", "-n", "0", file}, &out, &errOut); code != 0 {
		t.Fatalf("arenaprof rss -json: exit %d: %s", code, errOut.String())
	}
	var res struct {
		RSS     int64 `json:"rss_bytes"`
		Classes []struct {
			Class         string
			Bytes, Lo, Hi int64
		} `json:"classes"`
		Rows []struct {
			Class, Key    string
			Bytes, Lo, Hi int64
		} `json:"rows"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	var sum int64
	for _, c := range res.Classes {
		sum += c.Bytes
	}
	if len(res.Classes) != 11 || sum != res.RSS || res.RSS <= 0 {
		t.Errorf("-json: %d classes summing to %d, rss_bytes %d", len(res.Classes), sum, res.RSS)
	}
}

// TestRSSRefuses gives arenaprof rss what it cannot read: another kind of
// profile is refused naming what it is (exit 1), bad flags are usage
// errors (exit 2).
func TestRSSRefuses(t *testing.T) {
	dir := t.TempDir()
	heap := filepath.Join(dir, "heap.pb.gz")
	f, err := os.Create(heap)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"rss", heap}, 1, "not a resident-memory profile: it is a Go heap or allocs profile"},
		{[]string{"rss"}, 2, "one SOURCE"},
		{[]string{"rss", "-by", "type", heap}, 2, "use func or stack"},
		{[]string{"rss", "-confidence", "1", heap}, 2, "strictly between 0 and 1"},
		{[]string{"rss", filepath.Join(dir, "missing")}, 1, "no such file"},
	} {
		var out, errOut bytes.Buffer
		code := run(c.args, &out, &errOut)
		if code != c.code || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("arenaprof %s: exit %d, %q; want exit %d and %q", strings.Join(c.args, " "), code, errOut.String(), c.code, c.want)
		}
	}
}

// TestRSSPeak reads the peak of a service whose RSS is watched.
func TestRSSPeak(t *testing.T) {
	stop := rss.Watch()
	defer stop()
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(rss.WatchTick / 5) {
		if pk, _ := rss.CurrentPeak(); pk != nil {
			break // the watch's first read
		}
	}
	srv := rssServer(t)
	var out, errOut bytes.Buffer
	if code := run([]string{"rss", "-peak", srv.URL}, &out, &errOut); code != 0 {
		t.Fatalf("arenaprof rss -peak: exit %d: %s", code, errOut.String())
	}
	if !strings.HasPrefix(out.String(), "peak: the highest RSS seen since ") {
		t.Errorf("no peak heading:\n%s", out.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run([]string{"rss", "-peak", "rss.pb.gz"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "give its URL") {
		t.Errorf("-peak on a file: exit %d, %q", code, errOut.String())
	}
}
