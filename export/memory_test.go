package export_test

import (
	"bytes"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/report"
)

var heapSink any

// allocHeapBuffers allocates n heap buffers of 32 KiB (an exact size class).
//
//go:noinline
func allocHeapBuffers(n int) {
	for range n {
		heapSink = new([32 << 10]byte)
	}
	heapSink = nil
}

// TestBuildMemory: one profile holds the arena samples and the Go heap's,
// told apart by the memory label; report gives both intervals that hold
// their truth (at 1-1e-7, two rows: false failure below 2e-7; the arena's
// row is seeded at mean 1, so only the heap's is random; at 1-1e-6 the
// two made up to 2e-6), and the real go tool pprof reads it,
// -tagfocus=memory=heap keeping the heap part. The heap's 20 MiB go
// unsampled at the default MemProfileRate with probability exp(-40).
func TestBuildMemory(t *testing.T) {
	setMeanBytes(t, 1)
	p := startProfiler(t)
	a := newTestArena(t, 3, hooks.Labels{})
	allocSmall(a, 1000)
	const nHeap = 640 // 20 MiB: about 40 samples at the default rate
	allocHeapBuffers(nHeap)
	runtime.GC() // the heap profile is as of the last GC

	prof, err := export.BuildMemory(p.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := prof.CheckValid(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := prof.Write(&buf); err != nil {
		t.Fatal(err)
	}
	data := bytes.Clone(buf.Bytes())
	back, err := report.Parse(&buf, report.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mem := map[string]int{}
	for _, s := range back.Sample {
		mem[s.Label["memory"][0]]++
	}
	if mem["arena"] == 0 || mem["heap"] == 0 || len(mem) != 2 {
		t.Fatalf("memory labels: %v", mem)
	}

	res, err := report.Table(back, report.TableOptions{By: "func", Confidence: 1 - 1e-7})
	if err != nil {
		t.Fatal(err)
	}
	truth := map[string]float64{
		"github.com/arenaprof/arenaprof/export_test.allocSmall":       1000 * 16,
		"github.com/arenaprof/arenaprof/export_test.allocHeapBuffers": nHeap * 32 << 10,
	}
	for _, r := range res.Rows {
		want, ok := truth[r.Key]
		if !ok {
			continue
		}
		delete(truth, r.Key)
		t.Logf("%s: true %.0f, estimate %d in [%.0f, %.0f]", r.Key, want, r.Bytes, r.Lo, r.Hi)
		if !(r.Lo <= want && want <= r.Hi) {
			t.Errorf("%s: true %.0f outside [%.0f, %.0f]", r.Key, want, r.Lo, r.Hi)
		}
	}
	if len(truth) > 0 {
		t.Errorf("no rows for %v", truth)
	}
	if res.HeapRate != int64(runtime.MemProfileRate) {
		t.Errorf("HeapRate %d", res.HeapRate)
	}

	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: the go tool pprof part is skipped")
	}
	path := filepath.Join(t.TempDir(), "memory.pb.gz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, pprof := toolPprof(t, goBin, path)
	all := pprof("-top", "-nodefraction=0")
	heapOnly := pprof("-top", "-nodefraction=0", "-tagfocus=memory=heap")
	if !strings.Contains(all, "allocSmall") || !strings.Contains(all, "allocHeapBuffers") {
		t.Errorf("-top lacks a part:\n%s", all)
	}
	// allocSmall allocates no heap memory itself (flat 0 in the heap
	// part), but the arena's chunk it fills is a heap allocation under it,
	// which the Go heap profile may sample: only its cum may be non-zero.
	if f := flatOf(heapOnly, "allocSmall"); f != "" && f != "0" || !strings.Contains(heapOnly, "allocHeapBuffers") {
		t.Errorf("-tagfocus=memory=heap:\n%s", heapOnly)
	}
}

func TestMemoryHandler(t *testing.T) {
	p := startProfiler(t)
	h := export.MemoryHandler(p)
	for _, tc := range []struct {
		query string
		code  int
		want  string
	}{
		{"", 200, ""},
		{"debug=1", 200, "Go heap samples at MemProfileRate"},
		{"seconds=1", 400, "no seconds=N window"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/arenaprof/memory?"+tc.query, nil))
		body, _ := io.ReadAll(rec.Result().Body)
		if rec.Code != tc.code || !strings.Contains(string(body), tc.want) {
			t.Errorf("?%s: %d %q", tc.query, rec.Code, body)
		}
		if tc.query == "" {
			q, err := profile.ParseData(body)
			if err != nil {
				t.Fatal(err)
			}
			if len(q.Sample) == 0 || rec.Result().Header.Get("Content-Disposition") != `attachment; filename="memory.pb.gz"` {
				t.Errorf("profile with %d samples, headers %v", len(q.Sample), rec.Result().Header)
			}
		}
	}
}

// flatOf returns the flat column of the row of go tool pprof -top output
// whose function name ends with fn, or "" if there is none.
func flatOf(top, fn string) string {
	for line := range strings.Lines(top) {
		f := strings.Fields(line)
		if len(f) == 6 && strings.HasSuffix(f[5], "."+fn) {
			return f[0]
		}
	}
	return ""
}
