package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export/agent"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/profiler"
)

// leaksPod is what one pod process of the leaks test is told to do.
type leaksPod struct {
	URL, App, Pod string
	// Leak makes the pod leak leakObj objects at a steady rate.
	Leak bool
	Run  time.Duration
}

// leaksPodReport is what a leaks pod reports: the bytes it leaked and
// over which span, and its agent's stats.
type leaksPodReport struct {
	Leaked     int64
	Start, End time.Time
	Stats      agent.Stats
}

// Objects of the leaks test: 64 bytes, 256 bytes (churn), 128 bytes
// (a cache filled at the start).
type (
	leakObj  [8]uint64
	churnObj [32]uint64
	cacheObj [16]uint64
)

// leakObjs and churnObjs are allocated per tick of 100 ms: the leak is
// 1,600 x 64 B = 100 KiB per tick, about 1 MiB/s; the churn 2 MiB per
// tick, reset each tick.
const (
	leakObjs  = 1600
	churnObjs = 8192
	cacheObjs = 8192
)

// testLeaksFleet runs two pods as processes of their own, uploading
// their arena and Go heap in use every second for 16 s: one leaks an
// arena site at a known rate among churn and a filled cache, the other
// has the churn and the cache alone. arenaprof leaks -pyroscope must flag
// the leaking pod's site with an interval covering its rate, and nothing
// of the other pod's arena.
func testLeaksFleet(t *testing.T, cli, base string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	app := fmt.Sprintf("arenaprof_leaks_%d", time.Now().UnixNano())
	begin := time.Now().Add(-time.Second)
	pods := []leaksPod{{URL: base, App: app, Pod: "leaky", Leak: true, Run: 16 * time.Second}, {URL: base, App: app, Pod: "steady", Run: 16 * time.Second}}
	reports := make([]leaksPodReport, len(pods))
	errs := make([]error, len(pods))
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Go(func() { reports[i], errs[i] = runLeaksPod(ctx, t, p) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", pods[i].Pod, err)
		}
		if st := reports[i].Stats; st.Failed != 0 || st.Dropped != 0 || st.Uploaded != st.Collected {
			t.Fatalf("%s: agent stats %+v: every profile must be uploaded", pods[i].Pod, st)
		}
	}
	truth := float64(reports[0].Leaked) / reports[0].End.Sub(reports[0].Start).Seconds()
	until := time.Now().Add(time.Minute)

	type row struct {
		Key, Kind    string
		Rate, Lo, Hi float64
		Flagged      bool
		Pod          map[string]string
		InUseFirst   int64 `json:"inuse_first"`
		InUseLast    int64 `json:"inuse_last"`
	}
	var got struct {
		Rows []row
		Pods []struct {
			Labels    map[string]string
			Snapshots int
		}
		Queries int
	}
	// At 0.999 all groups together: a false failure of the steady pod's
	// check has probability 0.0005 at most per run; the leak's interval
	// misses its rate with probability 0.001 at most.
	args := []string{"leaks", "-pyroscope", base, "-from", begin.Format(time.RFC3339Nano), "-to", until.Format(time.RFC3339Nano),
		"-confidence", "0.999", "-json", selector(app)}
	var took time.Duration
	waitUntil(ctx, t, "arenaprof leaks -pyroscope reads both pods' uploads", func() error {
		start := time.Now()
		out, err := runCLIErr(cli, args...)
		took = time.Since(start)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(out, &got); err != nil {
			return err
		}
		if len(got.Pods) != 2 {
			return fmt.Errorf("%d pods read, want 2", len(got.Pods))
		}
		for _, p := range got.Pods {
			if p.Snapshots < 14 {
				return fmt.Errorf("pod %v: %d snapshots, want 14 or more", p.Labels, p.Snapshots)
			}
		}
		return nil
	})
	t.Logf("%d queries in %v; leak truth %.0f B/s", got.Queries, took.Round(time.Millisecond), truth)
	if testing.Verbose() {
		t.Logf("the table:\n%s", runCLI(t, cli, slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "-json" })...))
	}
	found := false
	for _, r := range got.Rows {
		pod := r.Pod["pod"]
		if r.Flagged || strings.HasSuffix(r.Key, "leaksPodLeak") {
			t.Logf("%s %s %s: %.0f B/s [%.0f, %.0f] flagged=%v", pod, r.Kind, r.Key, r.Rate, r.Lo, r.Hi, r.Flagged)
		}
		switch {
		case pod == "leaky" && r.Kind == "arena" && strings.HasSuffix(r.Key, ".leaksPodLeak"):
			found = true
			if !r.Flagged || !(r.Lo <= truth && truth <= r.Hi) {
				t.Errorf("the leaking site: %.0f B/s [%.0f, %.0f] flagged=%v, want flagged with the interval covering %.0f", r.Rate, r.Lo, r.Hi, r.Flagged, truth)
			}
		case pod == "steady" && r.Kind == "arena" && r.Flagged:
			t.Errorf("the steady pod's arena site %s flagged: %.0f B/s [%.0f, %.0f]", r.Key, r.Rate, r.Lo, r.Hi)
		case r.Kind == "arena" && pod == "leaky" && r.Flagged:
			t.Errorf("the leaking pod's control site %s flagged: %.0f B/s [%.0f, %.0f]", r.Key, r.Rate, r.Lo, r.Hi)
		}
	}
	if !found {
		t.Errorf("no arena row of the leaking pod's site leaksPodLeak among %d rows", len(got.Rows))
	}

	// By type, from the series alone: the leaked type flagged in the
	// leaking pod, covering the rate; no arena type of the steady pod.
	out := runCLI(t, cli, append(slices.Clone(args[:len(args)-1]), "-by", "type", selector(app))...)
	got.Rows = nil
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	found = false
	for _, r := range got.Rows {
		pod := r.Pod["pod"]
		switch {
		case pod == "leaky" && r.Kind == "arena" && strings.HasSuffix(r.Key, ".leakObj"):
			found = true
			t.Logf("by type, %s %s %s: %.0f B/s [%.0f, %.0f] flagged=%v (%d queries)", pod, r.Kind, r.Key, r.Rate, r.Lo, r.Hi, r.Flagged, got.Queries)
			if !r.Flagged || !(r.Lo <= truth && truth <= r.Hi) {
				t.Errorf("by type, the leaked type: %.0f B/s [%.0f, %.0f] flagged=%v, want flagged with the interval covering %.0f", r.Rate, r.Lo, r.Hi, r.Flagged, truth)
			}
		case r.Kind == "arena" && r.Flagged:
			t.Errorf("by type, %s's arena type %s flagged: %.0f B/s [%.0f, %.0f]", pod, r.Key, r.Rate, r.Lo, r.Hi)
		}
	}
	if !found {
		t.Errorf("by type, no arena row of the leaking pod's leakObj among %d rows", len(got.Rows))
	}
}

// runLeaksPod runs one pod of the leaks test as a process of its own.
func runLeaksPod(ctx context.Context, t *testing.T, p leaksPod) (leaksPodReport, error) {
	cfg, _ := json.Marshal(p)
	out := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestLeaksPod$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ARENAPROF_LEAKS_POD="+string(cfg), "ARENAPROF_LEAKS_REPORT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		return leaksPodReport{}, fmt.Errorf("%v\n%s", err, b)
	}
	var r leaksPodReport
	b, err := os.ReadFile(out)
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	return r, err
}

// leaksPodLeak allocates one tick's leaked objects in the arena that is
// never reset: the leaking site.
//
//go:noinline
func leaksPodLeak(a *arena.Arena) int64 {
	for range leakObjs {
		arena.New[leakObj](a)
	}
	return leakObjs * 64
}

// leaksPodChurn allocates one tick's garbage in an arena reset at once.
//
//go:noinline
func leaksPodChurn(a *arena.Arena) {
	for range churnObjs {
		arena.New[churnObj](a)
	}
	a.Reset()
}

// leaksPodCache fills the cache once.
//
//go:noinline
func leaksPodCache(a *arena.Arena) {
	for range cacheObjs {
		arena.New[cacheObj](a)
	}
}

// TestLeaksPod is one pod of the leaks test, run as a process of its own
// by testLeaksFleet; run directly, it has nothing to do.
func TestLeaksPod(t *testing.T) {
	env := os.Getenv("ARENAPROF_LEAKS_POD")
	if env == "" {
		t.Skip("a pod of the leaks test (TestPyroscopeEndToEnd/leaks) runs only as its process")
	}
	var p leaksPod
	if err := json.Unmarshal([]byte(env), &p); err != nil {
		t.Fatal(err)
	}
	hooks.SetMeanBytes(4096)
	prof, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer prof.Stop()
	rec := newRecorder(t, p.URL)
	a, err := agent.Start(agent.Config{
		AppName:     p.App,
		Labels:      map[string]string{"pod": p.Pod},
		Interval:    time.Second,
		Sources:     []agent.Source{agent.ProfilerSource(prof), agent.HeapSource()},
		Uploaders:   []agent.Uploader{rec.uploader()},
		Timeout:     5 * time.Second,
		BackoffBase: 50 * time.Millisecond,
		BackoffMax:  time.Second,
		QueueSize:   200,
	})
	if err != nil {
		t.Fatal(err)
	}
	cache, churn, leak := arena.NewArena(), arena.NewArena(), arena.NewArena()
	leaksPodCache(cache)
	r := leaksPodReport{Start: time.Now()}
	tick := time.NewTicker(100 * time.Millisecond)
	for time.Since(r.Start) < p.Run {
		<-tick.C
		if p.Leak {
			r.Leaked += leaksPodLeak(leak)
		}
		leaksPodChurn(churn)
	}
	tick.Stop()
	r.End = time.Now()
	runtime.GC()
	sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := a.Stop(sctx); err != nil {
		t.Fatal(err)
	}
	r.Stats = a.Stats()
	runtime.KeepAlive(cache)
	runtime.KeepAlive(leak)
	b, _ := json.Marshal(r)
	if err := os.WriteFile(os.Getenv("ARENAPROF_LEAKS_REPORT"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLeaksScale measures arenaprof leaks -pyroscope on a server holding
// PODS pods' arena uploads (160 sites, in use) every second for MINUTES
// minutes, as ARENAPROF_LEAKS_SCALE=PODSxMINUTES says (e.g. 4x60). It is
// a measurement, not part of go test ./... or .ci/run:
//
//	ARENAPROF_E2E=1 ARENAPROF_LEAKS_SCALE=4x60 go test -count=1 -run LeaksScale -v -timeout 1h ./export/agent
//
// The server is the start script's (ARENAPROF_PYROSCOPE_START picks
// v2.2.1), run to accept old profiles and a high ingestion rate, as for
// TestFleetScale. It logs the read's wall time and its queries.
func TestLeaksScale(t *testing.T) {
	spec := os.Getenv("ARENAPROF_LEAKS_SCALE")
	if spec == "" {
		t.Skip("a measurement: set ARENAPROF_LEAKS_SCALE=PODSxMINUTES (e.g. 4x60); see docs/leaks.md")
	}
	var pods, minutes int
	if _, err := fmt.Sscanf(spec, "%dx%d", &pods, &minutes); err != nil || pods < 1 || minutes < 1 {
		t.Fatalf("ARENAPROF_LEAKS_SCALE=%q: want PODSxMINUTES, e.g. 4x60", spec)
	}
	script := startScript(t)
	if script == "" {
		t.Fatal("no start script (../shared/pyroscope/start or ARENAPROF_PYROSCOPE_START)")
	}
	srv := startPyroscope(t, script, t.TempDir(), "-validation.reject-older-than=0",
		"-distributor.ingestion-rate-limit-mb=1000", "-distributor.ingestion-burst-size-mb=1000")
	cli := buildCLI(t)
	app := fmt.Sprintf("leaks_scale_%dx%d", pods, minutes)
	end := time.Now().Truncate(time.Second)
	begin := end.Add(-time.Duration(minutes) * time.Minute)
	steps := minutes * 60
	var variants [][]byte
	for v := range 16 {
		p := typicalArenaProfile(int64(v))
		p.TimeNanos = 0
		for _, s := range p.Sample {
			s.Value[2], s.Value[3] = s.Value[0], s.Value[1] // in use: what was allocated
		}
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			t.Fatal(err)
		}
		variants = append(variants, buf.Bytes())
	}
	py, err := agent.NewPyroscope(agent.PyroscopeConfig{URL: srv.url})
	if err != nil {
		t.Fatal(err)
	}
	defer py.(io.Closer).Close()
	start := time.Now()
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	total := int64(pods * steps)
	senders := 4
	if srv.v2 {
		senders = 64
	}
	for range senders {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= total {
					return
				}
				pod, step := int(i)%pods, int(i)/pods
				from := begin.Add(time.Duration(step) * time.Second)
				u := &agent.Upload{AppName: app, Labels: map[string]string{"pod": fmt.Sprintf("pod-%02d", pod)}, Profile: "arena",
					From: from, Until: from.Add(time.Second), Data: variants[int(i)%len(variants)]}
				var err error
				for try := 0; try < 20; try++ {
					if err = py.Upload(context.Background(), u); err == nil {
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
				if err != nil && failed.Add(1) < 5 {
					t.Errorf("upload %d: %v", i, err)
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d of %d uploads failed", failed.Load(), total)
	}
	t.Logf("loaded %d uploads (%d pods x %d min every 1 s) in %v", total, pods, minutes, time.Since(start).Round(time.Second))
	args := []string{"leaks", "-pyroscope", srv.url, "-from", begin.Add(-time.Second).Format(time.RFC3339), "-to", end.Add(time.Second).Format(time.RFC3339), "-json", selector(app)}
	for range 3 {
		t0 := time.Now()
		out := runCLI(t, cli, args...)
		took := time.Since(t0)
		var got struct {
			Pods []struct {
				Snapshots int
			}
			Rows    []json.RawMessage
			Queries int
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		snaps := 0
		for _, p := range got.Pods {
			snaps += p.Snapshots
		}
		t.Logf("leaks -pyroscope: %d pods, %d snapshots, %d rows, %d queries in %v", len(got.Pods), snaps, len(got.Rows), got.Queries, took.Round(time.Millisecond))
	}
}
