package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/export/agent"
)

// TestFleetScale measures arenaprof top -pyroscope on a server holding a
// simulated fleet: PODS pods uploading a typical arena profile (160 sites,
// 8 types) every 15 s for HOURS hours, as ARENAPROF_FLEET_SCALE=PODSxHOURS
// says (e.g. 50x24). It is a measurement, not part of go test ./... or
// .ci/run (loading a fleet-day takes tens of minutes):
//
//	ARENAPROF_FLEET_SCALE=50x24 go test -count=1 -run FleetScale -v -timeout 3h ./export/agent
//
// The server is the real one of the start script (v1.19.3 by default; set
// ARENAPROF_PYROSCOPE_START to the absolute path of ../shared/pyroscope2/start
// for v2.2.1), run with -validation.reject-older-than=0 (the default
// refuses profiles older than an hour, so a simulated past day could not be
// loaded) and its per-tenant ingestion rate limit raised (the default,
// 4 MB/s, would take the load far longer); its query limits are left at
// their defaults. The uploads go through agent.NewPyroscope's destination,
// as an agent sends them. Then the CLI reads subsets (pods by regular
// expression, hours by -from) and the whole, by type and by function,
// under /usr/bin/time: wall time and peak RSS.
func TestFleetScale(t *testing.T) {
	spec := os.Getenv("ARENAPROF_FLEET_SCALE")
	if spec == "" {
		t.Skip("a measurement: set ARENAPROF_FLEET_SCALE=PODSxHOURS (e.g. 50x24); see BENCHMARKS.md")
	}
	ps, hs, ok := strings.Cut(spec, "x")
	pods, err1 := strconv.Atoi(ps)
	hours, err2 := strconv.Atoi(hs)
	if !ok || err1 != nil || err2 != nil || pods < 1 || hours < 1 {
		t.Fatalf("ARENAPROF_FLEET_SCALE=%q: want PODSxHOURS, e.g. 50x24", spec)
	}
	script := startScript(t)
	if script == "" {
		t.Fatal("no start script (../shared/pyroscope/start or ARENAPROF_PYROSCOPE_START)")
	}
	// Loading a simulated past needs the server to accept old profiles
	// and a far higher ingestion rate than the per-tenant default.
	srv := startPyroscope(t, script, t.TempDir(), "-validation.reject-older-than=0",
		"-distributor.ingestion-rate-limit-mb=1000", "-distributor.ingestion-burst-size-mb=1000")
	cli := buildCLI(t)

	app := fmt.Sprintf("scale_%dx%d", pods, hours)
	end := time.Now().Truncate(15 * time.Second)
	begin := end.Add(-time.Duration(hours) * time.Hour)
	const every = 15 * time.Second
	steps := int(end.Sub(begin) / every)
	// A few encoded variants, timestamps from the request (TimeNanos 0:
	// the server takes the upload's from).
	var variants [][]byte
	for v := range 16 {
		p := typicalArenaProfile(int64(v))
		p.TimeNanos = 0
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
	ctx := context.Background()
	start := time.Now()
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	total := int64(pods * steps)
	// v2's segment writer answers a write once the segment holding it is
	// flushed (every 500 ms), so its ingest rate grows with the requests
	// in flight; v1's ingester answers at once and four keep it busy.
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
				from := begin.Add(time.Duration(step) * every)
				u := &agent.Upload{AppName: app, Labels: map[string]string{"pod": fmt.Sprintf("pod-%02d", pod)}, Profile: "arena",
					From: from, Until: from.Add(every), Data: variants[int(i)%len(variants)]}
				var err error
				for try := 0; try < 20; try++ {
					if err = py.Upload(ctx, u); err == nil {
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
	t.Logf("loaded %d uploads (%d pods x %d h every 15 s) in %v", total, pods, hours, time.Since(start).Round(time.Second))

	type point struct{ pods, hours int }
	grid := []point{{pods, hours}}
	for _, p := range []int{1, pods / 5, pods / 2} {
		if p >= 1 && p < pods {
			grid = append(grid, point{p, hours})
		}
	}
	for _, h := range []int{1, hours / 4, hours / 2} {
		if h >= 1 && h < hours {
			grid = append(grid, point{pods, h})
		}
	}
	grid = slices.Compact(grid)
	for _, run := range []struct{ by, par string }{{"type", "1"}, {"type", "2"}, {"func", "1"}, {"func", "2"}} {
		by := run.by
		for _, g := range grid {
			var podRE []string
			for i := range g.pods {
				podRE = append(podRE, fmt.Sprintf("pod-%02d", i))
			}
			sel := fmt.Sprintf(`{service_name=%q,pod=~%q}`, app, strings.Join(podRE, "|"))
			from := end.Add(-time.Duration(g.hours) * time.Hour)
			// Wait for the server to have indexed the whole load.
			var out []byte
			var wall, rss string
			for try := 0; ; try++ {
				cmd := exec.Command("/usr/bin/time", "-f", "%e %M", cli, "top", "-pyroscope", srv.url, "-by", by, "-parallel", run.par, "-n", "3", "-json",
					"-from", from.Add(-time.Second).Format(time.RFC3339), "-to", end.Add(time.Second).Format(time.RFC3339), sel)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
				f := strings.Fields(lines[len(lines)-1])
				if err != nil || len(f) != 2 {
					t.Fatalf("top by %s, %d pods x %d h: %v\n%s%s", by, g.pods, g.hours, err, stdout.Bytes(), stderr.Bytes())
				}
				out, wall, rss = stdout.Bytes(), f[0], f[1]
				// Every upload holds 480 sample events.
				if want := int64(g.pods*int(time.Duration(g.hours)*time.Hour/every)) * 480; topTotal(out).Samples >= want || try > 30 {
					break
				}
				time.Sleep(2 * time.Second)
			}
			kb, _ := strconv.Atoi(rss)
			tot := topTotal(out)
			t.Logf("top -by %s -parallel %s, %2d pods x %2d h (%6d uploads): %6s s, peak RSS %4d MiB; total %d samples, %d bytes [%.0f, %.0f]", by, run.par, g.pods, g.hours,
				g.pods*int(time.Duration(g.hours)*time.Hour/every), wall, kb>>10, tot.Samples, tot.Bytes, tot.Lo, tot.Hi)
		}
	}
	defer func() {
		// A server holding a simulated fleet takes longer than the helper
		// waits to flush on SIGTERM, and its data is not needed.
		syscall.Kill(srv.pid, syscall.SIGKILL)
		for alive(srv.pid) {
			time.Sleep(20 * time.Millisecond)
		}
		srv.pid = 0
	}()
	t.Logf("server series: %v", func() any {
		n, err := seriesCount(ctx, srv.url, fmt.Sprintf(`{service_name=%q}`, app), begin.Add(-time.Minute), end.Add(time.Minute))
		if err != nil {
			return err
		}
		return n
	}())
}

// topTotal reads the total row of top -json.
func topTotal(out []byte) (tot struct {
	Samples int64
	Bytes   int64
	Lo, Hi  float64
}) {
	var res struct {
		Total *struct {
			Samples, Bytes int64
			Lo, Hi         float64
		}
	}
	if json.Unmarshal(out, &res) == nil && res.Total != nil {
		tot.Samples, tot.Bytes, tot.Lo, tot.Hi = res.Total.Samples, res.Total.Bytes, res.Total.Lo, res.Total.Hi
	}
	return tot
}
