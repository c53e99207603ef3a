package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export/agent"
	"github.com/arenaprof/arenaprof/internal/leaks"
	"github.com/arenaprof/arenaprof/profiler"
)

// The truth program of TestLeaksRealRuntime: each site is a function of
// its own, so that -by func keys it.
var (
	heapLeaked, heapCache, heapSaw [][]byte
	heapSteady                     [100][][]byte
	leakSink                       []byte
)

//go:noinline
func leakHeapSite() { heapLeaked = append(heapLeaked, make([]byte, 1024), make([]byte, 1024)) }

//go:noinline
func leakCacheSite() { heapCache = append(heapCache, make([]byte, 4096)) }

//go:noinline
func leakSawtoothSite() { heapSaw = append(heapSaw, make([]byte, 1024), make([]byte, 1024)) }

//go:noinline
func leakSteadySite(slot int) { heapSteady[slot] = [][]byte{make([]byte, 1024), make([]byte, 1024)} }

//go:noinline
func leakChurnSite() {
	for range 64 {
		leakSink = make([]byte, 1024)
	}
}

//go:noinline
func leakArenaSite(a *arena.Arena) { _ = arena.MakeSlice[byte](a, 1024, 1024) }

//go:noinline
func leakArenaSawtoothSite(a *arena.Arena) { _ = arena.MakeSlice[byte](a, 2048, 2048) }

// leakLog is the program's own record of what its leaking sites hold.
type leakLog struct {
	at         []time.Time
	heap, arna []float64
}

// value returns the bytes a log column held at t, linearly between records.
func (l *leakLog) value(col []float64, t time.Time) float64 {
	i := sort.Search(len(l.at), func(i int) bool { return !l.at[i].Before(t) })
	switch {
	case i == 0:
		return col[0]
	case i == len(l.at):
		return col[len(col)-1]
	}
	f := t.Sub(l.at[i-1]).Seconds() / l.at[i].Sub(l.at[i-1]).Seconds()
	return col[i-1] + f*(col[i]-col[i-1])
}

// runLeakProgram runs the truth program for d under the agent, which
// writes arena and heap uploads every 100 ms to a directory it returns:
// a Go heap leak of 2 KiB every 10 ms (200 KiB/s), an arena never reset
// taking 1 KiB every 10 ms (100 KiB/s); the controls: a cache filling
// 4 KiB every 10 ms for the first 3 s, a heap sawtooth (2 KiB every
// 10 ms, freed each 250 ms), an arena sawtooth (reset each 250 ms), a
// steady state (objects living 1 s) and 6.4 MiB/s of churn.
func runLeakProgram(t *testing.T, d time.Duration) (string, *leakLog) {
	t.Helper()
	leakTruthSetup(t)
	dir := filepath.Join(t.TempDir(), "profiles")
	p, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	up, err := agent.NewDir(agent.DirConfig{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.Start(agent.Config{
		AppName: "leaky", Interval: 100 * time.Millisecond,
		Sources:   []agent.Source{agent.ProfilerSource(p), agent.HeapSource()},
		Uploaders: []agent.Uploader{up}, Logger: slog.New(slog.DiscardHandler),
		QueueSize: 10000, // every snapshot kept, however far the synced writes fall behind
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	log, leakArena := runLeakLoop(func() bool { return time.Since(start) < d }, true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if st := a.Stats(); st.Dropped != 0 || st.Failed != 0 || st.Unconfirmed != 0 || st.Uploaded != st.Collected {
		t.Fatalf("the directory lacks snapshots: %+v", st)
	}
	leakArena.Reset()
	return dir, log
}

// leakTruthSetup samples the arenas and the Go heap at a mean of 512
// bytes and empties the truth program's sites, until the test ends.
func leakTruthSetup(t *testing.T) {
	t.Helper()
	setMeanBytes(t, 512)
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 512
	heapLeaked, heapCache, heapSaw, heapSteady = nil, nil, nil, [100][][]byte{}
	t.Cleanup(func() {
		runtime.MemProfileRate = old
		heapLeaked, heapCache, heapSaw, heapSteady = nil, nil, nil, [100][][]byte{}
	})
}

// runLeakLoop runs the truth program's sites until more returns false
// (the two leaks only if leak) and returns its log of what the leaking sites hold and the
// leaking arena, for the caller to reset when the last snapshot is taken.
func runLeakLoop(more func() bool, leak bool) (*leakLog, *arena.Arena) {
	leakArena, sawArena := arena.NewArena(arena.WithSeed(46, 1)), arena.NewArena(arena.WithSeed(46, 2))
	log := &leakLog{}
	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var heapBytes, arenaBytes float64
	for i := 0; more(); i++ {
		<-tick.C
		if leak {
			leakHeapSite()
			heapBytes += 2048
			leakArenaSite(leakArena)
			arenaBytes += 1024
			log.at, log.heap, log.arna = append(log.at, time.Now()), append(log.heap, heapBytes), append(log.arna, arenaBytes)
		}
		if time.Since(start) < 3*time.Second {
			leakCacheSite()
		}
		leakSawtoothSite()
		leakArenaSawtoothSite(sawArena)
		leakSteadySite(i % 100)
		leakChurnSite()
		if i%25 == 24 { // a cycle of 250 ms, shorter than a batch
			heapSaw = nil
			sawArena.Reset()
		}
		if i%10 == 9 {
			runtime.GC() // the heap profile is as of the last GC
		}
	}
	return log, leakArena
}

// TestLeaksRealRuntime runs the truth program under the real runtime,
// profiler and agent, and reads its Config.Dir directory: the two leaking
// sites are flagged, their intervals cover the rates the program's own
// log gives over the fit's span, and no control site is flagged. At
// -confidence 0.999999 the intervals of all groups hold together with
// probability at least 1-1e-6, so a control flagged or a leak's rate
// missed fails a sound method with probability below 1e-6.
func TestLeaksRealRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a program for 10 s")
	}
	dir, log := runLeakProgram(t, 10*time.Second)
	code, out, errOut := runCLI("leaks", "-json", "-confidence", "0.999999", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got leaksJSON
	var rows []leakRow
	if err := json.Unmarshal([]byte(out), &struct {
		*leaksJSON
		Rows *[]leakRow `json:"rows"`
	}{&got, &rows}); err != nil {
		t.Fatal(err)
	}
	// The fit's span, from the snapshots' times (the heap files' names).
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var times []time.Time
	for _, e := range ents {
		if kind, ok := dirFileKind(e.Name()); ok && kind == "heap" {
			at, err := time.Parse(dirTimeLayout, e.Name()[:len(dirTimeLayout)])
			if err != nil {
				t.Fatal(err)
			}
			if n := len(times); n > 0 && at.Equal(times[n-1]) {
				// A second upload in the same millisecond (Config.Dir's
				// "-2" name): leaks reads one snapshot of the two.
				continue
			}
			times = append(times, at)
		}
	}
	// One upload's heap and arena profiles are one point in time.
	if got.Snapshots != len(times) {
		t.Errorf("%d snapshots read from %d uploads of a heap and an arena profile each", got.Snapshots, len(times))
	}
	secs := make([]float64, len(times))
	for i, x := range times {
		secs[i] = x.Sub(times[0]).Seconds()
	}
	from, err := leaks.Window(secs)
	if err != nil {
		t.Fatal(err)
	}
	span := times[len(times)-1].Sub(times[from]).Seconds()
	truth := map[string]float64{
		"heap leakHeapSite":   (log.value(log.heap, times[len(times)-1]) - log.value(log.heap, times[from])) / span,
		"arena leakArenaSite": (log.value(log.arna, times[len(times)-1]) - log.value(log.arna, times[from])) / span,
	}
	controls := []string{"leakCacheSite", "leakSawtoothSite", "leakArenaSawtoothSite", "leakSteadySite", "leakChurnSite"}
	found := map[string]bool{}
	for _, r := range rows {
		fn := r.Key[strings.LastIndexByte(r.Key, '.')+1:]
		if want, ok := truth[r.Kind+" "+fn]; ok {
			found[r.Kind+" "+fn] = true
			t.Logf("%s %s: rate %.0f B/s [%.0f, %.0f], program's own %.0f B/s", r.Kind, fn, r.Rate, r.Lo, r.Hi, want)
			if !r.Flagged || r.Lo > want || r.Hi < want {
				t.Errorf("%s %s: rate %.0f [%.0f, %.0f] flagged %v, want flagged and covering %.0f", r.Kind, fn, r.Rate, r.Lo, r.Hi, r.Flagged, want)
			}
		}
		for _, c := range controls {
			if fn == c {
				found[c] = true
				t.Logf("control %s %s: rate %.0f B/s [%.0f, %.0f]", r.Kind, fn, r.Rate, r.Lo, r.Hi)
				if r.Flagged {
					t.Errorf("control %s %s flagged: rate %.0f [%.0f, %.0f]", r.Kind, fn, r.Rate, r.Lo, r.Hi)
				}
			}
		}
	}
	for _, k := range append([]string{"heap leakHeapSite", "arena leakArenaSite"}, controls...) {
		if !found[k] {
			t.Errorf("no row for %s", k)
		}
	}
	t.Logf("%d snapshots over %.1f s, %d groups", got.Snapshots, got.WindowS, len(rows))
	if code, out, errOut := runCLI("leaks", "-n", "6", "-limit", "1GiB", dir); code != 0 {
		t.Errorf("the table: exit %d: %s", code, errOut)
	} else {
		t.Logf("arenaprof leaks -n 6 -limit 1GiB DIR:\n%s", out)
	}
	// The page of the same read plots each flagged group, a point per
	// snapshot.
	page := filepath.Join(t.TempDir(), "leaks.html")
	if p := os.Getenv("ARENAPROF_LEAKS_PAGE"); p != "" {
		page = p
	}
	if code, _, errOut := runCLI("html", "-leaks", "-confidence", "0.999999", "-o", page, dir); code != 0 {
		t.Fatalf("html -leaks: exit %d: %s", code, errOut)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	flagged := 0
	for _, r := range rows {
		if r.Flagged {
			flagged++
		}
	}
	if n := strings.Count(string(html), `<figure class="leak"`); n != flagged || flagged == 0 {
		t.Errorf("html -leaks: %d plots for %d flagged groups", n, flagged)
	}
	// The snapshots analysed, after a restart if any: the heading's count.
	head := regexp.MustCompile(`<pre class="heading">(\d+) snapshots, `).FindStringSubmatch(string(html))
	if head == nil {
		t.Fatal("html -leaks: no heading with the snapshots' count")
	}
	for _, m := range regexp.MustCompile(`<polyline class="inuse" points="([^"]*)"`).FindAllStringSubmatch(string(html), -1) {
		if n := strconv.Itoa(len(strings.Fields(m[1]))); n != head[1] {
			t.Errorf("html -leaks: a plot of %s points for %s snapshots", n, head[1])
		}
	}
}
