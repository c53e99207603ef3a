package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	httppprof "net/http/pprof"
	"os"
	"strings"
	"testing"
)

func TestHelpAndVersion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"help"}, 0, "commands:"},
		{[]string{"help", "top"}, 0, "usage: arenaprof top"},
		{[]string{"help", "diff"}, 0, "usage: arenaprof diff"},
		{[]string{"help", "html"}, 0, "usage: arenaprof html"},
		{[]string{"help", "interval"}, 0, "usage: arenaprof interval"},
		{[]string{"version"}, 0, "arenaprof "},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, &out, &errOut)
		if code != tc.code || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d and %q", tc.args, code, out.String(), errOut.String(), tc.code, tc.want)
		}
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"help", "nope"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), `unknown command "nope"`) {
		t.Errorf("help nope: exit %d, stderr %q", code, errOut.String())
	}
}

// TestTopStdin reads the profile from standard input with "-" and gives
// the same table as from the file.
func TestTopStdin(t *testing.T) {
	path := fixturePath(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := stdin
	defer func() { stdin = old }()
	stdin = bytes.NewReader(data)
	code, fromStdin, errOut := runTopArgs("-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	_, fromFile, _ := runTopArgs(path)
	if fromStdin != fromFile || fromStdin == "" {
		t.Errorf("stdin:\n%s\nfile:\n%s", fromStdin, fromFile)
	}
	stdin = bytes.NewReader(data)
	if code, _, errOut := runTopArgs("-max-bytes", "10", "-"); code != 1 || !strings.Contains(errOut, "standard input: larger than -max-bytes 10") {
		t.Errorf("bounded stdin: exit %d, %q", code, errOut)
	}
}

// TestTopNewFlags: pprof's sample names give the same table as ours, -by
// size groups by size class, and stacks are whole when not printed to a terminal.
func TestTopNewFlags(t *testing.T) {
	path := fixturePath(t)
	for _, pair := range [][2]string{{"alloc", "alloc_space"}, {"inuse", "inuse_space"}} {
		_, a, _ := runTopArgs("-sample", pair[0], path)
		_, b, _ := runTopArgs("-sample", pair[1], path)
		if a != b || a == "" {
			t.Errorf("-sample %s and %s differ:\n%s\n%s", pair[0], pair[1], a, b)
		}
	}
	code, out, errOut := runTopArgs("-by", "size", path)
	if code != 0 || !strings.Contains(out, "OBJECT SIZE") || !strings.Contains(out, " B\n") {
		t.Errorf("-by size: exit %d\n%s%s", code, out, errOut)
	}
	// Not on a terminal (here), stacks are whole with or without -full.
	_, short, _ := runTopArgs("-by", "stack", path)
	_, full, _ := runTopArgs("-by", "stack", "-full", path)
	if strings.Contains(short, "…") || short != full {
		t.Errorf("stacks cut off a terminal:\n%s\n%s", short, full)
	}
}

// TestTopGoHeap: arenaprof top reads the runtime's own heap profile, from a
// file and from net/http/pprof, grouped by function by default, with
// intervals (their coverage is tested in internal/testkit/heapcheck).
func TestTopGoHeap(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", httppprof.Index)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	file := writeTemp(t, "heap.pb.gz", heapProfile(t))
	for _, src := range []string{file, srv.URL + "/debug/pprof/allocs", srv.URL + "/debug/pprof/heap"} {
		for _, args := range [][]string{{src}, {"-sample", "inuse", src}, {"-by", "stack", "-json", src}, {"-by", "size", src}} {
			code, out, errOut := runTopArgs(args...)
			if code != 0 {
				t.Errorf("%v: exit %d: %s", args, code, errOut)
				continue
			}
			if !strings.Contains(out, "Go heap profile (MemProfileRate") && !strings.Contains(out, `"sample"`) {
				t.Errorf("%v: output:\n%s", args, out)
			}
		}
	}
}

// TestDiffGoHeap: two Go heap profiles compare by function.
func TestDiffGoHeap(t *testing.T) {
	a := writeTemp(t, "a.pb.gz", heapProfile(t))
	b := writeTemp(t, "b.pb.gz", heapProfile(t))
	code, out, errOut := runDiffArgs(a, b)
	if code != 0 || !strings.Contains(out, "RATIO") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}
