package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// installService is the module TestREADMEInstall installs arenaprof into:
// a service that starts a session and allocates from a pool, so that every
// package it imports, and theirs, must resolve.
const installService = `package main

import (
	"context"
	"fmt"
	"log"
	"net/http"

	"github.com/arenaprof/arenaprof"
	"github.com/arenaprof/arenaprof/arena"
)

var pool arena.Pool

func main() {
	mux := http.NewServeMux()
	s, err := arenaprof.Start(arenaprof.Config{AppName: "shop", Mux: mux})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Stop(context.Background())
	a := pool.Get(context.Background())
	defer pool.Put(a)
	fmt.Println(arena.String(a, "installed"))
}
`

// readmeInstall returns the command lines of the first code block of
// README.md's "## Install" section, comments removed.
func readmeInstall(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Install\n")
	if !ok {
		t.Fatal("README.md has no ## Install section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "```sh\n")
	if !ok {
		t.Fatal("README.md's Install section has no sh code block")
	}
	block, _, _ = strings.Cut(block, "```")
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if l = stripComment(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestREADMEInstall runs README.md's install route as a new user would,
// in a new module beside a clone: the clone is this working tree (a
// symbolic link where the README clones to), and every other line runs
// as written. The module cache serves what it holds; what it lacks (on a
// fresh machine, the sources of the dependencies' test imports, which go
// mod tidy reads and building this module does not fetch) comes from the
// module proxy, as for the user: the test is skipped where the proxy
// cannot be reached and the cache lacks them (failed there under
// .ci/run). The new module's service must then build and run, and the
// installed CLI answer version and help.
func TestREADMEInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module and the CLI")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the clone is a symbolic link")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	lines := readmeInstall(t)
	if len(lines) < 3 {
		t.Fatalf("README.md's install block has %d lines: %q", len(lines), lines)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	svc, bin := filepath.Join(dir, "shop"), filepath.Join(dir, "bin")
	if err := os.Mkdir(svc, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local", "GOBIN="+bin)
	gorun := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command(goBin, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			skipWithoutProxy(t, goBin, env, "go "+strings.Join(args, " "), out)
			t.Fatalf("go %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
		}
		return string(out)
	}
	gorun(svc, "mod", "init", "example.com/shop")
	if err := os.WriteFile(filepath.Join(svc, "main.go"), []byte(installService), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, l := range lines {
		words := shellWords(l)
		switch {
		case i == 0 && len(words) == 4 && words[0] == "git" && words[1] == "clone":
			if words[2] != "https://github.com/arenaprof/arenaprof" {
				t.Errorf("README clones %s, want the module's repository", words[2])
			}
			if err := os.Symlink(root, filepath.Join(svc, filepath.FromSlash(words[3]))); err != nil {
				t.Fatal(err)
			}
		case i == 0:
			t.Fatalf("README's install block starts with %q, want a git clone URL DIR", l)
		case words[0] == "go":
			gorun(svc, words[1:]...)
		default:
			t.Fatalf("README's install line %q: this test runs git clone and go commands only", l)
		}
	}
	if out := gorun(svc, "run", "."); strings.TrimSpace(out) != "installed" {
		t.Errorf("the service printed %q, want \"installed\"", out)
	}
	cli := filepath.Join(bin, "arenaprof")
	for _, args := range [][]string{{"version"}, {"help"}} {
		out, err := exec.Command(cli, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("arenaprof %s: %v\n%s", args[0], err, out)
		}
		if !strings.Contains(string(out), "arenaprof") {
			t.Errorf("arenaprof %s printed %q", args[0], out)
		}
	}
}
