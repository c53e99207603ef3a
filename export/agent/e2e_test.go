package agent_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/export/agent"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/profiler"
)

// Types the end-to-end workload allocates. Their sizes are multiples of 8,
// so the bytes an object takes from the arena are its size.
type (
	// e2eLive objects stay live for the whole run: their true in-use
	// bytes are known at every collection.
	e2eLive struct{ a, b, c, d, e, f uint64 } // 48 bytes
	// e2eSmall and e2eLarge objects are allocated in arenas reset every
	// round.
	e2eSmall struct{ a, b, c, d uint64 } // 32 bytes
	e2eLarge [32]uint64                  // 256 bytes
	// e2ePull is the type of the pull-mode workload.
	e2ePull struct{ a, b, c, d, e uint64 } // 40 bytes
	// e2eRecord is the type of the restart workload.
	e2eRecord struct{ a, b, c, d uint64 } // 32 bytes
)

// The end-to-end workload: how many objects of each type, in how many
// rounds. At the default mean of 102400 bytes, each type gets about 80 to
// 230 samples.
const (
	e2eLiveN   = 200_000 // 9.6 MB, allocated once
	e2eSmallN  = 600_000 // 19.2 MB over the rounds
	e2eLargeN  = 90_000  // 23.04 MB over the rounds
	e2eRounds  = 6
	e2eBurnMiB = 192                    // hashed per round, so that the CPU profile has samples
	e2ePause   = 400 * time.Millisecond // per round, so that the run spans several intervals
)

// e2eConfidence is the confidence of each interval check. Five intervals
// are checked per run, so a false failure has probability below 5e-7
// (and, with the spans parts' six at spanConfidence, below 5.6e-7).
const e2eConfidence = 1 - 1e-7

// TestPyroscopeEndToEnd runs the agent against a real Grafana Pyroscope
// server and reads everything back through the server's own query API:
//
//   - agent: the arena (six sample types), wall-clock, CPU and heap
//     profiles arrive under the server's profile types; per type label,
//     every stored arena sample type equals what was pushed; the true bytes
//     lie inside the intervals computed from the server's own alloc_samples
//     and alloc_tail; the live-memory query the README documents (averaged
//     SelectSeries) gives the in-use level of the type kept live and,
//     ungrouped, the mean in-use level of the Go heap as pushed;
//   - pull: the profile handler is scraped with seconds=N, as Grafana
//     Alloy's pyroscope.scrape does with a profile.custom block and
//     delta = true, and pushed through the server's Push API as Alloy's
//     pyroscope.write does; the server stores each scraped window as it is
//     (no delta of its own on top) under the block's name;
//   - spans: samples that carry spans (the pprof labels span_id and
//     span_name, as otelarena sets them) keep both: span_name as a series
//     label, span_id per sample, read back through the span profile query;
//     arenaprof top -pyroscope -by label=span_name gives bytes per span
//     name with intervals (see testSpansEndToEnd);
//   - rss: the resident-memory profile of this process ("rss" source,
//     once a second) read back with arenaprof rss -pyroscope -json: one
//     snapshot per upload, each with the classes uploaded (summing to its
//     RSS), each class's mean and maximum as the uploads give them (see
//     testRSSFleet);
//   - spanwindows: requests with new span IDs in each of five upload intervals,
//     every allocation sampled: each span ID is in exactly one upload,
//     with all its samples, the profiler keeps no span bucket once they
//     are uploaded, and the server stores every sample under span_name
//     (see testSpanWindowsEndToEnd);
//   - restart: the server is stopped with SIGTERM mid-run and started again
//     about 10 s later on the same data directory; the agent resumes on its
//     own and the server stores everything it reported as uploaded.
//   - (the Pyroscope reader's time range is checked by
//     TestReadRangeEndToEnd in cmd/arenaprof/internal/pyroread);
//   - fleet: four pod processes (pod and version labels, known true bytes
//     per type) push to a server of its own, restarted once while they
//     run; arenaprof top -pyroscope over every pod and the whole range
//     covers each type's true fleet total, and arenaprof diff -pyroscope
//     between the versions flags exactly the type that changed (see
//     testFleet).
//   - typeframes: the same uploads with and without the type as leaf
//     frame, each to a fresh server: the same number of series; the bytes
//     received and on disk are logged.
//   - pause: the server is stopped with SIGSTOP for 15 s (it accepts
//     connections but answers nothing) and resumed with SIGCONT; nothing
//     is dropped or failed, at most the upload in flight is unconfirmed,
//     and the server stores everything the agent reported as uploaded.
//
// The server comes from ARENAPROF_PYROSCOPE_URL (.ci/run starts the one in
// ../shared/pyroscope and sets it); without it, the test starts its own
// server from the start script, found at ../shared/pyroscope/start relative
// to the repository (or at ARENAPROF_PYROSCOPE_START). The restart subtest
// always needs the script: it stops and restarts a server of its own. To
// run the test against your own server:
//
//	ARENAPROF_E2E=1 ARENAPROF_PYROSCOPE_URL=http://127.0.0.1:4040 go test -count=1 -run EndToEnd -v ./export/agent
//
// Without ARENAPROF_E2E=1 it skips (see requireE2E).
func TestPyroscopeEndToEnd(t *testing.T) {
	base, script := e2eServer(t)
	t.Run("agent", func(t *testing.T) { testAgentEndToEnd(t, base) })
	t.Run("pull", func(t *testing.T) { testPullEndToEnd(t, base) })
	t.Run("holdings", func(t *testing.T) { testHoldingsEndToEnd(t, base) })
	t.Run("spans", func(t *testing.T) {
		up, err := agent.NewPyroscope(agent.PyroscopeConfig{URL: base})
		if err != nil {
			t.Fatal(err)
		}
		testSpansEndToEnd(t, buildCLI(t), base, up, "memory")
	})
	t.Run("rss", func(t *testing.T) { testRSSFleet(t, buildCLI(t), base, newRecorder(t, base).py) })
	t.Run("spanwindows", func(t *testing.T) { testSpanWindowsEndToEnd(t, base) })
	t.Run("leaks", func(t *testing.T) { testLeaksFleet(t, buildCLI(t), base) })
	// The parts below start servers of their own from the start script.
	own := func(name, what string, test func(*testing.T, string)) {
		t.Run(name, func(t *testing.T) {
			if testing.Short() {
				t.Skipf("-short: the %s test %s", name, what)
			}
			if script == "" {
				t.Skipf("the %s test needs servers of its own, from ../shared/pyroscope/start (or ARENAPROF_PYROSCOPE_START), which is absent", name)
			}
			test(t, script)
		})
	}
	own("restart", "starts, stops and restarts a Pyroscope server of its own (about 15 s)", testServerRestart)
	own("fleet", "starts a Pyroscope server of its own and four pod processes (about 30 s)", testFleet)
	own("typeframes", "starts two Pyroscope servers of its own", testTypeFrames)
	own("pause", "stops a Pyroscope server of its own for 15 s", testServerPause)
}

// e2eServer returns the base URL of the Pyroscope server of an end-to-end
// test, ARENAPROF_PYROSCOPE_URL or one it starts from the start script
// (returned too, "" if absent); it skips the test when there is neither,
// or with -short when it would have to start one.
func e2eServer(t *testing.T) (base, script string) {
	requireE2E(t)
	base = os.Getenv("ARENAPROF_PYROSCOPE_URL")
	script = startScript(t)
	if base == "" && testing.Short() {
		t.Skip("-short: the end-to-end test starts a Pyroscope server of its own and runs for about 15 s; run it without -short, or set ARENAPROF_PYROSCOPE_URL")
	}
	if base == "" && script == "" {
		t.Skip("no Pyroscope server: ARENAPROF_PYROSCOPE_URL is not set and ../shared/pyroscope/start (or ARENAPROF_PYROSCOPE_START) is absent; .ci/run provides both")
	}
	if base == "" {
		base = startPyroscope(t, script, t.TempDir()).url
	}
	return base, script
}

// testAgentEndToEnd runs the agent with all four sources on a workload of
// known true bytes and checks what the server stores.
func testAgentEndToEnd(t *testing.T, base string) {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	p, app := e2eProfiler(t, "e2e")
	rec := newRecorder(t, base)
	begin, until := runE2EAgent(ctx, t, p, app, rec)
	sizes := map[string][]int{}
	for _, u := range rec.all() {
		sizes[u.Profile] = append(sizes[u.Profile], len(u.Data))
	}
	for _, name := range mapKeys(sizes) {
		t.Logf("agent: %s uploads: %v bytes of gzipped pprof each", name, sizes[name])
	}

	truth, liveT := e2eTruth(t, rec)
	// One service for the application; arena and Go heap memory are told
	// apart by the memory label.
	arenaSel := func(kv ...string) string { return selector(app, append([]string{"memory", "arena"}, kv...)...) }
	srcSel := map[string]string{"wall": selector(app), "cpu": selector(app), "heap": selector(app, "memory", "heap")}

	// Every arena sample type is listed; wall, CPU and heap profiles arrive
	// under the server's own profile types.
	arenaIDs := arenaTypeIDs("memory")
	others := map[string]string{
		"wall": "wall:wall:nanoseconds:wallclock:nanoseconds",
		"cpu":  "process_cpu:cpu:nanoseconds:cpu:nanoseconds",
		"heap": "memory:inuse_space:bytes:space:bytes",
	}
	waitUntil(ctx, t, "the server lists every profile type", func() error {
		ids, err := profileTypes(ctx, base, begin, until)
		if err != nil {
			return err
		}
		for _, want := range append(mapValues(arenaIDs), mapValues(others)...) {
			if !ids[want] {
				return fmt.Errorf("profile type %s not listed (listed: %v)", want, mapKeys(ids))
			}
		}
		return nil
	})
	for src, id := range others {
		waitUntil(ctx, t, src+" profile stored", func() error {
			total, err := renderTotal(ctx, base, id, srcSel[src], begin, until)
			if err == nil && total <= 0 {
				err = fmt.Errorf("%s%s is empty", id, srcSel[src])
			}
			return err
		})
	}

	// One application is one service: no service named after a profile.
	waitUntil(ctx, t, "one service_name for the application", func() error {
		vals, err := labelValues(ctx, base, "service_name", fmt.Sprintf("{service_name=~%q}", app+".*"), begin, until)
		if err == nil && !slices.Equal(vals, []string{app}) {
			err = fmt.Errorf("services %v, want [%s]", vals, app)
		}
		return err
	})

	// The type label of every sample is a label the server can select by.
	waitUntil(ctx, t, "type label values", func() error {
		vals, err := labelValues(ctx, base, "type", arenaSel(), begin, until)
		if err != nil {
			return err
		}
		for typ := range truth {
			if !slices.Contains(vals, typ) {
				return fmt.Errorf("type %q not among the server's label values %v", typ, vals)
			}
		}
		return nil
	})

	// Per type: stored alloc_space equals pushed, and the interval from the
	// server's own raw sums holds the true bytes.
	stored := checkArenaTypes(ctx, t, base, rec, arenaIDs, func(typ string) string { return arenaSel("type", typ) }, truth, begin, until)

	// Live memory: the documented query (SelectSeries, grouped by type,
	// averaged over the range) gives each type's in-use level; summing it
	// over the range, as the flame graph does, counts it once per upload.
	avg, err := selectSeriesAverage(ctx, base, "memory:inuse_space:bytes:space:bytes", arenaSel(), "type", begin, until, e2eV2(t))
	if err != nil {
		t.Fatal(err)
	}
	rows := rec.inuseRows(t, "arena", liveT)
	var sum float64
	for _, v := range rows {
		sum += float64(v)
	}
	wantAvg := sum / float64(len(rows))
	if got := avg[liveT]; math.Abs(got-wantAvg) > 1e-9*wantAvg || len(rows) == 0 {
		t.Errorf("averaged inuse_space of %s: server %.1f, pushed %.1f over %d uploads", liveT, got, wantAvg, len(rows))
	}
	s, u := stored[liveT]["alloc_samples"], stored[liveT]["alloc_tail"]
	iv, err := estimate.SingleMeanInterval(s, u, uploadedMean(t, rec), e2eConfidence, estimate.WindowBoth)
	if err != nil {
		t.Fatal(err)
	}
	if got := avg[liveT]; got < iv.Lo || got > iv.Hi {
		t.Errorf("live bytes of %s from the averaged query %.0f outside the interval [%.0f, %.0f] of the true %d", liveT, got, iv.Lo, iv.Hi, truth[liveT])
	}
	// The Go heap's series are split by object size (the bytes label its
	// uploads carry for intervals): the same query grouped by bytes
	// averages each size's in-use level over the uploads holding it, and
	// their sum is the service's.
	bySize := map[string][]float64{}
	for _, hp := range rec.profiles(t, "heap") {
		idx := slices.IndexFunc(hp.SampleType, func(st *profile.ValueType) bool { return st.Type == "inuse_space" })
		row := map[string]int64{}
		for _, s := range hp.Sample {
			row[strconv.FormatInt(s.NumLabel["bytes"][0], 10)] += s.Value[idx]
		}
		for size, v := range row {
			if v > 0 {
				bySize[size] = append(bySize[size], float64(v))
			}
		}
	}
	var heapWant float64
	for _, rows := range bySize {
		var sum float64
		for _, v := range rows {
			sum += v
		}
		heapWant += sum / float64(len(rows))
	}
	var heapAvg float64
	waitUntil(ctx, t, "averaged inuse_space of the Go heap equals the mean pushed", func() error {
		m, err := selectSeriesAverage(ctx, base, "memory:inuse_space:bytes:space:bytes", selector(app, "memory", "heap"), "bytes", begin, until, e2eV2(t))
		heapAvg = 0
		for _, v := range m {
			heapAvg += v
		}
		if err == nil && (len(bySize) == 0 || math.Abs(heapAvg-heapWant) > 1e-9*heapWant) {
			err = fmt.Errorf("server %.1f, pushed %.1f over %d sizes", heapAvg, heapWant, len(bySize))
		}
		return err
	})
	summed, err := renderTotal(ctx, base, "memory:inuse_space:bytes:space:bytes", arenaSel("type", liveT), begin, until)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("live bytes of %s: true %d; averaged query %.0f; summed over the range (the flame graph) %d = %.1fx, over %d uploads",
		liveT, truth[liveT], avg[liveT], summed, float64(summed)/float64(truth[liveT]), len(rows))
	t.Logf("Go heap: averaged in-use query by size, summed: %.0f bytes over %d sizes, equal to the mean pushed", heapAvg, len(bySize))
}

// runE2EAgent runs the agent with all four sources, uploading through
// rec, on the end-to-end workload, stops it and checks that every profile
// was uploaded. It returns the time range that holds the uploads.
func runE2EAgent(ctx context.Context, t *testing.T, p *profiler.Profiler, app string, rec *recorder) (begin, until time.Time) {
	t.Helper()
	begin = time.Now().Add(-time.Second)
	a, err := agent.Start(agent.Config{
		AppName:   app,
		Labels:    map[string]string{"env": "e2e"},
		Interval:  time.Second,
		Sources:   []agent.Source{agent.ProfilerSource(p), agent.WallSource(), agent.CPUSource(), agent.HeapSource()},
		Uploaders: []agent.Uploader{rec.uploader()},
		QueueSize: 100,
	})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			a.Stop(context.Background())
		}
	}()
	live := e2eWorkload()
	sctx, scancel := context.WithTimeout(ctx, 15*time.Second)
	err = a.Stop(sctx)
	scancel()
	stopped = true
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(live)
	st := a.Stats()
	if st.Failed != 0 || st.Dropped != 0 || st.CollectErrors != 0 || st.Uploaded != st.Collected {
		t.Fatalf("agent stats %+v: every profile must be uploaded", st)
	}
	t.Logf("agent: %d profiles collected, %d uploaded by %s, %d retries", st.Collected, st.Uploaded, rec.py, st.Retried)
	return begin, time.Now().Add(time.Minute)
}

// e2eTruth returns the true bytes of each type label of the end-to-end
// workload, and the label of the type kept live.
func e2eTruth(t *testing.T, rec *recorder) (map[string]int64, string) {
	small := typeName(t, rec, "e2eSmall")
	large := typeName(t, rec, "e2eLarge")
	liveT := typeName(t, rec, "e2eLive")
	return map[string]int64{liveT: e2eLiveN * 48, small: e2eSmallN * 32, large: e2eLargeN * 256}, liveT
}

// arenaTypeIDs returns the server's profile type ID of each arena sample
// type, under the profile name name.
func arenaTypeIDs(name string) map[string]string {
	ids := map[string]string{}
	for _, st := range []string{"alloc_objects:count", "alloc_space:bytes", "inuse_objects:count", "inuse_space:bytes", "alloc_samples:count", "alloc_tail:bytes"} {
		ids[strings.Split(st, ":")[0]] = name + ":" + st + ":space:bytes"
	}
	return ids
}

// checkArenaTypes checks, per type label (its series selected by sel),
// that each stored arena sample type (of ids) equals what rec pushed, and
// that the interval from the server's own alloc_samples and alloc_tail
// holds the true bytes. It returns the stored sums by type and sample type.
func checkArenaTypes(ctx context.Context, t *testing.T, base string, rec *recorder, ids map[string]string, sel func(typ string) string,
	truth map[string]int64, begin, until time.Time) map[string]map[string]int64 {
	t.Helper()
	pushed := rec.pushedByType(t, "arena")
	mean := uploadedMean(t, rec)
	stored := map[string]map[string]int64{}
	for _, typ := range mapKeys(truth) {
		stored[typ] = map[string]int64{}
		for _, name := range mapKeys(ids) {
			want := pushed[typ][name]
			waitUntil(ctx, t, fmt.Sprintf("stored %s of %s equals pushed %d", name, typ, want), func() error {
				got, err := renderTotal(ctx, base, ids[name], sel(typ), begin, until)
				if err == nil && got != want {
					err = fmt.Errorf("stored %d", got)
				}
				stored[typ][name] = got
				return err
			})
		}
		s, u := stored[typ]["alloc_samples"], stored[typ]["alloc_tail"]
		iv, err := estimate.SingleMeanInterval(s, u, mean, e2eConfidence, estimate.WindowBoth)
		if err != nil {
			t.Fatal(err)
		}
		if tr := float64(truth[typ]); tr < iv.Lo || tr > iv.Hi {
			t.Errorf("%s: true bytes %d outside the interval [%.0f, %.0f] from the server's sums (s=%d, u=%d)", typ, truth[typ], iv.Lo, iv.Hi, s, u)
		}
		t.Logf("%s: alloc_space pushed %d, stored %d, true %d; interval from the server's sums (s=%d, u=%d) [%.0f, %.0f]",
			typ, pushed[typ]["alloc_space"], stored[typ]["alloc_space"], truth[typ], s, u, iv.Lo, iv.Hi)
	}
	return stored
}

// e2eWorkload runs the end-to-end workload and returns its live arena,
// which the caller keeps alive until the agent has stopped. The live arena
// is filled first, right after the agent has taken its baseline, long
// before the first collection (a second later): every arena upload holds
// the whole of it, in use.
func e2eWorkload() *arena.Arena {
	live := arena.NewArena(arena.WithSeed(1, 2))
	for range e2eLiveN {
		arena.New[e2eLive](live)
	}
	churn := arena.NewArena(arena.WithSeed(3, 4))
	burn := make([]byte, 1<<20)
	for range e2eRounds {
		for range e2eSmallN / e2eRounds {
			arena.New[e2eSmall](churn)
		}
		for range e2eLargeN / e2eRounds {
			arena.New[e2eLarge](churn)
		}
		churn.Reset()
		for range e2eBurnMiB {
			sum := sha256.Sum256(burn)
			burn[0] = sum[0]
		}
		runtime.GC() // the heap profile publishes figures as of the last GC
		time.Sleep(e2ePause)
	}
	return live
}

// testPullEndToEnd scrapes the profile handler as Grafana Alloy's
// pyroscope.scrape does for a profile.custom "arenaprof" block with delta =
// true (GET path?seconds=N, N = scrape_interval - 1), and pushes each
// scraped profile as Alloy's pyroscope.write does (Push API, __name__ the
// block's name). Two consecutive windows: the server must store each as it
// is, so the total equals the sum of the two scrapes, and the interval
// from the server's sums holds the true bytes allocated in the windows.
func testPullEndToEnd(t *testing.T, base string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, app := e2eProfiler(t, "pull")
	mux := http.NewServeMux()
	mux.Handle("/debug/arenaprof", export.Handler(p))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	begin := time.Now().Add(-time.Second)
	ar := arena.NewArena(arena.WithSeed(7, 8))
	const perWindow = 300_000 // 12 MB of 40-byte objects per window
	var scraped, samples int64
	var typ string
	for range 2 {
		type result struct {
			data []byte
			err  error
		}
		ch := make(chan result, 1)
		go func() {
			data, err := get(ctx, srv.URL+"/debug/arenaprof?seconds=1")
			ch <- result{data, err}
		}()
		// The handler takes its first snapshot on arrival; 300 ms is far
		// more than it needs.
		time.Sleep(300 * time.Millisecond)
		for range perWindow {
			arena.New[e2ePull](ar)
		}
		ar.Reset()
		r := <-ch
		if r.err != nil {
			t.Fatal(r.err)
		}
		prof, err := profile.ParseData(r.data)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range prof.Sample {
			if strings.HasSuffix(s.Label[pprofmt.LabelType][0], "e2ePull") {
				typ = s.Label[pprofmt.LabelType][0]
				scraped += s.Value[pprofmt.IndexAllocSpace]
				samples += s.Value[pprofmt.IndexAllocSamples]
			}
		}
		if err := push(ctx, base, r.data, map[string]string{"__name__": "arenaprof", "service_name": app, "job": "pull"}); err != nil {
			t.Fatalf("pushing a scraped profile as Alloy does: %v", err)
		}
	}
	if typ == "" {
		t.Fatal("no e2ePull sample in the scraped windows")
	}
	until := time.Now().Add(time.Minute)
	sel := selector(app, "type", typ)
	var stored, s, u int64
	waitUntil(ctx, t, "stored alloc_space of the scraped windows", func() error {
		var err error
		stored, err = renderTotal(ctx, base, "arenaprof:alloc_space:bytes:space:bytes", sel, begin, until)
		if err == nil && stored != scraped {
			err = fmt.Errorf("stored %d, scraped %d", stored, scraped)
		}
		return err
	})
	waitUntil(ctx, t, "stored alloc_samples", func() error {
		var err error
		s, err = renderTotal(ctx, base, "arenaprof:alloc_samples:count:space:bytes", sel, begin, until)
		if err == nil && s != samples {
			err = fmt.Errorf("stored %d, scraped %d", s, samples)
		}
		return err
	})
	u, err := renderTotal(ctx, base, "arenaprof:alloc_tail:bytes:space:bytes", sel, begin, until)
	if err != nil {
		t.Fatal(err)
	}
	iv, err := estimate.SingleMeanInterval(s, u, hooks.MeanBytes(), e2eConfidence, estimate.WindowBoth)
	if err != nil {
		t.Fatal(err)
	}
	const truth = 2 * perWindow * 40
	if truth < iv.Lo || truth > iv.Hi {
		t.Errorf("true bytes %d outside the interval [%.0f, %.0f] from the server's sums (s=%d, u=%d)", truth, iv.Lo, iv.Hi, s, u)
	}
	t.Logf("pull: two seconds=1 windows scraped, %d bytes of alloc_space; stored under arenaprof:alloc_space:bytes:space:bytes %d; true %d; interval [%.0f, %.0f]",
		scraped, stored, truth, iv.Lo, iv.Hi)
}

// get fetches a URL and returns its body.
func get(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %.300s", u, resp.Status, b)
	}
	return b, nil
}

// push sends a raw pprof profile through the server's Push API
// (push.v1.PusherService/Push), as Grafana Alloy's pyroscope.write does.
func push(ctx context.Context, base string, data []byte, labels map[string]string) error {
	type label struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	var ls []label
	for _, k := range mapKeys(labels) {
		ls = append(ls, label{k, labels[k]})
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return err
	}
	id[6], id[8] = id[6]&0x0f|0x40, id[8]&0x3f|0x80
	req, err := json.Marshal(map[string]any{"series": []any{map[string]any{
		"labels": ls,
		"samples": []any{map[string]any{
			"rawProfile": data,
			"ID":         fmt.Sprintf("%x-%x-%x-%x-%x", id[0:4], id[4:6], id[6:8], id[8:10], id[10:]),
		}},
	}}})
	if err != nil {
		return err
	}
	var resp struct{}
	return post(ctx, base+"/push.v1.PusherService/Push", string(req), &resp)
}

// outage is one run of the agent against a Pyroscope server of its own,
// for the parts that take the server away: a profiler, arenas allocating
// in the background, and the agent uploading through a recorder with the
// default retry bounds (no count bound, MaxRetryTime 2 min).
type outage struct {
	srv   *pyroscope
	app   string
	rec   *recorder
	a     *agent.Agent
	begin time.Time
	// interval is the agent's: 250 ms, 1 s on v2 (see startOutage).
	interval time.Duration

	done    chan struct{}
	wg      sync.WaitGroup
	stopped bool
}

// startOutage starts the server, the profiler, the workload (arenas
// seeded with seed) and the agent, and waits for three uploads.
func startOutage(ctx context.Context, t *testing.T, script, name string, backoffMax time.Duration, seed uint64) *outage {
	o := &outage{srv: startPyroscope(t, script, t.TempDir()), done: make(chan struct{})}
	// Room in the queue for the outage: 50 s of profiles on v1.19.3
	// (down for about 10 s). Pyroscope v2.2.1 answers a push once its
	// segment writer has flushed the segment (every 500 ms): one agent
	// uploaded at most about 1.5 profiles a second there, under the 4 a
	// second of 250 ms intervals, and a restart took 84 s (with its
	// default waits; about 20 s with pyroscope2Flags); so there the
	// intervals are 1 s and the queue holds 300 s of them; and a request
	// may take 5 s (2 s on v1), since v2 answered slowly for a while
	// after a pause ended.
	interval, queue, timeout := 250*time.Millisecond, 200, 2*time.Second
	if o.srv.v2 {
		interval, queue, timeout = time.Second, 300, 5*time.Second
	}
	o.interval = interval
	p, app := e2eProfiler(t, name)
	o.app = app
	o.rec = newRecorder(t, o.srv.url)
	o.begin = time.Now().Add(-time.Second)
	var err error
	o.a, err = agent.Start(agent.Config{
		AppName:     o.app,
		Interval:    interval,
		Sources:     []agent.Source{agent.ProfilerSource(p)},
		Uploaders:   []agent.Uploader{o.rec.uploader()},
		Timeout:     timeout,
		BackoffBase: 50 * time.Millisecond,
		BackoffMax:  backoffMax,
		QueueSize:   queue,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !o.stopped {
			o.a.Stop(context.Background())
		}
	})
	o.wg.Go(func() {
		ar := arena.NewArena(arena.WithSeed(seed, seed+1))
		for {
			for range 20_000 {
				arena.New[e2eRecord](ar)
			}
			ar.Reset()
			select {
			case <-o.done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	waitUntil(ctx, t, "uploads before the outage", func() error {
		if n := len(o.rec.all()); n < 3 {
			return fmt.Errorf("%d uploads", n)
		}
		return nil
	})
	return o
}

// uploadsAfter waits for three uploads of intervals that end after since.
func (o *outage) uploadsAfter(ctx context.Context, t *testing.T, since time.Time) {
	waitUntil(ctx, t, "uploads after the outage", func() error {
		n := 0
		for _, u := range o.rec.all() {
			if u.at.After(since) && u.Until.After(since) {
				n++
			}
		}
		if q := o.a.Stats().Destinations[0].Queued; n < 3 || q > 1 {
			return fmt.Errorf("%d uploads of intervals after the outage, %d queued", n, q)
		}
		return nil
	})
}

// stop ends the workload and stops the agent, which must deliver what it
// holds, and returns its final counters.
func (o *outage) stop(ctx context.Context, t *testing.T) agent.Stats {
	close(o.done)
	o.wg.Wait()
	sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	err := o.a.Stop(sctx)
	cancel()
	o.stopped = true
	if err != nil {
		t.Fatal(err)
	}
	return o.a.Stats()
}

// endingBetween counts the uploads of intervals that end in (from, to).
func (o *outage) endingBetween(from, to time.Time) int {
	n := 0
	for _, u := range o.rec.all() {
		if u.Until.After(from) && u.Until.Before(to) {
			n++
		}
	}
	return n
}

// checkStored waits until the server's stored alloc_space equals want
// plus the alloc_space of some of the unconfirmed uploads maybe (each of
// which the server may or may not have stored), and returns it.
func (o *outage) checkStored(ctx context.Context, t *testing.T, want int64, maybe []int64) int64 {
	until := time.Now().Add(time.Minute)
	sums := []int64{want} // want plus every subset of maybe
	var most int64
	for _, m := range maybe {
		most += m
		if len(maybe) > 16 {
			continue // too many subsets: [want, want+most] below
		}
		for _, s := range sums {
			sums = append(sums, s+m)
		}
	}
	ok := func(got int64) bool {
		if len(maybe) > 16 {
			return got >= want && got <= want+most
		}
		return slices.Contains(sums, got)
	}
	var got int64
	waitUntil(ctx, t, "stored alloc_space equals pushed", func() error {
		var err error
		got, err = renderTotal(ctx, o.srv.url, "memory:alloc_space:bytes:space:bytes", selector(o.app, "memory", "arena"), o.begin, until)
		if err == nil && !ok(got) {
			err = fmt.Errorf("stored %d, pushed %d uploaded + some of %v unconfirmed", got, want, maybe)
		}
		return err
	})
	return got
}

// allocSpace sums the alloc_space of the uploads us.
func allocSpace(t *testing.T, us []recorded) int64 {
	var n int64
	for _, u := range us {
		p, err := profile.ParseData(u.Data)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(p.SampleType, func(st *profile.ValueType) bool { return st.Type == "alloc_space" })
		for _, s := range p.Sample {
			n += s.Value[i]
		}
	}
	return n
}

// testServerRestart stops the server with SIGTERM mid-run and, about 10 s
// later, starts it again on the same data directory. The agent must resume
// on its own: profiles collected while the server was down land once it
// is back, and the server stores everything the agent reported as
// uploaded, to the byte.
func testServerRestart(t *testing.T, script string) {
	const restartDown = 8 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second+serverSlack(t, script, 5))
	defer cancel()
	o := startOutage(ctx, t, script, "restart", time.Second, 5)
	down := time.Now()
	o.srv.stop(t)
	exited := time.Now()
	time.Sleep(restartDown) // a slow restart: the server is gone for about 10 s
	o.srv.start(t)
	restarted := time.Now()
	t.Logf("server restarted: SIGTERM to ready again in %v", restarted.Sub(down).Round(time.Millisecond))
	o.uploadsAfter(ctx, t, restarted)
	st := o.stop(ctx, t)
	if st.Failed != 0 || st.Dropped != 0 || st.Uploaded != st.Collected || st.Uploaded != uint64(len(o.rec.all())) {
		t.Fatalf("agent stats %+v, %d recorded: every profile must be uploaded", st, len(o.rec.all()))
	}
	during := o.endingBetween(down, restarted)
	if during == 0 {
		t.Error("no interval ended while the server was down")
	}
	// Uploads v1.19.3 accepted while it shut down may be lost (see
	// testFleet): maybe stored. v2.2.1 must store all it accepted.
	var want int64
	var late []int64
	for _, u := range o.rec.all() {
		n := allocSpace(t, []recorded{u})
		if o.srv.v2 || u.at.Before(down) || u.at.After(exited) {
			want += n
		} else {
			late = append(late, n)
		}
	}
	got := o.checkStored(ctx, t, want, late)
	t.Logf("%d uploads (%d retries; %d accepted while the server shut down), %d of intervals ending while the server was down; alloc_space pushed %d, stored %d after the restart",
		st.Uploaded, st.Retried, len(late), during, want, got)
}

// testServerPause stops the server with SIGSTOP for 15 s: the kernel still
// accepts connections and buffers requests, but nothing answers. With the
// queue large enough for the pause, the agent must lose nothing: no
// profile dropped or failed, at most the one in flight when the server
// stopped unconfirmed, and the server stores everything the agent reported
// as uploaded (plus, perhaps, the unconfirmed one).
func testServerPause(t *testing.T, script string) {
	const pause = 15 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 75*time.Second+serverSlack(t, script, 1))
	defer cancel()
	o := startOutage(ctx, t, script, "pause", 500*time.Millisecond, 7)
	if err := syscall.Kill(o.srv.pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	resumed := false
	defer func() {
		if !resumed {
			syscall.Kill(o.srv.pid, syscall.SIGCONT)
		}
	}()
	time.Sleep(pause)
	during := o.a.Stats()
	if err := syscall.Kill(o.srv.pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed = true
	cont := time.Now()
	o.uploadsAfter(ctx, t, cont)
	st := o.stop(ctx, t)
	t.Logf("during the pause: %d collected, %d uploaded, %d retries, %d queued, %d unconfirmed; last error %q",
		during.Collected, during.Uploaded, during.Retried, during.Destinations[0].Queued, during.Unconfirmed, during.LastError)
	// The pause may cost one unconfirmed upload, the one in flight. A
	// request that went unanswered before it (a server slow on a loaded
	// machine, answering again before the pause) is an outage of its own.
	var before uint64
	for _, u := range o.rec.unconfirmed() {
		if u.at.Before(paused) {
			before++
		}
	}
	if st.Failed != 0 || st.Dropped != 0 || st.Unconfirmed-before > 1 || st.Uploaded+st.Unconfirmed != st.Collected ||
		st.Uploaded != uint64(len(o.rec.all())) || st.Unconfirmed != uint64(len(o.rec.unconfirmed())) {
		t.Fatalf("agent stats %+v, %d recorded, %d unconfirmed (%d before the pause): nothing may be dropped or failed, at most one unconfirmed by the pause",
			st, len(o.rec.all()), len(o.rec.unconfirmed()), before)
	}
	inPause := o.endingBetween(paused, cont)
	if inPause < int(pause/o.interval)/2 {
		t.Errorf("only %d uploads of intervals ending during the %v pause", inPause, pause)
	}
	want := allocSpace(t, o.rec.all())
	var maybe []int64
	for _, u := range o.rec.unconfirmed() {
		maybe = append(maybe, allocSpace(t, []recorded{u}))
	}
	got := o.checkStored(ctx, t, want, maybe)
	t.Logf("%d uploads (%d retries), %d unconfirmed (%d before the pause; some stored: %v), %d of intervals ending during the pause; alloc_space pushed %d, stored %d",
		st.Uploaded, st.Retried, st.Unconfirmed, before, got != want, inPause, want, got)
}

// recorder wraps an uploader (Pyroscope's by default) and keeps every
// upload the server accepted, and those left unconfirmed.
type recorder struct {
	py     agent.Uploader
	mu     sync.Mutex
	ok     []recorded
	unconf []recorded
}

type recorded struct {
	*agent.Upload
	at time.Time // when the server accepted it
}

func newRecorder(t *testing.T, base string) *recorder {
	py, err := agent.NewPyroscope(agent.PyroscopeConfig{URL: base})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { py.(io.Closer).Close() })
	return &recorder{py: py}
}

func (r *recorder) uploader() agent.Uploader { return recordingUploader{r} }

// recordingUploader uploads to the recorder's Pyroscope and records what
// it accepted, under the name "pyroscope".
type recordingUploader struct{ r *recorder }

func (recordingUploader) String() string { return "pyroscope" }

func (ru recordingUploader) Upload(ctx context.Context, u *agent.Upload) error {
	r := ru.r
	if err := r.py.Upload(ctx, u); err != nil {
		if agent.IsUnconfirmed(err) {
			r.mu.Lock()
			r.unconf = append(r.unconf, recorded{u, time.Now()})
			r.mu.Unlock()
		}
		return err
	}
	r.mu.Lock()
	r.ok = append(r.ok, recorded{u, time.Now()})
	r.mu.Unlock()
	return nil
}

func (r *recorder) all() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ok)
}

func (r *recorder) unconfirmed() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.unconf)
}

func (r *recorder) profiles(t *testing.T, name string) []*profile.Profile {
	var ps []*profile.Profile
	for _, u := range r.all() {
		if u.Profile != name {
			continue
		}
		p, err := profile.ParseData(u.Data)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

// pushedByType sums every sample type of the uploaded profiles named name,
// by their type label.
func (r *recorder) pushedByType(t *testing.T, name string) map[string]map[string]int64 {
	return sumByType(t, r.all(), name)
}

// sumByType sums every sample type of the uploads us of the profile named
// name, by their type label.
func sumByType(t *testing.T, us []recorded, name string) map[string]map[string]int64 {
	m := map[string]map[string]int64{}
	for _, u := range us {
		if u.Profile != name {
			continue
		}
		p, err := profile.ParseData(u.Data)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range p.Sample {
			typ := s.Label[pprofmt.LabelType][0]
			if m[typ] == nil {
				m[typ] = map[string]int64{}
			}
			for i, st := range p.SampleType {
				m[typ][st.Type] += s.Value[i]
			}
		}
	}
	return m
}

// inuseRows returns, for each uploaded profile named name that holds the
// type, its inuse_space for that type: what the server keeps as one row.
func (r *recorder) inuseRows(t *testing.T, name, typ string) []int64 {
	var rows []int64
	for _, p := range r.profiles(t, name) {
		idx := slices.IndexFunc(p.SampleType, func(st *profile.ValueType) bool { return st.Type == "inuse_space" })
		var v int64
		found := false
		for _, s := range p.Sample {
			if s.Label[pprofmt.LabelType][0] == typ {
				v += s.Value[idx]
				found = true
			}
		}
		if found {
			rows = append(rows, v)
		}
	}
	return rows
}

// typeName returns the type label the profiler gives the Go type whose name
// ends in suffix.
func typeName(t *testing.T, r *recorder, suffix string) string {
	for typ := range r.pushedByType(t, "arena") {
		if strings.HasSuffix(typ, suffix) {
			return typ
		}
	}
	t.Fatalf("no uploaded sample of type %s", suffix)
	return ""
}

// uploadedMean returns the sampling mean of the uploaded arena profiles.
func uploadedMean(t *testing.T, r *recorder) int64 {
	ps := r.profiles(t, "arena")
	if len(ps) == 0 {
		t.Fatal("no arena profile uploaded")
	}
	return ps[0].Period
}

// pyroscope is a server started from the start script, which the test can
// stop and start again on the same data directory and ports.
type pyroscope struct {
	script, data string
	v2           bool
	// ports: HTTP, gRPC, memberlist; for v2 also the metastore's Raft and
	// the admin server's.
	ports []int
	url   string
	pid   int
	// flags go to the server after the ports (see the start scripts).
	flags []string
}

// scriptV2 reports whether the start script starts Pyroscope v2 (its usage
// line names a RAFT_PORT, the metastore's, which v1 has not).
func scriptV2(t *testing.T, script string) bool {
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatalf("reading the start script: %v", err)
	}
	return bytes.Contains(b, []byte("RAFT_PORT"))
}

// e2eV2 reports whether the end-to-end server is Pyroscope v2: the one
// its start script starts (ARENAPROF_PYROSCOPE_START names the script of
// the server at ARENAPROF_PYROSCOPE_URL).
func e2eV2(t *testing.T) bool {
	s := startScript(t)
	return s != "" && scriptV2(t, s)
}

// serverSlack is the time to add to a test's deadline for each start or
// stop of a server of its own from script: none for v1.19.3 (a few
// seconds); 60 s for v2.2.1, which took up to 45 s from start to ready and
// 32 s from SIGTERM to exit here with its default waits (about 8 s and
// 7 s with pyroscope2Flags).
func serverSlack(t *testing.T, script string, startsAndStops int) time.Duration {
	if !scriptV2(t, script) {
		return 0
	}
	return time.Duration(startsAndStops) * 60 * time.Second
}

// stopWithin is how long a server may take to exit after SIGTERM: v1.19.3
// takes under a second; v2.2.1 took 32 s with its default waits (its
// metastore and its segment writer each wait their min-ready duration,
// 15 s, before they stop), about 7 s with pyroscope2Flags.
func (s *pyroscope) stopWithin() time.Duration {
	if s.v2 {
		return 60 * time.Second
	}
	return 20 * time.Second
}

// e2eVar is the environment variable that turns on the tests that start
// real Pyroscope servers or build the OpenTelemetry Collector: without it,
// go test ./... stays hermetic and quick. .ci/run sets it for its
// end-to-end runs, and fails when any part of them skips.
const e2eVar = "ARENAPROF_E2E"

// requireE2E skips t unless ARENAPROF_E2E=1.
func requireE2E(t *testing.T) {
	t.Helper()
	if os.Getenv(e2eVar) != "1" {
		t.Skipf("an end-to-end test against real Pyroscope servers (and a Collector it may build): set %s=1 to run it (.ci/run does)", e2eVar)
	}
}

// startScript finds the start script of the shared Pyroscope server:
// ARENAPROF_PYROSCOPE_START, else ../shared/pyroscope/start relative to the
// repository root. It returns "" when there is none.
func startScript(t *testing.T) string {
	if s := os.Getenv("ARENAPROF_PYROSCOPE_START"); s != "" {
		return s
	}
	dir := moduleRoot(t)
	if dir == "" {
		return ""
	}
	s := filepath.Join(dir, "..", "shared", "pyroscope", "start")
	if fi, err := os.Stat(s); err != nil || fi.IsDir() {
		return ""
	}
	return s
}

// moduleRoot returns the repository's root, the nearest directory above
// the test's that holds a go.mod, "" if there is none.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// pyroscope2Flags go to every Pyroscope v2.2.1 server started here (and
// to the one .ci/run starts, which passes the same): shorter min-ready
// waits. By default its metastore and its segment writer each wait their
// min-ready duration (15 s and 30 s) after their own readiness checks have
// passed before /ready answers 200, and again before they stop after
// SIGTERM: 45 s to start and 32 s to stop here, 88 s from SIGTERM to ready
// in the restart part. The waits give the other instances of a cluster
// time to see the change; with one instance there is nobody to tell.
// Pyroscope's own integration tests set both to 0
// (pkg/test/integration/helper.go), but the metastore keeps 5 s here: on
// SIGTERM it stops (after its wait) while the segment writer drains the
// pushes in flight and flushes their segments, whose metadata it must
// take. At 0 s it was gone first, a push in flight waited out the
// segment writer's 2 s metadata timeout (answered after 2.4 s, its segment
// sent to the dead-letter queue), and under load such pushes ran past an
// agent's timeout unanswered and unstored (3 in one fleet run, whose
// truth then fell outside the interval); with the metastore there, they
// are answered in 0.4 s, as with the defaults. The readiness checks
// themselves (the Raft leader's commit applied, the segment writer ACTIVE
// in its ring), the drain and the flush on stop are unchanged; a push is
// still answered only once its segment is flushed. About 8 s to start
// and 7 s to stop here.
var pyroscope2Flags = []string{"-metastore.min-ready-duration=5s", "-segment-writer.min-ready-duration=0s"}

// startPyroscope starts a server on free 127.0.0.1 ports, with its data
// (and the unpacked binary, unless $PYROSCOPE_BIN or $PYROSCOPE2_BIN
// names one) under dir and the server flags given (after pyroscope2Flags
// for v2, so that they can override them), stopped when t ends.
func startPyroscope(t *testing.T, script, dir string, flags ...string) *pyroscope {
	s := &pyroscope{script: script, data: filepath.Join(dir, "data"), v2: scriptV2(t, script), flags: flags}
	n := 3
	if s.v2 {
		n = 5
		s.flags = append(slices.Clone(pyroscope2Flags), flags...)
	}
	s.ports = freePorts(t, n)
	s.url = fmt.Sprintf("http://127.0.0.1:%d", s.ports[0])
	s.start(t)
	t.Cleanup(func() {
		if s.pid != 0 {
			s.stop(t)
		}
	})
	return s
}

// freePorts returns n distinct free ports of 127.0.0.1 for a server to
// listen on: every listener is held until all are chosen, so that they
// differ, then freed.
func freePorts(t *testing.T, n int) []int {
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// start runs the script, which returns once the server answers /ready.
func (s *pyroscope) start(t *testing.T) {
	t.Helper()
	args := []string{s.data}
	for _, p := range s.ports[:3] {
		args = append(args, strconv.Itoa(p))
	}
	if s.v2 {
		// The Raft port is positional; the admin port, GRPC+5 by
		// default, is set by the flag (a later flag wins).
		args = append(args, strconv.Itoa(s.ports[3]), fmt.Sprintf("-admin-server.http-listen-port=%d", s.ports[4]))
	}
	args = append(args, s.flags...)
	cmd := exec.Command(s.script, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(s.data, "server.log"))
		t.Fatalf("starting Pyroscope: %v: %s\nserver log tail:\n%s", err, stderr.Bytes(), tail(log, 2000))
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("start script printed %q, want a PID", out)
	}
	s.pid = pid
}

// stop sends SIGTERM (the server flushes to its data directory) and waits
// for the process to exit; it is not our child, so it polls.
func (s *pyroscope) stop(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(s.pid, syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM to Pyroscope: %v", err)
	}
	within := s.stopWithin()
	deadline := time.Now().Add(within)
	for alive(s.pid) {
		if time.Now().After(deadline) {
			syscall.Kill(s.pid, syscall.SIGKILL)
			t.Fatalf("Pyroscope (PID %d) did not exit within %s of SIGTERM", s.pid, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.pid = 0
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// waitUntil retries check every 200 ms until it returns nil; when ctx ends
// first, the test fails with check's last error.
func waitUntil(ctx context.Context, t *testing.T, what string, check func() error) {
	t.Helper()
	for {
		err := check()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func mapValues(m map[string]string) []string {
	var v []string
	for _, x := range m {
		v = append(v, x)
	}
	return v
}

func mapKeys[V any](m map[string]V) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	slices.Sort(k)
	return k
}

// selector builds a label selector: service_name, then name/value pairs.
func selector(service string, kv ...string) string {
	parts := []string{fmt.Sprintf("service_name=%q", service)}
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, fmt.Sprintf("%s=%q", kv[i], kv[i+1]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// profileTypes returns the IDs of the profile types the server lists
// (querier.v1.QuerierService/ProfileTypes).
func profileTypes(ctx context.Context, base string, from, until time.Time) (map[string]bool, error) {
	body := fmt.Sprintf(`{"start":%d,"end":%d}`, from.UnixMilli(), until.UnixMilli())
	var resp struct {
		ProfileTypes []struct {
			ID string `json:"ID"`
		} `json:"profileTypes"`
	}
	if err := post(ctx, base+"/querier.v1.QuerierService/ProfileTypes", body, &resp); err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, pt := range resp.ProfileTypes {
		ids[pt.ID] = true
	}
	return ids, nil
}

// labelValues returns the values of a label among the series matching
// sel (querier.v1.QuerierService/LabelValues).
func labelValues(ctx context.Context, base, name, sel string, from, until time.Time) ([]string, error) {
	req, _ := json.Marshal(map[string]any{"name": name, "matchers": []string{sel}, "start": from.UnixMilli(), "end": until.UnixMilli()})
	var resp struct {
		Names []string `json:"names"`
	}
	if err := post(ctx, base+"/querier.v1.QuerierService/LabelValues", string(req), &resp); err != nil {
		return nil, err
	}
	return resp.Names, nil
}

// renderTotal returns the total of a profile type over the series matching
// sel, from the server's render endpoint (the flame graph's numTicks): the
// sum over every stored profile in the range.
func renderTotal(ctx context.Context, base, id, sel string, from, until time.Time) (int64, error) {
	q := url.Values{}
	q.Set("query", id+sel)
	q.Set("from", fmt.Sprint(from.Unix()))
	q.Set("until", fmt.Sprint(until.Unix()))
	q.Set("format", "json")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/pyroscope/render?"+q.Encode(), nil)
	if err != nil {
		return 0, err
	}
	var resp struct {
		Flamebearer struct {
			NumTicks int64 `json:"numTicks"`
		} `json:"flamebearer"`
	}
	if err := do(req, &resp); err != nil {
		return 0, err
	}
	return resp.Flamebearer.NumTicks, nil
}

// selectSeriesAverage returns the in-use level of the series matching sel,
// grouped by groupBy ("" for none), averaged over the uploads in
// [from, until]. On v1 it is the README's query: SelectSeries with one step
// over the range and the average aggregation. Pyroscope v2.2.1 sums
// whatever aggregation is asked (its query backend's
// timeSeriesAggregator.build always sums), so on v2 the query asks for
// steps of 100 ms, each holding at most one upload of a series (uploads of
// one source are a second apart), and averages the points, which are only
// the steps that hold an upload.
func selectSeriesAverage(ctx context.Context, base, id, sel, groupBy string, from, until time.Time, v2 bool) (map[string]float64, error) {
	step, agg := until.Sub(from).Seconds(), "TIME_SERIES_AGGREGATION_TYPE_AVERAGE"
	if v2 {
		step, agg = 0.1, "TIME_SERIES_AGGREGATION_TYPE_SUM"
	}
	req, _ := json.Marshal(map[string]any{
		"profileTypeID": id,
		"labelSelector": sel,
		"start":         from.UnixMilli(),
		"end":           until.UnixMilli(),
		"step":          step,
		"groupBy":       slices.DeleteFunc([]string{groupBy}, func(s string) bool { return s == "" }),
		"aggregation":   agg,
	})
	var resp struct {
		Series []struct {
			Labels []struct{ Name, Value string } `json:"labels"`
			Points []struct {
				Value float64 `json:"value"`
			} `json:"points"`
		} `json:"series"`
	}
	if err := post(ctx, base+"/querier.v1.QuerierService/SelectSeries", string(req), &resp); err != nil {
		return nil, err
	}
	m := map[string]float64{}
	for _, s := range resp.Series {
		if len(s.Points) == 0 || (!v2 && len(s.Points) != 1) {
			return nil, fmt.Errorf("series %v has %d points, want 1 for one step over the range", s.Labels, len(s.Points))
		}
		var sum float64
		for _, p := range s.Points {
			sum += p.Value
		}
		avg := sum / float64(len(s.Points))
		if groupBy == "" && len(resp.Series) == 1 {
			m[""] = avg
			continue
		}
		for _, l := range s.Labels {
			if l.Name == groupBy {
				m[l.Value] = avg
			}
		}
	}
	return m, nil
}

func post(ctx context.Context, u, body string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	return do(req, v)
}

func do(req *http.Request, v any) error {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %.300s", req.URL.Path, resp.Status, b)
	}
	return json.Unmarshal(b, v)
}

// e2eHeldChunk is the chunk size of the arena the holdings test holds.
const e2eHeldChunk = 64 << 10

type e2eBurst struct{ x [128]int64 }

// testHoldingsEndToEnd uploads the live-arenas and peak profiles through
// the agent and checks that the server lists them as profile types of
// their own and stores what was pushed, to the byte: the reserved bytes
// of a held arena of known size, and the peak of a burst released before
// every collection.
func testHoldingsEndToEnd(t *testing.T, base string) {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	p, app := e2eProfiler(t, "holdings")
	rec := newRecorder(t, base)
	begin := time.Now().Add(-time.Second)
	held := arena.NewArena(arena.WithChunkSize(e2eHeldChunk), arena.WithLabels(hooks.NewLabels("e2e_app", app)))
	defer held.Free()
	arena.MakeSlice[byte](held, 10*e2eHeldChunk, 10*e2eHeldChunk) // a large buffer of exactly 640 KiB
	a, err := agent.Start(agent.Config{
		AppName:   app,
		Interval:  time.Second,
		Sources:   []agent.Source{agent.ArenasSource(), agent.PeakSource(p)},
		Uploaders: []agent.Uploader{rec.uploader()},
		QueueSize: 100,
	})
	if err != nil {
		t.Fatal(err)
	}
	burst := arena.NewArena(arena.WithSeed(5, 6))
	for range 3 {
		for range 4000 {
			arena.New[e2eBurst](burst)
		}
		burst.Reset()
		time.Sleep(time.Second)
	}
	sctx, scancel := context.WithTimeout(ctx, 15*time.Second)
	err = a.Stop(sctx)
	scancel()
	if err != nil {
		t.Fatal(err)
	}
	if st := a.Stats(); st.Failed != 0 || st.Dropped != 0 || st.CollectErrors != 0 || st.Uploaded != st.Collected {
		t.Fatalf("agent stats %+v: every profile must be uploaded", st)
	}
	until := time.Now().Add(time.Minute)

	// What was pushed: the held arena's reserved bytes in each live-arenas
	// upload, and the peaks' in-use bytes.
	var reserved, uploads int64
	for _, prof := range rec.profiles(t, "arenas") {
		for _, s := range prof.Sample {
			if v := s.Label["e2e_app"]; len(v) == 1 && v[0] == app {
				reserved += s.Value[pprofmt.IndexReserved]
				if s.Value[pprofmt.IndexReserved] != 10*e2eHeldChunk {
					t.Errorf("held arena uploaded with %d reserved bytes, want %d", s.Value[pprofmt.IndexReserved], 10*e2eHeldChunk)
				}
				uploads++
			}
		}
	}
	var peakInuse int64
	for _, prof := range rec.profiles(t, "peak") {
		for _, s := range prof.Sample {
			peakInuse += s.Value[pprofmt.IndexInuseSpace]
		}
	}
	if uploads == 0 || peakInuse == 0 {
		t.Fatalf("%d live-arenas uploads hold the arena; peak in-use pushed %d", uploads, peakInuse)
	}
	ids := map[string]string{
		"arenas": "arenas:reserved_space:bytes:space:bytes",
		"peak":   "memory:inuse_space:bytes:space:bytes",
	}
	waitUntil(ctx, t, "the server lists the live-arenas and peak profile types", func() error {
		listed, err := profileTypes(ctx, base, begin, until)
		if err != nil {
			return err
		}
		for _, id := range append(mapValues(ids), "arenas:arenas:count:space:bytes", "arenas:used_space:bytes:space:bytes") {
			if !listed[id] {
				return fmt.Errorf("profile type %s not listed (listed: %v)", id, mapKeys(listed))
			}
		}
		return nil
	})
	waitUntil(ctx, t, "stored reserved_space of the held arena equals pushed", func() error {
		got, err := renderTotal(ctx, base, ids["arenas"], selector(app, "e2e_app", app), begin, until)
		if err == nil && got != reserved {
			err = fmt.Errorf("stored %d, pushed %d", got, reserved)
		}
		return err
	})
	waitUntil(ctx, t, "stored peak inuse_space equals pushed", func() error {
		got, err := renderTotal(ctx, base, ids["peak"], selector(app, agent.SeriesLabel, "peak"), begin, until)
		if err == nil && got != peakInuse {
			err = fmt.Errorf("stored %d, pushed %d", got, peakInuse)
		}
		return err
	})
	t.Logf("holdings: %d live-arenas uploads of the held arena (%d reserved bytes in all); peak in-use pushed and stored %d", uploads, reserved, peakInuse)
}

// e2eProfiler starts a profiler, stopped when the test ends, and names a
// service of the test's own on the shared server: arenaprof_KIND_<ns>.
func e2eProfiler(t *testing.T, kind string) (*profiler.Profiler, string) {
	t.Helper()
	p, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p, fmt.Sprintf("arenaprof_%s_%d", kind, time.Now().UnixNano())
}
