package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestShutdown builds the example, runs it, sends it SIGTERM and checks
// that it exits by itself within its deadlines: with a directory, cleanly,
// having written the last interval (the interval is an hour, so those are
// the only profiles); with a Pyroscope server that never answers, with an
// error, about 15 s later (Stop's deadline), not minutes.
func TestShutdown(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "shutdown")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Run("directory", func(t *testing.T) {
		dir := t.TempDir()
		p := start(t, bin, "-dir", dir)
		get(t, "http://"+p.addr+"/user?name=ada", "hello ada")
		get(t, "http://"+p.addr+"/debug/arenaprof/stats", `"Collected": 0`)
		code, took := p.term(t)
		if code != 0 {
			t.Fatalf("exit code %d after %v:\n%s", code, took, p.log())
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*-arena.pb.gz"))
		if len(files) != 1 || !regexp.MustCompile(`profiles: [1-9]\d* uploaded, 0 failed, 0 unconfirmed, 0 dropped`).MatchString(p.log()) {
			t.Fatalf("want the last interval's arena profile written; files %v, log:\n%s", files, p.log())
		}
	})
	t.Run("silent server", func(t *testing.T) {
		if testing.Short() {
			t.Skip("-short: waits for the example's 15 s Stop deadline")
		}
		l, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				defer c.Close()
			}
		}()
		p := start(t, bin, "-pyroscope", "http://"+l.Addr().String())
		code, took := p.term(t)
		t.Logf("exit %d after %v", code, took.Round(time.Millisecond))
		if code != 1 || took > 40*time.Second || !strings.Contains(p.log(), "context deadline exceeded") {
			t.Fatalf("exit code %d after %v, want 1 after about 15 s; log:\n%s", code, took, p.log())
		}
	})
}

type proc struct {
	cmd  *exec.Cmd
	addr string
	mu   sync.Mutex
	buf  strings.Builder
	done chan struct{}
}

// start runs the example on a free port and waits until it listens.
func start(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, append([]string{"-addr", "127.0.0.1:0", "-interval", "1h"}, args...)...), done: make(chan struct{})}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill() })
	addrc := make(chan string, 1)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.buf.WriteString(line + "\n")
			p.mu.Unlock()
			if _, a, ok := strings.Cut(line, "listening on "); ok {
				addrc <- a
			}
		}
	}()
	select {
	case p.addr = <-addrc:
	case <-p.done:
		t.Fatalf("exited before listening:\n%s", p.log())
	case <-time.After(30 * time.Second):
		t.Fatalf("not listening after 30 s:\n%s", p.log())
	}
	return p
}

func (p *proc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.String()
}

// term sends SIGTERM and waits (at most a minute) for the exit.
func (p *proc) term(t *testing.T) (int, time.Duration) {
	t.Helper()
	begin := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		t.Fatalf("still running a minute after SIGTERM:\n%s", p.log())
	}
	p.cmd.Wait()
	return p.cmd.ProcessState.ExitCode(), time.Since(begin)
}

func get(t *testing.T, url, want string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
		t.Fatalf("GET %s: %s %q, want %q", url, resp.Status, b, want)
	}
}
