package agent_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/export/agent"
	"github.com/arenaprof/arenaprof/internal/estimate"
)

// TestOTLPEndToEnd runs the agent with the OTLP destination against a
// real Grafana Pyroscope server, which ingests OTLP profiles itself, and
// reads everything back through its query API:
//
//   - direct: the agent pushes OTLP/HTTP to the server;
//   - collector: the agent pushes to a real OpenTelemetry Collector
//     (tools/otelcol: OTLP receiver, OTLP/HTTP exporter, profiles on),
//     which forwards to the server.
//
// Either way the server stores the application under service_name=APP,
// arena memory under memory=arena with every arena sample type, the Go
// heap under memory=heap, the wall-clock and the CPU profiles; per type label, each
// stored arena sample type equals what was pushed, and the true bytes lie
// inside the intervals from the server's own alloc_samples and alloc_tail;
// arenaprof top -pyroscope reads those sums under the OTLP profile type
// names and gives the same intervals. Its subtest rss sends the
// resident-memory profile through the same destination and reads it back
// with arenaprof rss -pyroscope (testRSSFleet).
//
// A third part, spans, uploads samples that carry spans (the pprof labels
// span_id and span_name) through the Collector and directly: the encoder
// links each to its span, and the server keeps span_id per sample and
// span_name as a series label (see testSpansEndToEnd).
//
// A fourth part, mismatch, sends in the other profiles version than the
// server reads, through the Collector and (v1.19.3) directly: every upload
// fails (none is retried or dropped unseen) and the agent's
// Stats.LastError names the setting to change. Pyroscope v2.2.1 given
// v0.2.0 directly answers 200 and drops the profiles whose sample values
// it cannot read as attribute indices (its converter then finds no
// service name and converts nothing): the part logs what it stored, and
// the README says so.
//
// The server comes as for TestPyroscopeEndToEnd; the profiles version
// follows it: v0.2.0 for v1.19.3, v0.3.0 (the default) for v2.2.1. The
// Collector is the binary at ARENAPROF_OTELCOL (.ci/run builds the one
// matching the server once per run), else the test builds it itself, once,
// into the user's cache directory (minutes from a cold Go build cache):
// tools/otelcol (v0.147.0) for v1.19.3, tools/otelcol2 (v0.165.0) for
// v2.2.1.
func TestOTLPEndToEnd(t *testing.T) {
	base, _ := e2eServer(t)
	cli := buildCLI(t)
	version, other := "v0.2.0", "v0.3.0"
	if e2eV2(t) {
		version, other = other, version
	}
	col := startCollector(t, base)
	t.Run("direct", func(t *testing.T) { testOTLPEndToEnd(t, cli, base, base, version) })
	t.Run("collector", func(t *testing.T) { testOTLPEndToEnd(t, cli, base, col, version) })
	t.Run("spans", func(t *testing.T) {
		for _, via := range []struct{ name, url string }{{"collector", col}, {"direct", base}} {
			t.Run(via.name, func(t *testing.T) {
				up, err := agent.NewOTLP(agent.OTLPConfig{URL: via.url, ProfilesVersion: version})
				if err != nil {
					t.Fatal(err)
				}
				testSpansEndToEnd(t, cli, base, up, "space")
			})
		}
	})
	t.Run("mismatch", func(t *testing.T) {
		testOTLPMismatch(t, col, other, true)
		testOTLPMismatch(t, base, other, !e2eV2(t))
	})
}

// testOTLPMismatch runs the agent with an OTLP destination at base sending
// arena profiles in the profiles version the receiver does not read and,
// if refused, checks that no upload is lost silently: each fails, and
// Stats.LastError names the setting and the version to set. (A sample
// with exactly one attribute, such as a wall-clock sample of an agent
// without labels, can pass a reader of the other version misread: its one
// attribute index taken for its value, or the reverse; the README says
// so.)
func testOTLPMismatch(t *testing.T, base, version string, refused bool) {
	p, app := e2eProfiler(t, "otlpmismatch")
	up, err := agent.NewOTLP(agent.OTLPConfig{URL: base, ProfilesVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.(io.Closer).Close() })
	a, err := agent.Start(agent.Config{
		AppName:   app,
		Interval:  time.Second,
		Sources:   []agent.Source{agent.ProfilerSource(p)},
		Uploaders: []agent.Uploader{up},
	})
	if err != nil {
		t.Fatal(err)
	}
	live := e2eWorkload()
	time.Sleep(1500 * time.Millisecond) // at least one collection
	defer live.Free()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	st := a.Stats()
	want := "set OTLPConfig.ProfilesVersion (or ARENAPROF_OTLP_PROFILES_VERSION) to "
	if version == "v0.2.0" {
		want += "v0.3.0"
	} else {
		want += "v0.2.0"
	}
	if !refused {
		t.Logf("%s sent to %s: %d uploads, %d uploaded, %d failed (the receiver does not refuse it)", version, base, st.Collected, st.Uploaded, st.Failed)
		return
	}
	if st.Collected == 0 || st.Failed != st.Collected || st.Uploaded != 0 || st.Dropped != 0 || st.Retried != 0 {
		t.Errorf("stats %+v: every upload must fail at once", st)
	}
	if !strings.Contains(st.LastError, want) {
		t.Errorf("last error %q does not say %q", st.LastError, want)
	}
	t.Logf("%s sent to %s: %d of %d uploads failed; last error: %s", version, base, st.Failed, st.Collected, st.LastError)
}

// testOTLPEndToEnd runs the agent with an OTLP destination at otlpURL on
// the end-to-end workload and checks what the Pyroscope server at base
// stores, and what the CLI cli reads from it.
func testOTLPEndToEnd(t *testing.T, cli, base, otlpURL, version string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, app := e2eProfiler(t, "otlp")
	up, err := agent.NewOTLP(agent.OTLPConfig{URL: otlpURL, ProfilesVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.(io.Closer).Close() })
	rec := &recorder{py: up}
	begin, until := runE2EAgent(ctx, t, p, app, rec)
	truth, _ := e2eTruth(t, rec)

	// Pyroscope v1.19.3 names an OTLP profile's type after its period
	// type: the arena and Go heap profiles (space/bytes) are "space", the
	// wall-clock profile "wallclock".
	arenaIDs := arenaTypeIDs("space")
	// The CPU profile's samples/count type becomes process_cpu (its values
	// times the period), its cpu/nanoseconds type "cpu".
	wallID := "wallclock:wall:nanoseconds:wallclock:nanoseconds"
	cpuID := "process_cpu:cpu:nanoseconds:cpu:nanoseconds"
	waitUntil(ctx, t, "the server lists every profile type", func() error {
		ids, err := profileTypes(ctx, base, begin, until)
		if err != nil {
			return err
		}
		for _, want := range append(mapValues(arenaIDs), wallID, cpuID, "cpu:cpu:nanoseconds:cpu:nanoseconds") {
			if !ids[want] {
				return fmt.Errorf("profile type %s not listed (listed: %v)", want, mapKeys(ids))
			}
		}
		return nil
	})
	arenaSel := func(kv ...string) string { return selector(app, append([]string{"memory", "arena"}, kv...)...) }
	for what, q := range map[string][2]string{
		"heap": {arenaIDs["inuse_space"], selector(app, "memory", "heap")},
		"wall": {wallID, selector(app)},
		"cpu":  {cpuID, selector(app)},
	} {
		waitUntil(ctx, t, what+" profile stored", func() error {
			total, err := renderTotal(ctx, base, q[0], q[1], begin, until)
			if err == nil && total <= 0 {
				err = fmt.Errorf("%s%s is empty", q[0], q[1])
			}
			return err
		})
	}
	// The labels a reader of the sums needs are series labels: the type
	// and the sampling mean (sent as a string attribute).
	mean := uploadedMean(t, rec)
	waitUntil(ctx, t, "type and sampling_mean label values", func() error {
		vals, err := labelValues(ctx, base, "type", arenaSel(), begin, until)
		if err != nil {
			return err
		}
		for typ := range truth {
			if !slices.Contains(vals, typ) {
				return fmt.Errorf("type %q not among the server's label values %v", typ, vals)
			}
		}
		means, err := labelValues(ctx, base, "sampling_mean", arenaSel(), begin, until)
		if err == nil && !slices.Equal(means, []string{strconv.FormatInt(mean, 10)}) {
			err = fmt.Errorf("sampling_mean label values %v, want [%d]", means, mean)
		}
		return err
	})

	stored := checkArenaTypes(ctx, t, base, rec, arenaIDs, func(typ string) string { return arenaSel("type", typ) }, truth, begin, until)
	checkOTLPTop(t, cli, base, arenaSel(), stored, truth, mean, begin, until)
	// The Go heap and the stacks are read too.
	heap := runCLI(t, cli, "top", "-pyroscope", base, "-from", begin.Format(time.RFC3339Nano), "-to", until.Format(time.RFC3339Nano), "-n", "3",
		selector(app, "memory", "heap"))
	if !bytes.Contains(heap, []byte("FUNCTION")) || !bytes.Contains(heap, []byte("MemProfileRate")) {
		t.Errorf("top of the Go heap profiles:\n%s", heap)
	}
	var byFunc struct{ Total topRow }
	out := runCLI(t, cli, "top", "-pyroscope", base, "-from", begin.Format(time.RFC3339Nano), "-to", until.Format(time.RFC3339Nano),
		"-by", "func", "-json", arenaSel())
	if err := json.Unmarshal(out, &byFunc); err != nil {
		t.Fatalf("top -by func -json: %v: %s", err, out)
	}
	var samples int64
	for _, st := range stored {
		samples += st["alloc_samples"]
	}
	if byFunc.Total.Samples != samples {
		t.Errorf("top -by func: %d sample events, the server's series %d", byFunc.Total.Samples, samples)
	}
	// The resident-memory profile, through the same destination.
	t.Run("rss", func(t *testing.T) { testRSSFleet(t, cli, base, up) })
}

// checkOTLPTop runs arenaprof top -pyroscope over the arena profiles sel
// selects and checks, per type, that it read the server's sums (stored,
// by type and sample type) and that its interval is the one from those
// sums (so the truth inside it is the event checkArenaTypes checked, at no
// added risk of a false failure) and holds the true bytes.
func checkOTLPTop(t *testing.T, cli, base, sel string, stored map[string]map[string]int64, truth map[string]int64, mean int64, begin, until time.Time) {
	t.Helper()
	rows := topRows(t, cli, base, sel, e2eConfidence, begin, until)
	if len(rows) != len(truth) {
		t.Errorf("top -pyroscope: rows %v, want the types %v", mapKeys(rows), mapKeys(truth))
	}
	for _, typ := range mapKeys(truth) {
		r, st := rows[typ], stored[typ]
		iv, err := estimate.SingleMeanInterval(st["alloc_samples"], st["alloc_tail"], mean, e2eConfidence, estimate.WindowBoth)
		if err != nil {
			t.Fatal(err)
		}
		if r.Samples != st["alloc_samples"] || r.Bytes != st["alloc_space"] {
			t.Errorf("%s: top -pyroscope read %d sample events and %d bytes, the server stores %d and %d", typ, r.Samples, r.Bytes, st["alloc_samples"], st["alloc_space"])
		}
		if math.Abs(r.Lo-iv.Lo) > 1e-6*iv.Hi || math.Abs(r.Hi-iv.Hi) > 1e-6*iv.Hi {
			t.Errorf("%s: top -pyroscope interval [%.0f, %.0f], from the server's sums [%.0f, %.0f]", typ, r.Lo, r.Hi, iv.Lo, iv.Hi)
		}
		if tr := float64(truth[typ]); tr < r.Lo || tr > r.Hi {
			t.Errorf("%s: true bytes %d outside the interval [%.0f, %.0f] of top -pyroscope", typ, truth[typ], r.Lo, r.Hi)
		}
		t.Logf("%s: top -pyroscope: true %d, estimate %d, interval (%.7f) [%.0f, %.0f], %d samples", typ, truth[typ], r.Bytes, e2eConfidence, r.Lo, r.Hi, r.Samples)
	}
	t.Logf("arenaprof top -pyroscope URL '%s':\n%s", sel,
		runCLI(t, cli, "top", "-pyroscope", base, "-from", begin.Format(time.RFC3339), "-to", until.Format(time.RFC3339), "-confidence", "0.999999", sel))
}

// startCollector starts an OpenTelemetry Collector (the one matching the
// end-to-end server) on a free 127.0.0.1 port, forwarding profiles to the
// Pyroscope server at pyroscope, and
// returns the base URL of its OTLP/HTTP receiver. It is stopped when t
// ends.
func startCollector(t *testing.T, pyroscope string) string {
	bin := collectorBinary(t)
	ports := freePorts(t, 2)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "collector.yaml")
	if err := os.WriteFile(cfg, []byte(collectorConfig(ports[0], ports[1], pyroscope)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfg)
	logf, err := os.Create(filepath.Join(dir, "collector.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("collector log tail:\n%s", tail(b, 4000))
		}
	})
	// Ready when the receiver accepts connections.
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logf.Name())
			t.Fatalf("the collector does not listen on %s after 30 s: %v\nlog tail:\n%s", addr, err, tail(b, 4000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "http://" + addr
}

// collectorConfig is the Collector's pipeline: profiles in over OTLP
// (HTTP on httpPort, gRPC on grpcPort), out over OTLP/HTTP to Pyroscope,
// which serves OTLP at the same path as a Collector. The README shows the
// same pipeline.
func collectorConfig(httpPort, grpcPort int, pyroscope string) string {
	return fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
      grpc:
        endpoint: 127.0.0.1:%d
exporters:
  otlphttp/pyroscope:
    endpoint: %s
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    profiles:
      receivers: [otlp]
      exporters: [otlphttp/pyroscope]
`, httpPort, grpcPort, pyroscope)
}

// collectorBinary returns the Collector to run: ARENAPROF_OTELCOL, else
// tools/otelcol (tools/otelcol2 for Pyroscope v2) built once into the
// user's cache directory, under a name
// that changes with the module's go.mod, go.sum and main.go, so that a
// later run reuses it (the first build from a cold Go build cache takes
// minutes).
func collectorBinary(t *testing.T) string {
	if bin := os.Getenv("ARENAPROF_OTELCOL"); bin != "" {
		return bin
	}
	root := moduleRoot(t)
	mod := "otelcol"
	if e2eV2(t) {
		mod = "otelcol2"
	}
	dir := filepath.Join(root, "tools", mod)
	h := sha256.New()
	for _, name := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if root == "" || err != nil {
			t.Fatalf("tools/%s not found in the repository: %v", mod, err)
		}
		h.Write(b)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	bin := filepath.Join(cache, "arenaprof-test", fmt.Sprintf("%s-%x", mod, h.Sum(nil)[:8]))
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
		return bin
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(t.TempDir(), mod)
	start := time.Now()
	cmd := exec.Command("go", "build", "-o", tmp, ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		var lines []string
		for sc.Scan() && len(lines) < 30 {
			lines = append(lines, sc.Text())
		}
		t.Fatalf("building tools/%s: %v\n%s", mod, err, strings.Join(lines, "\n"))
	}
	t.Logf("built tools/%s in %s", mod, time.Since(start).Round(time.Second))
	// Copy, then rename: the rename is atomic, so a concurrent run never
	// starts a half-written binary.
	data, err := os.ReadFile(tmp)
	if err != nil {
		t.Fatal(err)
	}
	part := bin + fmt.Sprintf(".%d.part", os.Getpid())
	if err := os.WriteFile(part, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(part, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}
