package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
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
	waitUntil(ctx, t, "arenaprof leaks -pyroscope reads both pods' uploads", func() error {
		out, err := runCLIErr(cli, args...)
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
	t.Logf("%d queries; leak truth %.0f B/s", got.Queries, truth)
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
