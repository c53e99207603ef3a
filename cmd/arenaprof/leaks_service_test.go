package main

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	pprofhttp "net/http/pprof"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/internal/leaks"
	"github.com/arenaprof/arenaprof/profiler"
)

func TestLeaksServiceArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-seconds", "6", "-every", "1s", "http://127.0.0.1:1"}, "takes 7 snapshots (one at once, then one every 1s): at least 8 are needed; give -seconds 7 or more, or -every 857ms or less"},
		{[]string{"-seconds", "1", "http://127.0.0.1:1"}, "takes 2 snapshots"},
		{[]string{"-seconds", "10", "dir"}, "-seconds and -every take a service's base URL"},
		{[]string{"-every", "1s", "http://127.0.0.1:1"}, "-every 1s without -seconds"},
		{[]string{"-seconds", "0", "http://127.0.0.1:1"}, `-seconds "0": want a positive number`},
		{[]string{"-seconds", "10", "-every", "-1s", "http://127.0.0.1:1"}, `-every "-1s": want a positive duration`},
		{[]string{"-seconds", "10", "http://127.0.0.1:1/debug/pprof/heap"}, "give the service's base URL (e.g. http://127.0.0.1:1), not a profile's"},
		{[]string{"http://127.0.0.1:1", "dir"}, "a service's base URL is read alone: 2 inputs given"},
		{[]string{"-"}, "standard input"},
	} {
		code, _, errOut := runCLI(append([]string{"leaks"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("leaks %v: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestLeaksService runs the truth program of TestLeaksRealRuntime under
// the real runtime and profiler, served as arenaprof.Start serves it, and
// reads it with leaks -seconds 5 -every 100ms URL while it runs. With the
// two leaks, both are flagged and their intervals cover the rates the
// program's log gives over the fit's span (the times of the snapshots
// the service served); without them, neither leaking site has a row and
// no control is flagged. At -confidence 0.999999 a sound method fails
// either with probability below 1e-6. The limit is the service's
// GOMEMLIMIT (or a lower cgroup memory.max), as the table says.
func TestLeaksService(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a program for 12 s")
	}
	old := debug.SetMemoryLimit(1 << 40)
	defer debug.SetMemoryLimit(old)
	for _, leak := range []bool{true, false} {
		name := map[bool]string{true: "leak", false: "none"}[leak]
		t.Run(name, func(t *testing.T) {
			leakTruthSetup(t)
			p, err := profiler.Start()
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop()
			var mu sync.Mutex
			var served []time.Time
			mux := http.NewServeMux()
			memory := export.MemoryHandler(p)
			mux.Handle(serviceMemoryPath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				served = append(served, time.Now())
				mu.Unlock()
				memory.ServeHTTP(w, r)
			}))
			mux.Handle(serviceRSSPath, export.RSSHandler())
			mux.Handle("/debug/arenaprof/arenas", export.ArenasHandler())
			srv := httptest.NewServer(mux)
			defer srv.Close()

			// The program runs until the read ends, however long its
			// snapshots take on a loaded machine.
			var log *leakLog
			var stop atomic.Bool
			done := make(chan struct{})
			go func() {
				defer close(done)
				l, a := runLeakLoop(func() bool { return !stop.Load() }, leak)
				log = l
				a.Reset()
			}()
			time.Sleep(500 * time.Millisecond)
			args := []string{"leaks", "-json", "-confidence", "0.999999", "-seconds", "5", "-every", "100ms", srv.URL}
			if !leak {
				args = []string{"leaks", "-confidence", "0.999999", "-seconds", "5", "-every", "100ms", srv.URL}
			}
			code, out, errOut := runCLI(args...)
			stop.Store(true)
			<-done
			srv.Close() // waits for the handlers
			mu.Lock()
			defer mu.Unlock()
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if !strings.Contains(errOut, "arenaprof leaks: snapshot 1 of 51") || !strings.Contains(errOut, "snapshot 51 of 51") {
				t.Errorf("progress on stderr: %q", errOut)
			}
			if !leak {
				t.Logf("arenaprof leaks -seconds 5 -every 100ms URL:\n%s", out)
				if !strings.Contains(out, "limit ") || !strings.Contains(out, "(the service's ") {
					t.Errorf("no limit from the service in the table:\n%s", out)
				}
				for _, line := range strings.Split(out, "\n") {
					if strings.Contains(line, "LEAK") && strings.Contains(line, "arenaprof.leak") {
						t.Errorf("a site of the program flagged without a leak: %s", line)
					}
				}
				if !strings.Contains(out, "leaked goroutines") && !strings.Contains(out, "note: ") {
					t.Errorf("no goroutine leaks nor a note on them:\n%s", out)
				}
				return
			}
			var got leaksJSON
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			if got.Snapshots != 51 || len(served) != 51 {
				t.Fatalf("%d snapshots read, %d served, want 51", got.Snapshots, len(served))
			}
			if got.Goroutines == nil || (len(got.Goroutines) == 0 && got.GoroutinesNote == "") {
				t.Errorf("goroutines %v, note %q", got.Goroutines, got.GoroutinesNote)
			}
			secs := make([]float64, len(served))
			for i, x := range served {
				secs[i] = x.Sub(served[0]).Seconds()
			}
			from, err := leaks.Window(secs)
			if err != nil {
				t.Fatal(err)
			}
			last := served[len(served)-1]
			span := last.Sub(served[from]).Seconds()
			truth := map[string]float64{
				"heap leakHeapSite":   (log.value(log.heap, last) - log.value(log.heap, served[from])) / span,
				"arena leakArenaSite": (log.value(log.arna, last) - log.value(log.arna, served[from])) / span,
			}
			checkTruthRows(t, got.Rows, truth)
		})
	}
}

// checkTruthRows checks that the leaking sites of truth are flagged with
// intervals covering their rates, and that no control site is flagged.
func checkTruthRows(t *testing.T, rows []leakRow, truth map[string]float64) {
	t.Helper()
	controls := []string{"leakCacheSite", "leakSawtoothSite", "leakArenaSawtoothSite", "leakSteadySite", "leakChurnSite"}
	found := map[string]bool{}
	for _, r := range rows {
		fn := r.Key[strings.LastIndexByte(r.Key, '.')+1:]
		if want, ok := truth[r.Kind+" "+fn]; ok {
			found[r.Kind+" "+fn] = true
			t.Logf("%s %s: rate %.0f B/s [%.0f, %.0f], program's own %.0f B/s", r.Kind, fn, r.Rate, r.Lo, r.Hi, want)
			if !r.Flagged || r.Lo > want || r.Hi < want || math.IsNaN(want) {
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
	for k := range truth {
		if !found[k] {
			t.Errorf("no row for %s", k)
		}
	}
}

// TestLeaksServiceHeapOnly reads a service serving net/http/pprof's heap
// profile alone (no arenaprof handlers): its Go heap is read, and the
// heading says so and that it states no limit.
func TestLeaksServiceHeapOnly(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle(serviceHeapPath, pprofhttp.Handler("heap"))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	code, out, errOut := runCLI("leaks", "-seconds", "0.7", "-every", "100ms", srv.URL)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"8 snapshots", "its Go heap alone is read, from /debug/pprof/heap", "note: no limit: the service's GOMEMLIMIT and memory.max could not be read", "serves no /debug/pprof/goroutineleak"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\n  arena ") {
		t.Errorf("arena rows from a heap profile:\n%s", out)
	}
}

// FuzzLeaksServiceFlags feeds -seconds and -every: a read is refused with
// a usage error, planned with at least 8 snapshots of a positive
// interval within a day, or (-seconds empty) not planned, never a panic.
func FuzzLeaksServiceFlags(f *testing.F) {
	f.Add("600", "1s")
	f.Add("7", "")
	f.Add("NaN", "1ns")
	f.Add("86400", "1ns")
	f.Add("1e300", "-1s")
	f.Add("0.000001", "9223372036854775807ns")
	f.Fuzz(func(t *testing.T, secs, every string) {
		args := []string{"-seconds=" + secs}
		if every != "" {
			args = append(args, "-every="+every)
		}
		o, err := parseLeaksArgs(append(args, "http://127.0.0.1:1"), io.Discard)
		if err != nil {
			var te *topError
			if !errors.As(err, &te) || te.code != 2 {
				t.Fatalf("%v: %v, want a usage error", args, err)
			}
			return
		}
		if o.seconds == 0 && o.every == 0 {
			return // -seconds= empty: the goroutine leaks alone
		}
		if o.every <= 0 || o.seconds <= 0 || o.seconds > maxLeaksSeconds*time.Second || int(o.seconds/o.every)+1 < leaks.MinSnapshots {
			t.Fatalf("%v: seconds %v every %v", args, o.seconds, o.every)
		}
	})
}
