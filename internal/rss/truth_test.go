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

// truth is what testdata/truth prints first: what it holds, in bytes,
// and what of it is resident.
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
	Resident   resident         `json:"resident"`
}

// resident is what of its memory testdata/truth measured resident, page
// by page (mincore for anonymous memory, /proc/self/pagemap's present bit
// for file mappings), in bytes; it prints one such line after its first
// for each line it reads.
type resident struct {
	Arena   int64 `json:"arena"`   // the arenas' chunks
	Mmap    int64 `json:"mmap"`    // the anonymous mapping
	CMalloc int64 `json:"cmalloc"` // the pages of C's malloc block
	File    int64 `json:"file"`    // the file mapping
	Files   int64 `json:"files"`   // every file mapping but the executable's
	Special int64 `json:"special"` // the size of [vdso], [vvar] and the like
}

// truthConfidence is the level of the intervals checked against the
// truth: with 3 sampled rows per run, a false failure has probability
// below 3e-7.
const truthConfidence = 1 - 1e-7

// TestTruth runs testdata/truth, a program of known parts, built without
// and (where gcc is) with cgo, reads its resident-memory profile over
// HTTP and checks each class against what the program holds, within the
// allowance stated beside each check; the sampled go/heap/live rows'
// intervals must cover their sites' bytes. The per-class error is logged.
// Where a class's truth is a matter of residency (arena chunks, the
// anonymous mapping, C's memory, file pages), the truth is what the
// program measured resident page by page just before and just after the
// read, not what it wrote or read: whether the kernel holds a page the
// program never wrote depends on the machine and the heap's history.
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
	out := bufio.NewReader(stdout)
	line, err := out.ReadString('\n')
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
	// What is resident after the read: the profile was read between the
	// two measures, so each class lies between what they found (the
	// program idles, but serving may map a page or two of a library).
	fmt.Fprintln(stdin, "measure")
	line, err = out.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the program's second measure: %v", err)
	}
	var after resident
	if err := json.Unmarshal([]byte(line), &after); err != nil {
		t.Fatalf("%v: %q", err, line)
	}
	measured := func(f func(resident) int64) (lo, hi int64) {
		x, y := f(tr.Resident), f(after)
		return min(x, y), max(x, y)
	}
	res, err := rss.Parse(p, "func", truthConfidence)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, c := range res.Classes {
		got[c.Class] = c.Bytes
	}
	// The heap bytes the classifier found not resident, which it takes
	// from arena/free first (see rss.Classify): the program's are all
	// written, so any are the runtime's.
	var short int64
	for _, n := range res.Notes {
		fmt.Sscanf(n, "%d bytes of heap objects and stacks are not resident", &short)
	}
	const MiB = 1 << 20
	var sites int64
	for _, b := range tr.Sites {
		sites += b
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cgo=%s RSS %d\n", cgo, res.RSSBytes)
	// check checks that class holds the truth, measured between lo and
	// hi, less at most below and plus at most above, for the reason why.
	check := func(class string, lo, hi, below, above int64, why string) {
		t.Helper()
		v := got[class]
		if class == "arena/*" {
			v = got[rss.ArenaUsed] + got[rss.ArenaFree]
		}
		want := fmt.Sprint(lo)
		if hi != lo {
			want = fmt.Sprintf("[%d, %d]", lo, hi)
		}
		rel := "-"
		if lo != 0 {
			rel = fmt.Sprintf("%+.1f%%", 100*float64(v-lo)/float64(lo))
		}
		fmt.Fprintf(&b, "%-14s %11d  truth %11s  error %+9d (%s)  allowed -%d +%d: %s\n", class, v, want, v-lo, rel, below, above, why)
		if v < lo-below || v > hi+above {
			t.Errorf("%s: %d bytes, the truth is %s (allowed -%d +%d: %s)", class, v, want, below, above, why)
		}
	}
	check(rss.GoHeapLive, sites+tr.Keep+int64(tr.Goroutines)*448, sites+tr.Keep+int64(tr.Goroutines)*448, 0, MiB,
		"the sites, the slice keeping them, the goroutines' g (448 bytes each), and up to 1 MiB of the runtime's and packages' live objects")
	check(rss.GoHeapDead, 0, 0, 0, 2*MiB, "two GCs ran: what was allocated since (the measure, the server's reply) is small")
	check(rss.ArenaUsed, tr.ArenaUsed, tr.ArenaUsed, 0, 0, "the bytes the arenas handed out, exact")
	// The program writes every page of its chunks, so their resident
	// bytes are their heap allocations; where the kernel took some back
	// (swap), the classifier cannot tell those pages from others.
	alo, ahi := measured(func(r resident) int64 { return r.Arena })
	gone := tr.ArenaHeap - alo
	check("arena/*", alo, ahi, min(short, tr.ArenaHeap-tr.ArenaUsed)+gone, gone,
		fmt.Sprintf("the chunks' resident bytes (mincore; their heap allocations %d), exact, less the part of the heap's non-resident bytes (%d) the classifier takes from arena/free (at most its 8-byte slack a chunk)", tr.ArenaHeap, short))
	// Each parked goroutine has the runtime's smallest stack, 2 KiB; the
	// runtime's own goroutines and threads take up to 1 MiB more.
	check(rss.GoStacks, int64(tr.Goroutines)*2<<10, int64(tr.Goroutines)*2<<10, 0, MiB, "2 KiB per goroutine, and up to 1 MiB of the runtime's own")
	nlo, nhi := measured(func(r resident) int64 { return r.Mmap + r.CMalloc })
	check(rss.NonGo, nlo, nhi, 2*MiB, 2*MiB, "the anonymous mapping's and C's malloc block's resident bytes (mincore), give or take 2 MiB of the runtime's and C's own")
	flo, fhi := measured(func(r resident) int64 { return r.Files })
	_, special := measured(func(r resident) int64 { return r.Special })
	check(rss.Files, flo, fhi, 0, special, fmt.Sprintf("the pages of file mappings mapped (pagemap; the file's %d, of %d read), and at most the kernel's own mappings' size", tr.Resident.File, tr.File))
	check(rss.Unattributed, 0, 0, max(res.RSSBytes/100, 2*MiB), max(res.RSSBytes/100, 2*MiB), "1% of RSS or 2 MiB")
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
