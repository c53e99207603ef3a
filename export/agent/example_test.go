package agent_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/arenaprof/arenaprof/export/agent"
	"github.com/arenaprof/arenaprof/profiler"
)

// A service writes its arena, heap and wall-clock profiles to a directory
// every interval; stopping the agent writes the last partial interval.
func Example() {
	dir, err := os.MkdirTemp("", "profiles")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	prof, err := profiler.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer prof.Stop()

	dest, err := agent.NewDir(agent.DirConfig{Path: dir, MaxFiles: 1000})
	if err != nil {
		log.Fatal(err)
	}
	a, err := agent.Start(agent.Config{
		AppName:   "shop",
		Labels:    map[string]string{"env": "prod"},
		Interval:  15 * time.Second,
		Sources:   []agent.Source{agent.ProfilerSource(prof), agent.HeapSource(), agent.WallSource()},
		Uploaders: []agent.Uploader{dest},
	})
	if err != nil {
		log.Fatal(err)
	}

	// ... the service runs ...

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Stop(ctx); err != nil {
		log.Fatal(err)
	}
	s := a.Stats()
	files, _ := filepath.Glob(filepath.Join(dir, "*-shop-env=prod-*.pb.gz"))
	fmt.Printf("collected %d, uploaded %d, failed %d, files %d\n", s.Collected, s.Uploaded, s.Failed, len(files))
	// Output: collected 3, uploaded 3, failed 0, files 3
}

// Pushing to a Pyroscope-compatible server, with a tenant and a token.
func ExampleNewPyroscope() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println(r.Method, r.URL.Path, r.URL.Query().Get("name"), r.Header.Get("X-Scope-OrgID"))
	}))
	defer srv.Close()

	py, err := agent.NewPyroscope(agent.PyroscopeConfig{
		URL:         srv.URL,
		TenantID:    "team-a",
		BearerToken: "secret-token",
	})
	if err != nil {
		log.Fatal(err)
	}
	a, err := agent.Start(agent.Config{
		AppName:   "shop",
		Labels:    map[string]string{"region": "eu-west-1"},
		Sources:   []agent.Source{agent.HeapSource()},
		Uploaders: []agent.Uploader{py},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := a.Stop(context.Background()); err != nil {
		log.Fatal(err)
	}
	fmt.Println("uploaded", a.Stats().Uploaded)
	// Output:
	// POST /ingest shop{memory=heap,region=eu-west-1} team-a
	// uploaded 1
}

// Pushing OpenTelemetry profiles over OTLP/HTTP, to a Collector or to
// Pyroscope's own OTLP endpoint. What OTLPConfig leaves unset comes from
// the OTEL_EXPORTER_OTLP_* variables.
func ExampleNewOTLP() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println(r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("Content-Encoding"))
	}))
	defer srv.Close()

	o, err := agent.NewOTLP(agent.OTLPConfig{URL: srv.URL})
	if err != nil {
		log.Fatal(err)
	}
	a, err := agent.Start(agent.Config{
		AppName:   "shop",
		Sources:   []agent.Source{agent.HeapSource()},
		Uploaders: []agent.Uploader{o},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := a.Stop(context.Background()); err != nil {
		log.Fatal(err)
	}
	fmt.Println("uploaded", a.Stats().Uploaded)
	// Output:
	// POST /v1development/profiles application/x-protobuf gzip
	// uploaded 1
}
