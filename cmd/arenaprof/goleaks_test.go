package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// goleakTruth is what testdata/goleakservice prints after its URL.
type goleakTruth struct {
	Holders     int64  `json:"holders"`
	DeepHolders int64  `json:"deep_holders"`
	Returners   int64  `json:"returners"`
	Waiters     int64  `json:"waiters"`
	Busy        int64  `json:"busy"`
	Chunk       int64  `json:"chunk"`
	HeldBytes   int64  `json:"held_bytes"`
	Go          string `json:"go"`
	LeakProfile bool   `json:"leak_profile"`
}

// startGoleakService builds testdata/goleakservice with the toolchain
// GOTOOLCHAIN names ("local": this test's) and GOEXPERIMENT set to
// experiment, runs it with args (HOLDERS CHUNK [PACE RATE]) and returns
// its base URL and truth; it is killed when the test ends.
func startGoleakService(t *testing.T, toolchain, experiment string, args ...string) (string, goleakTruth) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	env := append(os.Environ(), "GOTOOLCHAIN="+toolchain, "GOEXPERIMENT="+experiment, "CGO_ENABLED=0")
	if toolchain != "local" {
		// The toolchain comes from the module proxy on first use: skipped
		// where the proxy cannot be reached (failed under .ci/run).
		cmd := exec.Command(goBin, "version")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			skipWithoutProxy(t, goBin, env, "GOTOOLCHAIN="+toolchain+" (the toolchain, fetched on first use)", out)
			t.Fatalf("GOTOOLCHAIN=%s go version: %v\n%s", toolchain, err, out)
		}
	}
	bin := filepath.Join(t.TempDir(), "goleakservice")
	build := exec.Command(goBin, "build", "-o", bin, "./testdata/goleakservice")
	build.Env = env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("GOTOOLCHAIN=%s GOEXPERIMENT=%s go build: %v\n%s", toolchain, experiment, err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("goleakservice: %v\n%s", err, stderr.String())
	}
	url, truthJSON, _ := strings.Cut(strings.TrimSpace(line), " ")
	var truth goleakTruth
	if err := json.Unmarshal([]byte(truthJSON), &truth); err != nil {
		t.Fatalf("goleakservice printed %q: %v", line, err)
	}
	return url, truth
}

// TestGoroutineLeaksRealRuntime runs a service that leaks goroutines,
// some holding arenas, under the real runtime: Go 1.27.3 (from the
// module proxy; skipped where the proxy cannot be reached, failed there
// under .ci/run) serves the goroutine leak profile at arenaprof.Start's
// Mux, and the read finds every leaked goroutine by stack with the exact
// count and the exact bytes of the arenas each stack took and kept, none
// of the arenas live goroutines hold; so does this test's own toolchain
// (Go 1.26) with GOEXPERIMENT=goroutineleakprofile; without it, it
// serves none, and the read says how to turn it on. The first run builds the standard library
// for Go 1.27.3 and for the experiment (about 60 s each here); later runs
// take about 10 s.
func TestGoroutineLeaksRealRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a service")
	}
	for _, tc := range []struct{ toolchain, experiment string }{
		{"go1.27.3", ""},
		{"local", "goroutineleakprofile"},
		{"local", ""},
	} {
		t.Run(tc.toolchain+"+"+tc.experiment, func(t *testing.T) {
			url, truth := startGoleakService(t, tc.toolchain, tc.experiment, "5", "65536")
			t.Logf("%s: %+v", url, truth)
			if (tc.toolchain != "local" || tc.experiment != "") && !truth.LeakProfile {
				t.Fatalf("%s has no goroutine leak profile", truth.Go)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rows, note, err := readGoroutineLeaks(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			if !truth.LeakProfile {
				if len(rows) != 0 || rows == nil || !strings.Contains(note, "GOEXPERIMENT=goroutineleakprofile") || !strings.Contains(note, "Go 1.27") {
					t.Fatalf("%s without the profile: rows %+v, note %q", truth.Go, rows, note)
				}
				var out bytes.Buffer
				writeGoroutineLeaksTable(&out, rows, note)
				t.Logf("%s", out.String())
				return
			}
			if note != "" {
				t.Errorf("note %q", note)
			}
			// The bytes an arena of one chunk reserves, from the live
			// arenas of the busy goroutines (alive, not leaked).
			perArena := busyArenaBytes(t, url, truth.Busy)
			if perArena < truth.Chunk || perArena > truth.Chunk+64 {
				t.Fatalf("a busy arena reserves %d bytes, want one chunk of %d", perArena, truth.Chunk)
			}
			want := map[string]goroutineLeakRow{
				"main.holder":                   {Count: truth.Holders, Arenas: truth.Holders, ArenaBytes: truth.Holders * perArena},
				"main.holder < main.deepHolder": {Count: truth.DeepHolders, Arenas: truth.DeepHolders, ArenaBytes: truth.DeepHolders * perArena},
				"main.returner":                 {Count: truth.Returners},
				"main.waiter":                   {Count: truth.Waiters},
			}
			for _, r := range rows {
				user := userFrames(r.Stack)
				key := strings.Join(slices.Compact(slices.Clone(user)), " < ")
				w, ok := want[key]
				if !ok {
					t.Errorf("unexpected leaked stack %v (count %d)", r.Stack, r.Count)
					continue
				}
				delete(want, key)
				if r.Count != w.Count || r.Arenas != w.Arenas || r.ArenaBytes != w.ArenaBytes {
					t.Errorf("%s: %d goroutines holding %d arenas of %d bytes, want %d holding %d of %d", key, r.Count, r.Arenas, r.ArenaBytes, w.Count, w.Arenas, w.ArenaBytes)
				}
			}
			for key := range want {
				t.Errorf("leaked goroutines of %s not found", key)
			}
			var out bytes.Buffer
			if code := run([]string{"leaks", url}, &out, &out); code != 0 || !strings.Contains(out.String(), "main.holder") {
				t.Errorf("leaks URL: exit %d\n%s", code, out.String())
			}
			t.Logf("%s", out.String())
			// The same rows after a -seconds read of the service's
			// in-use snapshots, in -json.
			code, jsonOut, errOut := runCLI("leaks", "-json", "-seconds", "0.7", "-every", "100ms", url)
			var got leaksJSON
			if err := json.Unmarshal([]byte(jsonOut), &got); code != 0 || err != nil {
				t.Fatalf("leaks -json -seconds: exit %d, %v: %s", code, err, errOut)
			}
			if got.Snapshots != 8 || !slices.EqualFunc(got.Goroutines, rows, func(a, b goroutineLeakRow) bool {
				return a.Count == b.Count && a.Arenas == b.Arenas && a.ArenaBytes == b.ArenaBytes && slices.Equal(a.Stack, b.Stack)
			}) {
				t.Errorf("leaks -json -seconds: %d snapshots, goroutines %+v, want 8 and %+v", got.Snapshots, got.Goroutines, rows)
			}
			checkLeakHandler(t, url, truth.Holders+truth.DeepHolders+truth.Returners+truth.Waiters)
		})
	}
}

// busyArenaBytes reads the live arenas of the service at url and returns
// the reserved bytes of each of the n arenas main.busy took.
func busyArenaBytes(t *testing.T, url string, n int64) int64 {
	t.Helper()
	resp, err := http.Get(url + "/debug/arenaprof/arenas")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p, err := profile.Parse(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Sample {
		if len(s.Location) > 0 && s.Location[0].Line[0].Function.Name == "main.busy" {
			if s.Value[2] != n || s.Value[0]%n != 0 {
				t.Fatalf("main.busy holds %d arenas of %d bytes, want %d of one size", s.Value[2], s.Value[0], n)
			}
			return s.Value[0] / n
		}
	}
	t.Fatal("no live arenas of main.busy")
	return 0
}

// checkLeakHandler checks how /debug/pprof/goroutineleak answers: the
// profile as a file, its text with debug=1, and no seconds.
func checkLeakHandler(t *testing.T, url string, leaked int64) {
	t.Helper()
	get := func(q string) (*http.Response, string) {
		resp, err := http.Get(url + "/debug/pprof/goroutineleak" + q)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	resp, _ := get("")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Disposition") != `attachment; filename="goroutineleak"` {
		t.Errorf("profile: %s %v", resp.Status, resp.Header)
	}
	resp, body := get("?debug=1")
	if want := "goroutineleak profile: total " + strconv.FormatInt(leaked, 10) + "\n"; resp.StatusCode != 200 || !strings.HasPrefix(body, want) {
		t.Errorf("debug=1: %s, want %q first:\n%s", resp.Status, want, body)
	}
	for _, q := range []string{"?seconds=5", "?debug=x"} {
		if resp, body := get(q); resp.StatusCode != 400 || resp.Header.Get("X-Go-Pprof") != "1" {
			t.Errorf("%s: %s %v %s", q, resp.Status, resp.Header, body)
		}
	}
}
