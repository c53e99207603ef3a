//go:build linux && (amd64 || arm64)

package arena

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// A fault stops the program before any of its code can run again, so what
// names the arena memory behind a fault runs in another process: the
// watcher, the program's own executable started again with watcherEnv set,
// which the arena package's initialization turns into the watcher (package
// initializers that run before arena's run in it too). At the first
// release of checked memory the program starts it, hands it the read ends
// of two pipes and sends it a record of every region it retires (address,
// size, how it was released, the stack of the release and of the arena's
// NewArena); runtime/debug.SetCrashOutput copies the program's fatal error
// output to the other pipe. When the program dies of a fault whose address
// lies in a retired region, the watcher prints, after the runtime's own
// report, how and where that region was released and where its arena was
// made. If the watcher cannot start, checked mode works without it.
//
// The program has one crash output: one set later with SetCrashOutput
// replaces the watcher's.
//
// runtime/debug.SetPanicOnFault would turn the fault into a panic the
// program could recover and describe itself, but only in the goroutine
// that sets it, and stale uses happen in the program's own goroutines;
// the watcher sees the faults of every goroutine.

// watcherEnv marks the process started as the watcher.
const watcherEnv = "ARENAPROF_CHECKED_WATCHER"

func init() {
	if os.Getenv(watcherEnv) == "1" {
		watch(os.NewFile(3, "records"), os.NewFile(4, "crash output"), os.Stderr)
		os.Exit(0)
	}
}

var watcher struct {
	once   sync.Once
	mu     sync.Mutex
	w      *bufio.Writer // the records pipe; nil without a watcher
	f      *os.File
	stacks map[string]int // stack (its program counters' bytes) -> id
}

// startWatcher starts the watcher process, once.
func startWatcher() {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	recR, recW, err := os.Pipe()
	if err != nil {
		return
	}
	crashR, crashW, err := os.Pipe()
	if err != nil {
		recR.Close()
		recW.Close()
		return
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), watcherEnv+"=1")
	cmd.ExtraFiles = []*os.File{recR, crashR} // fds 3 and 4
	cmd.Stderr = os.Stderr
	err = cmd.Start()
	recR.Close()
	crashR.Close()
	if err == nil {
		err = debug.SetCrashOutput(crashW, debug.CrashOptions{})
	}
	crashW.Close() // SetCrashOutput keeps its own descriptor
	if err != nil {
		recW.Close()
		if cmd.Process != nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		return
	}
	go cmd.Wait() // reap it if it dies first
	watcher.f = recW
	watcher.w = bufio.NewWriter(recW)
	watcher.stacks = make(map[string]int)
}

// report sends the record of a retired region to the watcher.
func report(s span, how string, made, pcs []uintptr) {
	watcher.once.Do(startWatcher)
	watcher.mu.Lock()
	defer watcher.mu.Unlock()
	w := watcher.w
	if w == nil {
		return
	}
	m, r := stackID(made), stackID(pcs)
	fmt.Fprintf(w, "R %x %x %d %d %s\n", uintptr(s.base), s.size, m, r, how)
	if w.Flush() != nil { // the watcher is gone
		watcher.f.Close()
		watcher.w = nil
	}
}

// stackID returns the id of a stack, sending it to the watcher the first
// time.
func stackID(pcs []uintptr) int {
	if len(pcs) == 0 {
		return -1
	}
	key := string(unsafe.Slice((*byte)(unsafe.Pointer(&pcs[0])), len(pcs)*int(unsafe.Sizeof(pcs[0]))))
	if id, ok := watcher.stacks[key]; ok {
		return id
	}
	id := len(watcher.stacks)
	watcher.stacks[key] = id
	var lines []string
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if f.Function != "" {
			lines = append(lines, f.Function+"\t"+f.File+":"+strconv.Itoa(f.Line))
		}
		if !more {
			break
		}
	}
	fmt.Fprintf(watcher.w, "S %d %d\n%s\n", id, len(lines), strings.Join(lines, "\n"))
	return id
}

// watchedRegion is a retired region as the watcher knows it.
type watchedRegion struct {
	base, size  uintptr
	made, freed int
	how         string
}

// maxWatched bounds the regions the watcher remembers (the newest).
const maxWatched = 1 << 20

// faultAddr finds the fault address in the runtime's report of a signal.
var faultAddr = regexp.MustCompile(`\[signal SIGSEGV: [^\]]* addr=0x([0-9a-f]+) `)

// watch is the watcher: it reads records until the program exits, then,
// if the program died of a fault in a retired region, writes what it
// knows of the region to out.
func watch(records, crash io.Reader, out io.Writer) {
	var regions []watchedRegion
	stacks := map[int][]string{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(records)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			f := strings.SplitN(sc.Text(), " ", 6)
			switch {
			case len(f) == 6 && f[0] == "R":
				base, _ := strconv.ParseUint(f[1], 16, 64)
				size, _ := strconv.ParseUint(f[2], 16, 64)
				m, _ := strconv.Atoi(f[3])
				r, _ := strconv.Atoi(f[4])
				if len(regions) == maxWatched {
					regions = append(regions[:0], regions[maxWatched/2:]...)
				}
				regions = append(regions, watchedRegion{uintptr(base), uintptr(size), m, r, f[5]})
			case len(f) == 3 && f[0] == "S":
				id, _ := strconv.Atoi(f[1])
				n, _ := strconv.Atoi(f[2])
				var st []string
				for i := 0; i < n && sc.Scan(); i++ {
					st = append(st, sc.Text())
				}
				stacks[id] = st
			}
		}
		io.Copy(io.Discard, records) // never leave the program blocked on a full pipe
	}()
	report, _ := io.ReadAll(crash)
	<-done
	m := faultAddr.FindSubmatch(report)
	if m == nil {
		return
	}
	addr64, err := strconv.ParseUint(string(m[1]), 16, 64)
	if err != nil {
		return
	}
	addr := uintptr(addr64)
	for i := len(regions) - 1; i >= 0; i-- {
		r := regions[i]
		if addr-r.base < r.size {
			fmt.Fprintf(out, "\narenaprof: checked arena: the fault address %#x is arena memory used after its release by %s.\n", addr, r.how)
			fmt.Fprintf(out, "The region [%#x, %#x) was released by %s at:\n", r.base, r.base+r.size, r.how)
			writeStack(out, stacks[r.freed])
			fmt.Fprintf(out, "Its arena was made at:\n")
			writeStack(out, stacks[r.made])
			return
		}
	}
	if addr-checkedBase < checkedWindow {
		fmt.Fprintf(out, "\narenaprof: checked arena: the fault address %#x is checked arena memory released long ago (its record was dropped).\n", addr)
	}
}

func writeStack(out io.Writer, st []string) {
	if len(st) == 0 {
		fmt.Fprintf(out, "\t(unknown)\n")
	}
	for _, l := range st {
		fn, loc, _ := strings.Cut(l, "\t")
		fmt.Fprintf(out, "\t%s\n\t\t%s\n", fn, loc)
	}
}
