package agent_test

import (
	"bytes"
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

// Types the fleet's pods allocate (sizes multiples of 8: the bytes an
// object takes from the arena are its size).
type (
	fleetSmall  struct{ a, b, c, d uint64 } // 32 bytes
	fleetMedium struct{ a, b, c, d, e, f uint64 }
	fleetLarge  [32]uint64 // 256 bytes
)

// fleetPod is what one pod process is told to do.
type fleetPod struct {
	URL, App, Pod, Version string
	Mean, Seed             uint64
	Rounds                 int
	Pause                  time.Duration
	// Objects of each type per round.
	Small, Medium, Large int
}

// truth returns the bytes the pod allocates per type suffix.
func (p fleetPod) truth() map[string]int64 {
	r := int64(p.Rounds)
	return map[string]int64{
		"fleetSmall":  r * int64(p.Small) * 32,
		"fleetMedium": r * int64(p.Medium) * 48,
		"fleetLarge":  r * int64(p.Large) * 256,
	}
}

// fleetPodReport is what a pod process reports when it is done.
type fleetPodReport struct {
	Stats       agent.Stats
	Pushed      map[string]map[string]int64 // by type, by sample type: uploads the server accepted
	Unconfirmed map[string]map[string]int64 // the same of uploads sent but not answered
	Accepted    []fleetAccepted             // each upload the server accepted
}

// fleetAccepted is one upload the server accepted: when, and its
// alloc_samples by type.
type fleetAccepted struct {
	At      time.Time
	Samples map[string]int64
}

// fleetConfidence is the confidence of each interval checked. Per run,
// three types' intervals from top and two unchanged types' ratios from
// diff can fail by chance: below 5 * 1e-7 < 1e-6.
const fleetConfidence = 1 - 1e-7

// testFleet runs several pods (processes: this test binary running
// TestFleetPod), each with its own pod and version labels and known true
// bytes per type, pushing to a server of its own that is restarted once
// while they run; then, through the CLI, top -pyroscope over every pod and
// the whole range must cover each type's true fleet total, and diff
// -pyroscope between the versions must flag exactly the type whose true
// bytes changed.
func testFleet(t *testing.T, script string) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute+serverSlack(t, script, 3))
	defer cancel()
	srv := startPyroscope(t, script, t.TempDir())
	t.Cleanup(func() {
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(srv.data, "server.log"))
			t.Logf("server log tail:\n%s", tail(log, 6000))
		}
	})
	cli := buildCLI(t)
	app := fmt.Sprintf("fleet_%d", time.Now().UnixNano())
	begin := time.Now().Add(-time.Minute)

	// v2 allocates twice the large objects of v1; the rest is the same.
	var pods []fleetPod
	for i, v := range []string{"v1", "v1", "v2", "v2"} {
		p := fleetPod{URL: srv.url, App: app, Pod: fmt.Sprintf("pod-%d", i), Version: v, Mean: 4096, Seed: uint64(2*i + 1),
			Rounds: 8, Pause: 500 * time.Millisecond, Small: 20_000, Medium: 8_000, Large: 1_000}
		if v == "v2" {
			p.Large *= 2
		}
		pods = append(pods, p)
	}
	reports := make([]fleetPodReport, len(pods))
	var wg sync.WaitGroup
	errs := make([]error, len(pods))
	for i, p := range pods {
		wg.Go(func() { reports[i], errs[i] = runFleetPod(ctx, t, p) })
	}
	// Restart the server while the pods push.
	time.Sleep(1500 * time.Millisecond)
	termAt := time.Now()
	srv.stop(t)
	downAt := time.Now()
	time.Sleep(3 * time.Second)
	srv.start(t)
	t.Logf("server restarted after %v down", time.Since(downAt).Round(100*time.Millisecond))
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", pods[i].Pod, err)
		}
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		// When each upload was accepted, against the restart: which were
		// lost tells why.
		for i, r := range reports {
			var at []string
			for _, u := range r.Accepted {
				at = append(at, fmt.Sprintf("%+.3fs", u.At.Sub(termAt).Seconds()))
			}
			t.Logf("%s: uploads accepted at %v from the SIGTERM (the server exited at %+.3fs)", pods[i].Pod, at, downAt.Sub(termAt).Seconds())
		}
	})
	end := time.Now().Add(time.Minute)

	// The fleet's truth and what the server accepted, per type and version.
	truth := map[string]map[string]int64{} // version, type suffix
	pushed := map[string]map[string]int64{}
	maybe := map[string]int64{}  // by suffix: sample events of unconfirmed uploads
	types := map[string]string{} // suffix, type label
	for i, p := range pods {
		r := reports[i]
		st := r.Stats
		if st.Failed != 0 || st.Dropped != 0 || st.Uploaded+st.Unconfirmed != st.Collected {
			t.Fatalf("%s: agent stats %+v: every profile must reach the server", p.Pod, st)
		}
		for typ, v := range r.Unconfirmed {
			for suffix := range p.truth() {
				if strings.HasSuffix(typ, "."+suffix) {
					maybe[suffix] += v["alloc_samples"]
				}
			}
		}
		for _, m := range []map[string]map[string]int64{truth, pushed} {
			if m[p.Version] == nil {
				m[p.Version] = map[string]int64{}
			}
		}
		for suffix, b := range p.truth() {
			truth[p.Version][suffix] += b
		}
		for typ, v := range r.Pushed {
			for suffix := range p.truth() {
				if strings.HasSuffix(typ, "."+suffix) {
					types[suffix] = typ
					pushed[p.Version][suffix] += v["alloc_samples"]
				}
			}
		}
		// An upload v1.19.3 accepted while it shut down may be lost: its
		// ingester flushes its heads on SIGTERM, then still answers 200 to
		// pushes (Ingester.Push checks no state) into heads already
		// flushed. Such uploads count as maybe stored. (v2.2.1 answers a
		// push once its segment is flushed: everything it accepted counts.)
		var late int
		for _, u := range r.Accepted {
			if srv.v2 || u.At.Before(termAt) || u.At.After(downAt) {
				continue
			}
			late++
			for typ, n := range u.Samples {
				for suffix := range p.truth() {
					if strings.HasSuffix(typ, "."+suffix) {
						pushed[p.Version][suffix] -= n
						maybe[suffix] += n
					}
				}
			}
		}
		t.Logf("%s (%s): %d uploads (%d accepted while the server shut down), %d retried, %d unconfirmed", p.Pod, p.Version, st.Uploaded, late, st.Retried, st.Unconfirmed)
	}
	all := fmt.Sprintf(`{service_name=%q}`, app)
	top := func(sel string) map[string]topRow { return topRows(t, cli, srv.url, sel, fleetConfidence, begin, end) }

	// The server holds every sample event of the uploads it accepted, and
	// may hold those of unconfirmed uploads (sent as it stopped) and of
	// uploads it accepted while shutting down: wait for it after the
	// restart.
	arenaSel := fmt.Sprintf(`{service_name=%q,memory="arena"}`, app)
	var rows map[string]topRow
	waitUntil(ctx, t, "the server's sample events equal those pushed", func() error {
		rows = top(arenaSel)
		for suffix, typ := range types {
			want := pushed["v1"][suffix] + pushed["v2"][suffix]
			if got := rows[typ].Samples; got < want || got > want+maybe[suffix] {
				return fmt.Errorf("%s: %d sample events stored, %d pushed and accepted, %d unconfirmed or accepted while the server shut down", typ, got, want, maybe[suffix])
			}
		}
		return nil
	})
	for suffix, typ := range types {
		tr := truth["v1"][suffix] + truth["v2"][suffix]
		r := rows[typ]
		// The truth is the pods' allocations; it is what the server holds
		// only if it kept every upload that may have been stored. Where
		// it dropped some (v1.19.3's uploads accepted while it shut
		// down: under load, a few per restart), the bytes it holds are
		// an unknown part of the truth, and its interval, rightly, need
		// not cover the whole: the check above (every accepted sample
		// event stored) is what holds there.
		if lost := pushed["v1"][suffix] + pushed["v2"][suffix] + maybe[suffix] - r.Samples; lost > 0 {
			t.Logf("%s: the server dropped %d of %d sample events that may have been stored (accepted while it shut down, or unconfirmed): the truth %d is not what it holds; its estimate %d [%.0f, %.0f] is not compared with it",
				typ, lost, maybe[suffix], tr, r.Bytes, r.Lo, r.Hi)
			continue
		}
		if float64(tr) < r.Lo || float64(tr) > r.Hi {
			t.Errorf("%s: fleet truth %d outside [%.0f, %.0f] (estimate %d, %d samples)", typ, tr, r.Lo, r.Hi, r.Bytes, r.Samples)
		}
		t.Logf("%s: fleet truth %d, estimate %d, interval (%.7f) [%.0f, %.0f], %d samples (%d of unconfirmed uploads, maybe stored)",
			typ, tr, r.Bytes, fleetConfidence, r.Lo, r.Hi, r.Samples, maybe[suffix])
	}
	// The sample tables of the README.
	for _, sel := range []string{arenaSel, all} {
		t.Logf("arenaprof top -pyroscope URL '%s':\n%s", sel,
			runCLI(t, cli, "top", "-pyroscope", srv.url, "-from", begin.Format(time.RFC3339), "-to", end.Format(time.RFC3339), "-confidence", "0.999999", "-n", "5", sel))
	}

	// Go heap uploads are read too, by function.
	heap := runCLI(t, cli, "top", "-pyroscope", srv.url, "-from", begin.Format(time.RFC3339Nano), "-to", end.Format(time.RFC3339Nano), "-n", "3",
		fmt.Sprintf(`{service_name=%q,memory="heap"}`, app))
	if !bytes.Contains(heap, []byte("FUNCTION")) || !bytes.Contains(heap, []byte("MemProfileRate")) {
		t.Errorf("top of the Go heap uploads:\n%s", heap)
	}

	// diff between the versions flags exactly the type that changed.
	var d struct {
		Rows []struct {
			Key         string
			Significant bool
			Ratio       *float64
			RatioLo     *float64 `json:"ratio_lo"`
			RatioHi     *float64 `json:"ratio_hi"`
		}
	}
	v1, v2 := fmt.Sprintf(`{service_name=%q,memory="arena",version="v1"}`, app), fmt.Sprintf(`{service_name=%q,memory="arena",version="v2"}`, app)
	out := runCLI(t, cli, "diff", "-pyroscope", srv.url, "-from", begin.Format(time.RFC3339Nano), "-to", end.Format(time.RFC3339Nano),
		"-confidence", fmt.Sprint(fleetConfidence), "-n", "0", "-json", v1, v2)
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("diff -json: %v: %s", err, out)
	}
	flagged := map[string]bool{}
	for _, r := range d.Rows {
		if r.Significant {
			flagged[r.Key] = true
		}
		if r.Ratio != nil {
			t.Logf("diff %s: ratio %.3f [%.3f, %v] significant %v", r.Key, *r.Ratio, *r.RatioLo, fmtPtr(r.RatioHi), r.Significant)
		}
	}
	for suffix, typ := range types {
		changed := truth["v1"][suffix] != truth["v2"][suffix]
		if flagged[typ] != changed {
			t.Errorf("diff v1 v2: %s flagged %v, its true bytes changed: %v (%d to %d)", typ, flagged[typ], changed, truth["v1"][suffix], truth["v2"][suffix])
		}
	}
	t.Logf("arenaprof diff -pyroscope URL '%s' '%s':\n%s", v1, v2,
		runCLI(t, cli, "diff", "-pyroscope", srv.url, "-from", begin.Format(time.RFC3339), "-to", end.Format(time.RFC3339), "-confidence", "0.999999", v1, v2))
}

func fmtPtr(x *float64) string {
	if x == nil {
		return "inf"
	}
	return fmt.Sprintf("%.3f", *x)
}

// topRow is a row of arenaprof top -json.
type topRow struct {
	Key     string
	Samples int64
	Bytes   int64
	Lo, Hi  float64
}

// topRows runs arenaprof top -pyroscope -json over sel and [begin, end]
// and returns its rows by key.
func topRows(t *testing.T, cli, url, sel string, confidence float64, begin, end time.Time) map[string]topRow {
	t.Helper()
	var res struct{ Rows []topRow }
	out := runCLI(t, cli, "top", "-pyroscope", url, "-from", begin.Format(time.RFC3339Nano), "-to", end.Format(time.RFC3339Nano),
		"-confidence", fmt.Sprint(confidence), "-n", "0", "-json", sel)
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("top -json: %v: %s", err, out)
	}
	m := map[string]topRow{}
	for _, r := range res.Rows {
		m[r.Key] = r
	}
	return m
}

// buildCLI builds cmd/arenaprof into a temporary directory, or returns
// $ARENAPROF_CLI, the CLI of this tree built once (.ci/run builds it
// there for both servers' end-to-end runs).
func buildCLI(t *testing.T) string {
	if bin := os.Getenv("ARENAPROF_CLI"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "arenaprof")
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "../../cmd/arenaprof")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the CLI: %v\n%s", err, out)
	}
	return bin
}

// runCLI runs the CLI and returns its standard output; it fails the test
// on a non-zero exit.
func runCLI(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("arenaprof %s: %v\n%s%s", strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes()
}

// runFleetPod runs one pod as a process of its own and returns its report.
func runFleetPod(ctx context.Context, t *testing.T, p fleetPod) (fleetPodReport, error) {
	cfg, _ := json.Marshal(p)
	out := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFleetPod$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ARENAPROF_FLEET_POD="+string(cfg), "ARENAPROF_FLEET_REPORT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fleetPodReport{}, fmt.Errorf("%v\n%s", err, b)
	}
	var r fleetPodReport
	b, err := os.ReadFile(out)
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	return r, err
}

// TestFleetPod is one pod of the fleet test, run as a process of its own
// by testFleet; run directly, it has nothing to do.
func TestFleetPod(t *testing.T) {
	env := os.Getenv("ARENAPROF_FLEET_POD")
	if env == "" {
		t.Skip("a pod of the fleet test (TestPyroscopeEndToEnd/fleet) runs only as its process")
	}
	var p fleetPod
	if err := json.Unmarshal([]byte(env), &p); err != nil {
		t.Fatal(err)
	}
	hooks.SetMeanBytes(int64(p.Mean))
	prof, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer prof.Stop()
	rec := newRecorder(t, p.URL)
	a, err := agent.Start(agent.Config{
		AppName:     p.App,
		Labels:      map[string]string{"pod": p.Pod, "version": p.Version},
		Interval:    500 * time.Millisecond,
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
	ar := arena.NewArena(arena.WithSeed(p.Seed, p.Seed+1))
	for range p.Rounds {
		for range p.Small {
			arena.New[fleetSmall](ar)
		}
		for range p.Medium {
			arena.New[fleetMedium](ar)
		}
		for range p.Large {
			arena.New[fleetLarge](ar)
		}
		ar.Reset()
		runtime.GC()
		time.Sleep(p.Pause)
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := a.Stop(sctx); err != nil {
		t.Fatal(err)
	}
	r := fleetPodReport{Stats: a.Stats(), Pushed: rec.pushedByType(t, "arena"), Unconfirmed: sumByType(t, rec.unconfirmed(), "arena")}
	for _, u := range rec.all() {
		if u.Profile == "arena" {
			samples := map[string]int64{}
			for typ, v := range sumByType(t, []recorded{u}, "arena") {
				samples[typ] = v["alloc_samples"]
			}
			r.Accepted = append(r.Accepted, fleetAccepted{At: u.at, Samples: samples})
		}
	}
	b, _ := json.Marshal(r)
	if err := os.WriteFile(os.Getenv("ARENAPROF_FLEET_REPORT"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
