package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	httppprof "net/http/pprof"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/goheap"
)

// Unsymbolized profiles are refused by function and by stack, with the
// fix named; groupings that do not read frames still work.
func TestUnsymbolizedRefused(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", httppprof.Index)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	p, err := profile.Parse(bytes.NewReader(heapProfile(t)))
	if err != nil {
		t.Fatal(err)
	}
	for _, loc := range p.Location {
		loc.Line = nil // as a profile of a binary without symbols
	}
	p.Function = nil
	raw := writeTemp(t, "raw.pb.gz", profileBytes(t, p))
	legacy := "testdata/compile_memprofile.txt"
	debug1 := srv.URL + "/debug/pprof/heap?debug=1"
	for _, src := range []string{legacy, debug1, raw} {
		for _, by := range []string{"", "func", "stack"} {
			args := []string{src}
			if by != "" {
				args = []string{"-by", by, src}
			}
			code, out, errOut := runTopArgs(args...)
			if code != 1 || !strings.Contains(errOut, "go tool pprof -proto BINARY PROFILE") || out != "" {
				t.Errorf("top %v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
			}
			code, _, errOut = runDiffArgs(append(args, src)...)
			if code != 1 || !strings.Contains(errOut, "go tool pprof -proto BINARY PROFILE") {
				t.Errorf("diff %v: exit %d, stderr %q", args, code, errOut)
			}
		}
		if code, out, errOut := runTopArgs("-by", "size", src); code != 0 || !strings.Contains(out, "MemProfileRate") {
			t.Errorf("top -by size %s: exit %d\n%s%s", src, code, out, errOut)
		}
	}
}

// top -json has no window for a Go heap profile (the marking is an
// arenaprof one) and has one for an arenaprof profile.
func TestTopJSONWindow(t *testing.T) {
	heap := writeTemp(t, "heap.pb.gz", heapProfile(t))
	for _, c := range []struct {
		src  string
		want bool
	}{{heap, false}, {fixturePath(t), true}} {
		code, out, errOut := runTopArgs("-json", c.src)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["window"]; ok != c.want {
			t.Errorf("%s: window present %v, want %v:\n%s", c.src, ok, c.want, out)
		}
	}
}

// A heap upload of the agent (the Go heap in arenaprof's format) groups by
// function by default, as a Go heap profile does.
func TestHeapUploadGroupsByFunc(t *testing.T) {
	p, err := profile.Parse(bytes.NewReader(heapProfile(t)))
	if err != nil {
		t.Fatal(err)
	}
	c, err := goheap.Convert(p)
	if err != nil {
		t.Fatal(err)
	}
	src := writeTemp(t, "upload.pb.gz", profileBytes(t, c))
	code, out, errOut := runTopArgs("-json", src)
	if code != 0 || !strings.Contains(out, `"by": "func"`) {
		t.Errorf("exit %d: %s\n%s", code, errOut, out)
	}
	code, out, errOut = runDiffArgs("-json", src, src)
	if code != 0 || !strings.Contains(out, `"by": "func"`) {
		t.Errorf("diff: exit %d: %s\n%s", code, errOut, out)
	}
}
