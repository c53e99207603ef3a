package export_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/internal/rss"
)

var rssKeep [][]byte

// TestRSSHandler fetches the resident-memory profile of this process and
// checks it with the real go tool pprof: its resident total is the RSS
// the profile states, every class is there, and arena memory sits under
// arena/*.
func TestRSSHandler(t *testing.T) {
	for range 200 {
		b := make([]byte, 16<<10)
		for i := range b {
			b[i] = 1
		}
		rssKeep = append(rssKeep, b)
	}
	a := arena.NewArena()
	defer a.Free()
	s := arena.MakeSlice[byte](a, 1<<20, 1<<20)
	for i := range s {
		s[i] = 1 // every page resident, whatever memory the heap handed out
	}
	// The classes take the arenas' bytes out of the objects live at the
	// last GC first: arenas of this package's other tests, made since the
	// last GC, would otherwise take all of go/heap/live (and say so in a
	// note). A GC now makes every arena held one of the live objects.
	runtime.GC()

	srv := httptest.NewServer(export.RSSHandler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, %v: %s", resp.StatusCode, err, data)
	}
	p, err := profile.Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var rss int64 = -1
	for _, c := range p.Comments {
		if v, ok := strings.CutPrefix(c, "arenaprof rss_bytes="); ok {
			rss, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if rss <= 0 {
		t.Fatalf("no RSS in the comments %q", p.Comments)
	}
	classes := map[string]int64{}
	var sum int64
	iv := slices.IndexFunc(p.SampleType, func(st *profile.ValueType) bool { return st.Type == "resident" })
	if iv < 0 || p.DefaultSampleType != "resident" {
		t.Fatalf("sample types %v, default %q: want resident the default", p.SampleType, p.DefaultSampleType)
	}
	for _, s := range p.Sample {
		sum += s.Value[iv]
		classes[s.Label["class"][0]] += s.Value[iv]
	}
	if sum != rss {
		t.Errorf("samples sum to %d, the RSS is %d", sum, rss)
	}
	for _, c := range []string{"go/heap/live", "go/runtime", "arena/used", "binary"} {
		if classes[c] <= 0 {
			t.Errorf("class %s has %d bytes: %v", c, classes[c], classes)
		}
	}
	if classes["arena/used"]+classes["arena/free"] < 1<<20 {
		t.Errorf("arena/* holds %d bytes, the arena 1 MiB at least", classes["arena/used"]+classes["arena/free"])
	}
	if testing.Short() {
		return
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go binary:", err)
	}
	path := filepath.Join(t.TempDir(), "rss.pb.gz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, run := toolPprof(t, goBin, path)
	out := run("-sample_index=resident", "-unit=B", "-top")
	m := regexp.MustCompile(`of (\d+)B total`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no total in go tool pprof -top:\n%s", out)
	}
	if m[1] != strconv.FormatInt(rss, 10) {
		t.Errorf("go tool pprof's total %sB, the RSS %d", m[1], rss)
	}
	// Without -sample_index, the default view is resident as well (the
	// default sample type, and the last one, which tools that ignore the
	// default show).
	def := run("-unit=B", "-top")
	if !strings.Contains(def, "Type: resident\n") || !strings.Contains(def, "of "+m[1]+"B total") {
		t.Errorf("go tool pprof -top without -sample_index: want Type: resident and the total %sB:\n%.1000s", m[1], def)
	}
	// The class frames: -top by cumulative shows go and go/heap/live.
	cum := run("-sample_index=resident", "-unit=B", "-top", "-cum")
	for _, f := range []string{" go\n", " go/heap\n", " go/heap/live\n", " arena/used\n", " binary\n"} {
		if !strings.Contains(cum, f) {
			t.Errorf("go tool pprof -top -cum has no frame %q:\n%s", strings.TrimSpace(f), cum)
		}
	}
	// -raw lists every sample with its class frames, root last.
	raw := run("-raw")
	if !strings.Contains(raw, "go/heap/live") || !strings.Contains(raw, "resident/bytes") {
		t.Errorf("go tool pprof -raw shows no go/heap/live sample or resident/bytes type:\n%.2000s", raw)
	}
	t.Log(cum)
}

// TestRSSPeakHandler: peak=1 without a watch is 404; with one it serves
// the peak profile; bad parameters are 400.
func TestRSSPeakHandler(t *testing.T) {
	srv := httptest.NewServer(export.RSSHandler())
	defer srv.Close()
	get := func(q string) (int, []byte) {
		t.Helper()
		resp, err := http.Get(srv.URL + q)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	for _, c := range []struct {
		q    string
		code int
		want string
	}{
		{"?peak=1", http.StatusNotFound, "no RSS watch runs"},
		{"?peak=yes", http.StatusBadRequest, "use peak=1"},
		{"?seconds=1", http.StatusBadRequest, "give peak=1"},
		{"?debug=1", http.StatusBadRequest, "takes peak=1 and seconds=N"},
		{"?peak=1&seconds=0", http.StatusBadRequest, ""},
	} {
		if code, body := get(c.q); code != c.code || !strings.Contains(string(body), c.want) {
			t.Errorf("%s: %d %q, want %d and %q", c.q, code, body, c.code, c.want)
		}
	}
	stop := rss.Watch()
	defer stop()
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(rss.WatchTick / 5) {
		if pk, _ := rss.CurrentPeak(); pk != nil {
			break // the watch's first read
		}
	}
	for _, q := range []string{"?peak=1", "?peak=1&seconds=1"} {
		code, body := get(q)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", q, code, body)
		}
		p, err := profile.ParseData(body)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(p.Comments, func(c string) bool { return strings.HasPrefix(c, "arenaprof rss peak since=") }) {
			t.Errorf("%s: no peak comment in %q", q, p.Comments)
		}
	}
}
