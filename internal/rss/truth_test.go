package rss_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/rss"
)

// truth is what testdata/truth prints: what it holds, in bytes.
type truth struct {
	Addr       string           `json:"addr"`
	Sites      map[string]int64 `json:"sites"`
	Goroutines int              `json:"goroutines"`
	ArenaUsed  int64            `json:"arena_used"`
	ArenaHeap  int64            `json:"arena_heap"`
	Mmap       int64            `json:"mmap"`
	File       int64            `json:"file"`
	CMalloc    int64            `json:"cmalloc"`
	Keep       int64            `json:"keep"`
}

// truthConfidence is the level of the intervals checked against the
// truth: with 3 sampled rows per run, a false failure has probability
// below 3e-7.
const truthConfidence = 1 - 1e-7

// TestTruth runs testdata/truth, a program of known parts, built without
// and (where gcc is) with cgo, reads its resident-memory profile over
// HTTP and checks each class against what the program holds, within the
// tolerance stated beside each check; the sampled go/heap/live rows'
// intervals must cover their sites' bytes. The per-class error is logged.
func TestTruth(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("smaps is Linux's")
	}
	if testing.Short() {
		t.Skip("builds and runs a program")
	}
	cgo := []string{"0"}
	if _, err := exec.LookPath("gcc"); err == nil {
		cgo = append(cgo, "1")
	}
	for _, c := range cgo {
		t.Run("cgo="+c, func(t *testing.T) { truthRun(t, c) })
	}
}

func truthRun(t *testing.T, cgo string) {
	bin := filepath.Join(t.TempDir(), "truth")
	build := exec.Command("go", "build", "-o", bin, "./testdata/truth")
	build.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the program's truth: %v", err)
	}
	var tr truth
	if err := json.Unmarshal([]byte(line), &tr); err != nil {
		t.Fatalf("%v: %q", err, line)
	}
	resp, err := http.Get("http://" + tr.Addr)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	res, err := rss.Parse(p, "func", truthConfidence)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, c := range res.Classes {
		got[c.Class] = c.Bytes
	}
	const MiB = 1 << 20
	var sites int64
	for _, b := range tr.Sites {
		sites += b
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cgo=%s RSS %d\n", cgo, res.RSSBytes)
	check := func(class string, want, tolerance int64, why string) {
		t.Helper()
		v := got[class]
		if class == "arena/*" {
			v = got[rss.ArenaUsed] + got[rss.ArenaFree]
		}
		rel := "-"
		if want != 0 {
			rel = fmt.Sprintf("%+.1f%%", 100*float64(v-want)/float64(want))
		}
		fmt.Fprintf(&b, "%-14s %11d  truth %11d  error %+9d (%s)  tolerance %d: %s\n", class, v, want, v-want, rel, tolerance, why)
		if d := v - want; d > tolerance || -d > tolerance {
			t.Errorf("%s: %d bytes, the truth is %d (tolerance %d: %s)", class, v, want, tolerance, why)
		}
	}
	// go/heap/live: the three sites, the slice keeping them, the parked
	// goroutines' g structures (448 bytes each), and up to 1 MiB of
	// runtime and package state.
	check(rss.GoHeapLive, sites+tr.Keep+int64(tr.Goroutines)*448+MiB/2, MiB/2, "the sites, the slice keeping them, the goroutines' g, and up to 1 MiB of other live objects")
	check(rss.GoHeapDead, 0, 2*MiB, "two GCs ran: what was allocated since (the server's reply) is small")
	check(rss.ArenaUsed, tr.ArenaUsed, 0, "the bytes the arenas handed out, exact")
	check("arena/*", tr.ArenaHeap, 0, "the chunks' heap allocations, exact")
	// Each parked goroutine has the runtime's smallest stack, 2 KiB; the
	// runtime's own goroutines and threads take up to 1 MiB more.
	check(rss.GoStacks, int64(tr.Goroutines)*2<<10+MiB/2, MiB/2, "2 KiB per goroutine, and up to 1 MiB of the runtime's own")
	check(rss.NonGo, tr.Mmap+tr.CMalloc, 2*MiB, "the touched anonymous mapping and C's malloc")
	check(rss.Files, tr.File+MiB+32<<10, MiB+32<<10, "the file pages read, fault-around (up to 64 KiB) and the shared libraries of a cgo build (up to 2 MiB)")
	check(rss.Unattributed, 0, max(res.RSSBytes/100, 2*MiB), "1% of RSS or 2 MiB")
	var sum int64
	for _, c := range res.Classes {
		sum += c.Bytes
	}
	if sum != res.RSSBytes {
		t.Errorf("the classes sum to %d, the RSS is %d", sum, res.RSSBytes)
	}
	for _, row := range res.Rows {
		if want, ok := tr.Sites[row.Key]; ok && row.Class == rss.GoHeapLive {
			fmt.Fprintf(&b, "  %-16s estimate %11d  truth %11d  interval [%d, %d]\n", row.Key, row.Bytes, want, row.Lo, row.Hi)
			if want < row.Lo || want > row.Hi {
				t.Errorf("%s: the interval [%d, %d] misses the truth %d", row.Key, row.Lo, row.Hi, want)
			}
			delete(tr.Sites, row.Key)
		}
	}
	for k := range tr.Sites {
		t.Errorf("no go/heap/live row for %s", k)
	}
	for _, n := range res.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	t.Log(b.String())
}
