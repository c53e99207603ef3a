package arenaprof_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof"
	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/meantest"
	"github.com/arenaprof/arenaprof/report"
)

type order struct {
	id    int64
	items [6]int64
}

// allocOrders allocates n orders of 56 bytes each.
func allocOrders(a *arena.Arena, n int) {
	for i := range n {
		arena.New[order](a).id = int64(i)
	}
}

// setMeanBytes sets the sampling mean for the rest of tb (meantest.Set).
func setMeanBytes(tb testing.TB, n int64) { tb.Helper(); meantest.Set(tb, n) }

// TestStartServesAndWrites: one call mounts the handler and writes the
// profile of every interval into a directory; Stop flushes the last one.
func TestStartServesAndWrites(t *testing.T) {
	setMeanBytes(t, 1)
	dir := t.TempDir()
	mux := http.NewServeMux()
	s, err := arenaprof.Start(arenaprof.Config{
		AppName: "shop", Mux: mux, Dir: dir, NoRuntimeProfiles: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	a := arena.NewArena()
	allocOrders(a, 100)

	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := http.Get(srv.URL + arenaprof.HandlerPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	prof, err := report.Parse(bytes.NewReader(body), 0)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	if got := prof.Sample[0].Value[export.IndexAllocSamples]; len(prof.Sample) != 1 || got != 100 {
		t.Errorf("handler profile: %d samples, %d events", len(prof.Sample), got)
	}

	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	var events int64
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := report.Parse(bytes.NewReader(data), 0)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, smp := range p.Sample {
			events += smp.Value[export.IndexAllocSamples]
		}
	}
	if events != 100 {
		t.Errorf("the directory's profiles (%v) hold %d events, want 100", files, events)
	}
	a.Free()
}

func TestStartErrors(t *testing.T) {
	taken := http.NewServeMux()
	taken.Handle(arenaprof.HandlerPath, http.NotFoundHandler())
	for _, tc := range []struct {
		name string
		cfg  arenaprof.Config
		want string
	}{
		{"no app name", arenaprof.Config{Dir: t.TempDir()}, "AppName"},
		{"bad url", arenaprof.Config{AppName: "x", PyroscopeURL: "ftp://h"}, "http"},
		{"bad buckets", arenaprof.Config{MaxBuckets: -1}, "bucket"},
		{"mux taken", arenaprof.Config{Mux: taken}, arenaprof.HandlerPath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := arenaprof.Start(tc.cfg)
			if err == nil {
				s.Stop(context.Background())
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
		})
	}
	// Nothing is left running: sampling is off again.
	if hooks.Current().MeanBytes != 0 {
		t.Error("a failed Start left sampling on")
	}
}

// TestStartPyroscope pushes through the one-call setup to the real
// Pyroscope server named by ARENAPROF_PYROSCOPE_URL (.ci/run starts one)
// and checks that the server lists the service's arena profile.
func TestStartPyroscope(t *testing.T) {
	url := os.Getenv("ARENAPROF_PYROSCOPE_URL")
	if url == "" {
		t.Skip("ARENAPROF_PYROSCOPE_URL is not set: no Pyroscope server to push to")
	}
	setMeanBytes(t, 64)
	app := fmt.Sprintf("arenaprof-start-%d", time.Now().UnixNano())
	begin := time.Now()
	s, err := arenaprof.Start(arenaprof.Config{AppName: app, PyroscopeURL: url})
	if err != nil {
		t.Fatal(err)
	}
	a := arena.NewArena()
	allocOrders(a, 10000)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	a.Free()
	// The server indexes asynchronously: poll for the service name.
	want := app + ".arena"
	deadline := time.Now().Add(20 * time.Second)
	for {
		names, err := labelValues(url, "service_name", begin)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if n == want {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server lists services %v, not %q", names, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// labelValues asks a Pyroscope server for the values of a label.
func labelValues(base, name string, since time.Time) ([]string, error) {
	req, _ := json.Marshal(map[string]any{
		"name": name, "start": since.Add(-time.Minute).UnixMilli(), "end": time.Now().Add(time.Minute).UnixMilli(),
	})
	resp, err := http.Post(base+"/querier.v1.QuerierService/LabelValues", "application/json", bytes.NewReader(req))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("LabelValues: %s: %s", resp.Status, body)
	}
	var out struct{ Names []string }
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("LabelValues: %v: %s", err, body)
	}
	return out.Names, nil
}
