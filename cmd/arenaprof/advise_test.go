package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// The advise fixture: two heap profiles of internal/testkit/advisecheck's service
// (see testdata/README.md).
var (
	adviseEarlier = filepath.Join("testdata", "advise_earlier.pb.gz")
	adviseLater   = filepath.Join("testdata", "advise_later.pb.gz")
)

// siteBuf is named as when the fixture was recorded, before the package
// moved to internal/testkit/advisecheck.
const siteBuf = "github.com/arenaprof/arenaprof/internal/advisecheck.reqBuf"

func runAdviseArgs(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = runAdvise(args, &o, &e)
	return code, o.String(), e.String()
}

func TestAdviseTable(t *testing.T) {
	code, out, errOut := runAdviseArgs("-full", "-n", "3", adviseEarlier, adviseLater)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"Go heap by site over a window of 408ms, MemProfileRate 4096, 95% intervals",
		"at most 100ms",
		"showing 3 of 32 groups (5 candidates)",
		"predicted GC saving: 80.3% of GC cycles, 95% interval [79.4%, 81.2%]",
		"GOMEMLIMIT",
		"4096 B x 7.96k  " + siteBuf,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	// Flags after the profiles, and a longer -lifetime: the cache (410
	// ms) becomes a candidate.
	code, out, errOut = runAdviseArgs(adviseEarlier, adviseLater, "-full", "-lifetime", "10s", "-n", "0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasSuffix(line, ".cacheEntry") && !strings.HasPrefix(strings.TrimSpace(line), "yes") {
			t.Errorf("-lifetime 10s: the cache is no candidate: %s", line)
		}
	}
}

func TestAdviseJSON(t *testing.T) {
	code, out, errOut := runAdviseArgs("-json", adviseEarlier, adviseLater)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"window_s", "gc_saving", "gc_saving_lo", "gc_saving_hi", "rows", "total", "limits"} {
		if _, ok := got[k]; !ok {
			t.Errorf("no %q in the JSON", k)
		}
	}
	rows := got["rows"].([]any)
	first := rows[0].(map[string]any)
	for _, k := range []string{"key", "alloc_bytes", "alloc_lo", "alloc_hi", "live_bytes", "live_lo", "live_hi", "lifetime_s", "lifetime_lo", "lifetime_hi", "candidate", "sizes"} {
		if _, ok := first[k]; !ok {
			t.Errorf("no %q in a row", k)
		}
	}
	if first["key"] != siteBuf || first["candidate"] != true {
		t.Errorf("first row %v", first)
	}
	if w := got["window_s"].(float64); w < 0.4 || w > 0.42 {
		t.Errorf("window_s %v", w)
	}
	lo, s, hi := got["gc_saving_lo"].(float64), got["gc_saving"].(float64), got["gc_saving_hi"].(float64)
	if !(0 < lo && lo <= s && s <= hi && hi < 1) {
		t.Errorf("saving %v in [%v, %v]", s, lo, hi)
	}
}

func TestAdviseBadInput(t *testing.T) {
	arenaProf := fixturePath(t)
	var gbuf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&gbuf, 0); err != nil {
		t.Fatal(err)
	}
	goroutines := writeTemp(t, "goroutine.pb.gz", gbuf.Bytes())
	data, err := os.ReadFile(adviseLater)
	if err != nil {
		t.Fatal(err)
	}
	stdinLater := func() { stdin = bytes.NewReader(data) }
	heapNow := writeTemp(t, "now.pb.gz", heapProfile(t)) // this process: another binary
	link := filepath.Join(t.TempDir(), "link.pb.gz")
	abs, err := filepath.Abs(adviseLater)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, link); err != nil {
		t.Fatal(err)
	}
	cpu := writeTemp(t, "cpu.pb.gz", profileBytes(t, &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 10000000, TimeNanos: 1,
	}))
	for _, tc := range []struct {
		name  string
		args  []string
		setup func()
		code  int
		err   string
	}{
		{"swapped", []string{adviseLater, adviseEarlier}, nil, 1, "is not later than EARLIER"},
		{"same", []string{adviseLater, adviseLater}, nil, 2, adviseLater + " is given twice, as EARLIER and LATER; give two profiles of one process, the earlier first"},
		{"same, spelled otherwise", []string{adviseLater, "./" + adviseLater}, nil, 2, "is given twice, as EARLIER and LATER"},
		{"same, through a link", []string{adviseLater, link}, nil, 2, link + " is given twice, as EARLIER and LATER"},
		{"arena", []string{arenaProf, adviseLater}, nil, 1, arenaProf + " (EARLIER) is an arenaprof profile, not a Go heap profile: its memory is in arenas already; read it with arenaprof top"},
		{"goroutines", []string{adviseEarlier, goroutines}, nil, 1, goroutines + " (LATER) is a goroutine profile (sample types goroutine/count): it holds no Go heap allocations; advise reads two Go heap or allocs profiles"},
		{"cpu", []string{cpu, adviseLater}, nil, 1, cpu + " (EARLIER) is a CPU profile (sample types samples/count, cpu/nanoseconds): it holds no Go heap allocations; advise reads two Go heap or allocs profiles of one process (runtime/pprof's, or /debug/pprof/heap)"},
		{"two binaries", []string{adviseEarlier, heapNow}, nil, 1, "two binaries"},
		{"legacy", []string{filepath.Join("testdata", "compile_memprofile.txt"), adviseLater}, nil, 1, "go tool pprof -proto"},
		{"missing", []string{"nosuch.pb.gz", adviseLater}, nil, 1, "no such file"},
		{"stdin", []string{adviseEarlier, "-"}, stdinLater, 0, ""},
		{"both stdin", []string{"-", "-"}, nil, 2, "cannot both be -"},
		{"one", []string{adviseLater}, nil, 2, "1 arguments where two profiles were expected"},
		{"three", []string{adviseEarlier, adviseLater, adviseLater}, nil, 2, "3 arguments"},
		{"by type", []string{"-by", "type", adviseEarlier, adviseLater}, nil, 2, `bad -by "type"`},
		{"by size", []string{"-by", "size", adviseEarlier, adviseLater}, nil, 2, `bad -by "size"`},
		{"label", []string{"-by", "label=endpoint", adviseEarlier, adviseLater}, nil, 1, `no sample carries the label "endpoint"`},
		{"lifetime unit", []string{"-lifetime", "100", adviseEarlier, adviseLater}, nil, 2, `bad -lifetime "100"; use a positive duration with its unit`},
		{"lifetime 0", []string{"-lifetime", "0s", adviseEarlier, adviseLater}, nil, 2, "bad -lifetime"},
		{"confidence", []string{"-confidence", "1", adviseEarlier, adviseLater}, nil, 2, "bad -confidence"},
		{"n", []string{"-n", "-1", adviseEarlier, adviseLater}, nil, 2, "bad -n"},
		{"seconds 0", []string{"-seconds", "0", "http://127.0.0.1:1/debug/pprof/heap"}, nil, 2, "bad -seconds"},
		{"seconds NaN", []string{"-seconds", "NaN", "http://127.0.0.1:1/debug/pprof/heap"}, nil, 2, "bad -seconds"},
		{"seconds file", []string{"-seconds", "5", adviseLater}, nil, 2, "-seconds takes the http(s) URL"},
		{"seconds two", []string{"-seconds", "5", adviseEarlier, adviseLater}, nil, 2, "-seconds takes one URL"},
		{"unknown flag", []string{"-sample", "inuse", adviseEarlier, adviseLater}, nil, 2, "flag provided but not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup()
				defer func() { stdin = os.Stdin }()
			}
			code, out, errOut := runAdviseArgs(tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.err) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, errOut, tc.code, tc.err)
			}
			if strings.Contains(errOut, "give an arenaprof profile") || strings.Contains(errOut, "not later") && tc.name != "swapped" {
				t.Errorf("stderr %q says what advise does not read, or not later for another cause", errOut)
			}
			if code != 0 && out != "" {
				t.Errorf("output beside an error: %q", out)
			}
			if code != 0 && strings.Count(errOut, "\n") != 1 {
				t.Errorf("error not on one line: %q", errOut)
			}
		})
	}
}

// TestAdviseSeconds serves the two fixture profiles one after the other
// and checks that -seconds fetches the URL twice, with gc=1, and says how
// long it waits.
func TestAdviseSeconds(t *testing.T) {
	e, err := os.ReadFile(adviseEarlier)
	if err != nil {
		t.Fatal(err)
	}
	l, err := os.ReadFile(adviseLater)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	var queries [2]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/pprof/heap" { // no arenaprof to name the Go release
			http.NotFound(w, r)
			return
		}
		i := n.Add(1) - 1
		if i < 2 {
			queries[i] = r.URL.RawQuery
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write([][]byte{e, l}[min(i, 1)])
	}))
	defer srv.Close()
	var slept time.Duration
	adviseSleep = func(d time.Duration) { slept += d }
	defer func() { adviseSleep = time.Sleep }()
	code, out, errOut := runAdviseArgs("-seconds", "2.5", "-json", srv.URL+"/debug/pprof/heap")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if n.Load() != 2 || queries != [2]string{"gc=1", "gc=1"} {
		t.Errorf("%d fetches, queries %q", n.Load(), queries)
	}
	if slept != 2500*time.Millisecond {
		t.Errorf("slept %v", slept)
	}
	if !strings.Contains(errOut, "arenaprof advise: EARLIER taken; LATER in 2.5s\n") || !strings.Contains(errOut, "LATER in 1.5s\n") {
		t.Errorf("progress: %q", errOut)
	}
	if !strings.Contains(out, `"window_s"`) {
		t.Errorf("output %q", out)
	}
}

func TestWithGC(t *testing.T) {
	for in, want := range map[string]string{
		"http://h/debug/pprof/heap":            "http://h/debug/pprof/heap?gc=1",
		"https://h/debug/pprof/allocs?debug=0": "https://h/debug/pprof/allocs?debug=0&gc=1",
		"http://h/debug/pprof/heap?gc=0":       "http://h/debug/pprof/heap?gc=0",
		"http://h/debug/arenaprof":             "http://h/debug/arenaprof",
		"heap.pb.gz":                           "heap.pb.gz",
		"-":                                    "-",
	} {
		if got := withGC(in); got != want {
			t.Errorf("withGC(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzAdviseFlags(f *testing.F) {
	f.Add("func", "100ms", "", "10", "0.95", false)
	f.Add("stack", "2s", "", "0", "0.5", true)
	f.Add("label=endpoint", "1h", "", "1", "0.999", false)
	f.Add("type", "100", "0", "-1", "1", false)
	f.Add("label=", "-5ms", "NaN", "x", "+Inf", true)
	f.Add("func", "9223372036854775807ns", "1e300", "99999999999999999999", "1e-300", false)
	f.Fuzz(func(t *testing.T, by, lifetime, seconds, n, conf string, js bool) {
		args := []string{"-by=" + by, "-lifetime=" + lifetime, "-n=" + n, "-confidence=" + conf}
		if seconds != "" {
			args = append(args, "-seconds="+seconds, "http://127.0.0.1:1/debug/pprof/heap")
		} else {
			args = append(args, adviseEarlier, adviseLater)
		}
		if js {
			args = append(args, "-json")
		}
		o, err := parseAdviseArgs(args)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "bad ") && !strings.Contains(err.Error(), "flag") {
				t.Errorf("%v: error %q", args, err)
			}
			return
		}
		if o.lifetime <= 0 || !(o.confidence > 0 && o.confidence < 1) || o.n < 0 || o.seconds < 0 ||
			(seconds != "" && (o.seconds <= 0 || o.seconds > maxAdviseSeconds*time.Second)) {
			t.Errorf("%v: accepted %+v", args, o)
		}
		if seconds == "" {
			code, out, errOut := runAdviseArgs(args...)
			if code != 0 && !strings.Contains(errOut, "label") {
				t.Errorf("%v: exit %d: %s", args, code, errOut)
			}
			if code == 0 && out == "" {
				t.Errorf("%v: no output", args)
			}
		}
	})
}

func TestAdviseHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"-help"}} {
		code, out, errOut := runAdviseArgs(args...)
		if code != 0 || out != "" || !strings.Contains(errOut, "usage: arenaprof advise") || !strings.Contains(errOut, "default 100ms: the span") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	var o, e bytes.Buffer
	if code := run([]string{"help", "advise"}, &o, &e); code != 0 || !strings.Contains(o.String(), "-lifetime D") {
		t.Errorf("arenaprof help advise: exit %d, %q", code, o.String())
	}
}

// jsonServiceProfiles builds testdata/jsonservice (a JSON service on
// encoding/json and net/http), runs it for requests paced by pause at
// GODEBUG=memprofilerate=rate (0: the runtime's default) and returns the
// two heap profiles it writes.
func jsonServiceProfiles(t *testing.T, bin string, rate, requests int, pause time.Duration) (earlier, later string) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(bin, dir, strconv.Itoa(requests), pause.String())
	cmd.Env = os.Environ()
	if rate > 0 {
		cmd.Env = append(cmd.Env, "GODEBUG=memprofilerate="+strconv.Itoa(rate))
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("jsonservice: %v\n%s", err, out)
	}
	return filepath.Join(dir, "earlier.pb.gz"), filepath.Join(dir, "later.pb.gz")
}

// TestAdviseJSONService: on a real JSON service advise names the frame
// the service owns, with the standard library's leaf beside it; at the
// default MemProfileRate it says why it has no candidate and which rate
// to set.
func TestAdviseJSONService(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "jsonservice")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/jsonservice").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Run("memprofilerate=512", func(t *testing.T) {
		// 300 requests decode about 3 MiB through reflect.growslice: at
		// rate 512 the chance that no sample sees it is below e^-6000,
		// and its objects die within the request.
		e, l := jsonServiceProfiles(t, bin, 512, 300, time.Millisecond)
		code, out, errOut := runAdviseArgs("-json", "-n", "0", e, l)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var res adviseJSON
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range res.Rows {
			frame, leaf, via := strings.Cut(r.Key, " via ")
			if !strings.HasPrefix(frame, "main.") && !strings.HasSuffix(r.Key, " (standard library only)") {
				t.Errorf("row %q names no frame of the service", r.Key)
			}
			if via && strings.HasPrefix(leaf, "main.") {
				t.Errorf("row %q: the leaf is the service's own", r.Key)
			}
			if r.Key == "main.handleOrder via reflect.growslice" {
				found = true
				t.Logf("%s: candidate %v, %.3g bytes [%.3g, %.3g]", r.Key, r.Candidate, r.AllocBytes, r.AllocLo, r.AllocHi)
				if !r.Candidate {
					t.Errorf("%s is no candidate: %+v", r.Key, r)
				}
			}
		}
		if !found {
			t.Errorf("no row main.handleOrder via reflect.growslice in\n%s", out)
		}
	})
	t.Run("default rate", func(t *testing.T) {
		// About 10 MiB over at least 0.9 s at 512 KiB, about 20 samples:
		// no group reaches the 21.9 MiB/s a candidate needs unless its
		// samples come at more than twice their mean (Poisson(20) >= 45:
		// p < 1e-6).
		e, l := jsonServiceProfiles(t, bin, 0, 300, 3*time.Millisecond)
		code, out, errOut := runAdviseArgs(e, l)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		for _, want := range []string{"0 candidates", "no candidate, but ", "GODEBUG=memprofilerate=4096"} {
			if !strings.Contains(out, want) {
				t.Errorf("no %q in\n%s", want, out)
			}
		}
	})
}

// TestWaitWithProgress: on a terminal the countdown updates one line in
// place each second; to a file or pipe it writes whole lines, a tenth of
// the wait apart.
func TestWaitWithProgress(t *testing.T) {
	isTerm := stderrIsTerminal
	defer func() { adviseSleep, stderrIsTerminal = time.Sleep, isTerm }()
	adviseSleep = func(time.Duration) {}
	for _, tc := range []struct {
		name     string
		terminal bool
		d        time.Duration
		want     string
	}{
		{"terminal", true, 3 * time.Second,
			"\rarenaprof advise: EARLIER taken; LATER in 3s" +
				"\rarenaprof advise: EARLIER taken; LATER in 2s" +
				"\rarenaprof advise: EARLIER taken; LATER in 1s" +
				"\rarenaprof advise: EARLIER taken; taking LATER\n"},
		{"terminal, shorter line after", true, 10500 * time.Millisecond, ""},
		{"pipe", false, 20 * time.Second,
			"arenaprof advise: EARLIER taken; LATER in 20s\narenaprof advise: EARLIER taken; LATER in 18s\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stderrIsTerminal = func() bool { return tc.terminal }
			var b bytes.Buffer
			w := &termWriter{w: &b}
			waitWithProgress(tc.d, w)
			got := b.String()
			if tc.want != "" && !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %q, want it to start %q", got, tc.want)
			}
			if tc.terminal {
				// Every update is as long as the longest before it, so it
				// covers that one whole; one newline, at the end.
				parts := strings.Split(strings.TrimSuffix(got, "\n"), "\r")[1:]
				for i := 1; i < len(parts); i++ {
					if len(parts[i]) < len(parts[i-1]) {
						t.Errorf("update %q shorter than %q before it", parts[i], parts[i-1])
					}
				}
				if strings.Count(got, "\n") != 1 || !strings.HasSuffix(got, "\n") {
					t.Errorf("newlines in %q", got)
				}
			} else if strings.Contains(got, "\r") {
				t.Errorf("carriage return in %q", got)
			}
		})
	}
}
