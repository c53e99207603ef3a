package pprofread

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// legacyHeapText returns a legacy text heap profile of at least target
// bytes shaped as runtime/pprof writes one with debug=1 (the Go compiler's
// -memprofile): sample lines of 10 to 39 frames drawn from 5,000
// functions, each followed by a comment line per frame naming its
// function and file, then the MemStats comments.
func legacyHeapText(target int) []byte {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	fmt.Fprintf(w, "heap profile: 1000: 100000 [2000: 200000] @ heap/524288\n")
	const funcs = 5000
	for i := 0; b.Len()+w.Buffered() < target; i++ {
		depth := 10 + i%30
		fmt.Fprintf(w, "%d: %d [%d: %d] @", 1+i%5, 64*(1+i%5), 2+i%7, 128*(1+i%7))
		stack := make([]int, depth)
		x := uint64(i)*2654435761 + 1
		for d := range stack {
			x = x*6364136223846793005 + 1442695040888963407
			stack[d] = int(x>>33) % funcs
		}
		for _, f := range stack {
			fmt.Fprintf(w, " 0x%x", 0x400000+f*64)
		}
		w.WriteString("\n")
		for _, f := range stack {
			fmt.Fprintf(w, "#\t0x%x\tcmd/compile/internal/ssagen.func%d+0x%x\t/usr/local/go/src/cmd/compile/internal/ssagen/file%d.go:%d\n", 0x400000+f*64-1, f, f%256, f%50, f%900)
		}
		w.WriteString("\n")
	}
	w.WriteString("\n# runtime.MemStats\n# Alloc = 1234\n")
	w.Flush()
	return b.Bytes()
}

// procStatus returns a field of /proc/self/status in bytes (VmRSS, VmHWM).
func procStatus(field string) (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
}

// legacyChildEnv names the profile the child process of
// TestLegacyEstimateReal reads.
const legacyChildEnv = "ARENAPROF_LEGACY_CHILD"

// TestLegacyEstimateReal reads a generated legacy text heap profile of
// over 100 MB, shaped as the Go compiler's -memprofile writes it, in a
// process of its own, and checks that the memory Read estimates for it
// covers what reading it took (the process's peak resident memory above
// what it held before, and every byte the read allocated) and is within 2
// times the bytes the read allocated. The peak resident memory depends on
// when the collector runs: 246 MB on an idle machine, 363 MB under a load
// average of 20, for the same read (the estimate, 670 MB, is 2.7 and 1.8
// times those); the bytes allocated (486 MB) do not, so the upper bound is
// held against them. Deterministic: the profile is fixed.
func TestLegacyEstimateReal(t *testing.T) {
	if path := os.Getenv(legacyChildEnv); path != "" {
		legacyChild(path)
		return
	}
	if testing.Short() {
		t.Skip("reads a 100 MB profile in a process of its own (about 10 s)")
	}
	if raceEnabled {
		t.Skip("the race detector changes the memory reading takes")
	}
	if _, err := procStatus("VmHWM"); err != nil {
		t.Skipf("no peak resident memory to measure: %v", err)
	}
	data := legacyHeapText(100 << 20)
	path := filepath.Join(t.TempDir(), "heap.txt")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var s memScan
	s.scan(data)
	est := 4*int64(len(data)) + s.estimate(data, true) // Read's need at the end of the data
	size := len(data)
	data = nil
	runtime.GC()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLegacyEstimateReal$")
	cmd.Env = append(os.Environ(), legacyChildEnv+"="+path, "GOMAXPROCS=2")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	field := func(name string) int64 {
		_, rest, ok := strings.Cut(string(out), name+"=")
		if !ok {
			t.Fatalf("child said:\n%s", out)
		}
		v, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	used, alloc := field("used"), field("alloc")
	t.Logf("%d bytes: reading took %d bytes of peak RSS above before (estimate %.2fx) and allocated %d (estimate %.2fx); estimate %d", size, used, float64(est)/float64(used), alloc, float64(est)/float64(alloc), est)
	if est < used || est < alloc {
		t.Errorf("estimate %d below what reading took: %d bytes of peak RSS, %d allocated", est, used, alloc)
	}
	if est > 2*alloc {
		t.Errorf("estimate %d above 2 times the %d bytes the read allocated", est, alloc)
	}
}

// legacyChild reads the profile at path with Read, unbounded, and prints
// the peak resident memory above what the process held before.
func legacyChild(path string) {
	runtime.GC()
	before, err := procStatus("VmRSS")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	f, err := os.Open(path)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	p, err := parse(f, Options{MaxBytes: 1 << 40, MaxMemory: 1 << 40})
	runtime.ReadMemStats(&m1)
	f.Close()
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	peak, err := procStatus("VmHWM")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Printf("samples=%d used=%d alloc=%d\n", len(p.Sample), peak-before, m1.TotalAlloc-m0.TotalAlloc)
}
