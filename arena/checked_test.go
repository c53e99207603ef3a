package arena

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// checkedChildEnv names the case a re-executed test binary runs (see
// TestCheckedCatches).
const checkedChildEnv = "ARENAPROF_CHECKED_CASE"

// checkedFaults reports whether checked mode makes released memory
// inaccessible on this platform: where checked_mmap.go is built (its build
// constraint, as a constant).
const checkedFaults = runtime.GOOS == "linux" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64")

// checkedSink keeps the compiler from dropping the stale reads.
var checkedSink any

type plain4 [4]int64

type withPtr struct {
	p *int64
	n int64
}

// checkedCases each use arena memory after it was released. want matches
// what the program prints when it stops; "" means it must not stop.
var checkedCases = []struct {
	name string
	env  string // checkedEnv in the child
	want string
	run  func()
}{
	{"read after Reset", "", fault("Reset"), func() {
		a := NewArena(WithChecked(true))
		p := New[plain4](a)
		p[1] = 7
		a.Reset()
		checkedSink = p[1]
	}},
	{"write after Reset", "", fault("Reset"), func() {
		a := NewArena(WithChecked(true))
		p := New[plain4](a)
		a.Reset()
		p[2] = 1
	}},
	{"read after Put", "", fault("Pool.Put"), func() {
		pool := NewPool(WithChecked(true))
		a := pool.Get(context.Background())
		p := New[int64](a)
		pool.Put(a)
		checkedSink = *p
	}},
	{"write after Put", "", fault("Pool.Put"), func() {
		pool := NewPool(WithChecked(true))
		a := pool.Get(context.Background())
		p := New[int64](a)
		pool.Put(a)
		*p = 1
	}},
	{"read after Free", "", fault("Free"), func() {
		a := NewArena(WithChecked(true))
		p := New[plain4](a)
		a.Free()
		checkedSink = p[0]
	}},
	{"write after Free", "", fault("Free"), func() {
		a := NewArena(WithChecked(true))
		b := MakeSlice[byte](a, 8, 8)
		a.Free()
		b[7] = 1
	}},
	{"pointerful after Free", "", nilMsg, stalePointer((*Arena).Free)},
	{"dropped arena", "", fault(howDropped), func() {
		n := checkedReleases.Load()
		s := String(NewArena(WithChecked(true)), "alice@example.test")
		for end := time.Now().Add(10 * time.Second); checkedReleases.Load() == n && time.Now().Before(end); {
			runtime.GC() // runs the dropped arena's cleanup
			time.Sleep(time.Millisecond)
		}
		checkedSink = strings.Clone(s)
	}},
	{"String after Put", "", fault("Pool.Put"), func() {
		pool := NewPool(WithChecked(true))
		a := pool.Get(context.Background())
		s := String(a, "alice@example.test")
		pool.Put(a)
		checkedSink = strings.Clone(s)
	}},
	{"Bytes write after Reset", "", fault("Reset"), func() {
		a := NewArena(WithChecked(true))
		b := Bytes(a, []byte("alice@example.test"))
		a.Reset()
		b[0] = 'm'
	}},
	{"MakeSlice and Append after Reset", "", fault("Reset"), func() {
		a := NewArena(WithChecked(true))
		s := MakeSlice[int32](a, 0, 4)
		s = Append(a, s, 1, 2, 3, 4, 5)
		a.Reset()
		checkedSink = s[4]
	}},
	{"large pointer-free after Reset", "", fault("Reset"), func() {
		a := NewArena(WithChecked(true), WithChunkSize(minChunkSize))
		s := MakeSlice[byte](a, 1<<20, 1<<20)
		a.Reset()
		checkedSink = s[1<<19]
	}},
	{"pointerful after Reset", "", nilMsg, stalePointer((*Arena).Reset)},
	{"large pointerful after Put", "", nilMsg, func() {
		pool := NewPool(WithChecked(true), WithChunkSize(minChunkSize))
		a := pool.Get(context.Background())
		s := MakeSlice[*int64](a, 1024, 1024)
		s[1000] = new(int64)
		pool.Put(a)
		checkedSink = *s[1000]
	}},
	{"ARENAPROF_CHECKED=1 alone", "1", fault("Reset"), func() {
		a := NewArena()
		s := String(a, "alice@example.test")
		a.Reset()
		checkedSink = strings.Clone(s)
	}},
	{"WithChecked(false) overrides ARENAPROF_CHECKED=1", "1", "", func() {
		a := NewArena(WithChecked(false))
		s := String(a, "alice@example.test")
		a.Reset()
		checkedSink = strings.Clone(s) // reads zeros: a logic error, not caught
	}},
}

// stalePointer follows a pointer read from a value of a checked arena
// after release.
func stalePointer(release func(*Arena)) func() {
	return func() {
		a := NewArena(WithChecked(true))
		x := New[withPtr](a)
		x.p = new(int64)
		release(a)
		checkedSink = *x.p
	}
}

// nilMsg is the runtime's report of following a pointer cleared by Reset.
const nilMsg = `panic: runtime error: invalid memory address or nil pointer dereference`

// fault returns the report of a use of pointer-free memory after it was
// released by how: the runtime's, then the watcher's (checked_watch.go).
func fault(how string) string {
	return `(?s)unexpected fault address 0x[0-9a-f]+\nfatal error: fault\n` +
		`\[signal SIGSEGV: segmentation violation code=0x2 ` +
		`.*\narenaprof: checked arena: the fault address 0x[0-9a-f]+ is arena memory used after its release by ` +
		regexp.QuoteMeta(how) + `\.\nThe region \[0x[0-9a-f]+, 0x[0-9a-f]+\) was released by ` +
		regexp.QuoteMeta(how) + ` at:\n\t(github.com/arenaprof/arenaprof/arena\.|\(unknown\)).*\nIts arena was made at:\n\t`
}

// TestCheckedCatches runs each use after release in a child process (the
// test binary, re-executed) and checks that the child stops with the
// fault or the nil dereference checked mode promises.
func TestCheckedCatches(t *testing.T) {
	if name := os.Getenv(checkedChildEnv); name != "" {
		for _, c := range checkedCases {
			if c.name == name {
				c.run()
				if c.want != "" {
					t.Fatalf("%s: not caught", name)
				}
				return
			}
		}
		t.Fatalf("no case %q", name)
	}
	for _, c := range checkedCases {
		t.Run(c.name, func(t *testing.T) {
			if !checkedFaults && c.want != nilMsg && c.want != "" {
				t.Skip("checked mode makes memory inaccessible on Linux (amd64, arm64) only")
			}
			t.Parallel()
			out, err := runChecked(t, c.name, c.env)
			if c.want == "" {
				if err != nil {
					t.Fatalf("the child failed: %v\n%s", err, out)
				}
				return
			}
			if err == nil {
				t.Fatalf("the child exited 0:\n%s", out)
			}
			if !regexp.MustCompile(c.want).MatchString(out) {
				t.Fatalf("the child's output does not match %q:\n%s", c.want, out)
			}
		})
	}
}

// runChecked re-executes the test binary to run one case of checkedCases
// with checkedEnv set to env.
func runChecked(t *testing.T, name, env string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCheckedCatches$", "-test.count=1")
	cmd.Env = append(os.Environ(), checkedChildEnv+"="+name, checkedEnv+"="+env)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestCheckedFromEnv(t *testing.T) {
	for _, c := range []struct {
		v    string
		on   bool
		warn bool
	}{
		{"", false, false},
		{"1", true, false},
		{"true", true, false},
		{"0", false, false},
		{"false", false, false},
		{"yes", false, true},
		{" 1", false, true},
	} {
		var w strings.Builder
		if on := checkedFromEnv(c.v, &w); on != c.on || (w.Len() > 0) != c.warn {
			t.Errorf("%q: on %v, said %q; want on %v, a warning %v", c.v, on, w.String(), c.on, c.warn)
		}
	}
}
