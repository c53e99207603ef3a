package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	httppprof "net/http/pprof"
	"runtime"
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

// The Go heap sampler's rule: a runtime profile names no Go release, so
// the rule of Go 1.24 is assumed and the heading says so; -go-version
// names another; arenaprof's own profiles name theirs (and win); a bad
// -go-version is a usage error.
func TestGoHeapSamplerRule(t *testing.T) {
	raw := heapProfile(t)
	p, err := profile.Parse(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c, err := goheap.Convert(p)
	if err != nil {
		t.Fatal(err)
	}
	heap := writeTemp(t, "heap.pb.gz", raw)
	upload := writeTemp(t, "upload.pb.gz", profileBytes(t, c))
	for _, tc := range []struct {
		args                    []string
		code                    int
		sampler, version, words string
	}{
		{[]string{heap}, 0, "go1.24", "", "Go heap sampler: go1.24 rule (assumed: the profile names no Go release; pass -go-version if it ran Go 1.23 or older)"},
		{[]string{"-go-version", "go1.23", heap}, 0, "go1.23", "go1.23", "Go heap sampler: go1.23 rule (go1.23), exact weights"},
		{[]string{"-go-version", "go1.22.3", upload}, 0, "go1.24", runtime.Version(), "Go heap sampler: go1.24 rule (" + runtime.Version() + ")"},
		{[]string{"-any-order", heap}, 0, "go1.24", "", "intervals hold for any allocation order"},
		{[]string{"-go-version", "1.23", heap}, 2, "", "", "bad -go-version"},
	} {
		code, out, errOut := runTopArgs(tc.args...)
		if code != tc.code || !strings.Contains(out+errOut, tc.words) {
			t.Errorf("top %v: exit %d, want %d and %q in:\n%s%s", tc.args, code, tc.code, tc.words, out, errOut)
		}
		if tc.code != 0 {
			continue
		}
		code, out, errOut = runTopArgs(append([]string{"-json"}, tc.args...)...)
		var m struct {
			Sampler string `json:"heap_sampler"`
			Version string `json:"heap_go_version"`
		}
		if err := json.Unmarshal([]byte(out), &m); code != 0 || err != nil || m.Sampler != tc.sampler || m.Version != tc.version {
			t.Errorf("top -json %v: exit %d, %v, sampler %q of %q, want %q of %q: %s", tc.args, code, err, m.Sampler, m.Version, tc.sampler, tc.version, errOut)
		}
	}
	for _, args := range [][]string{{"-go-version", "go1.23", heap, heap}, {"-go-version", "go1.23", upload, upload}} {
		v := "go1.23 rule (go1.23)"
		if args[2] == upload {
			v = "go1.24 rule (" + runtime.Version() + ")"
		}
		code, out, errOut := runDiffArgs(args...)
		if want := "Go heap sampler: BASE " + v + ", NEW " + v; code > 1 || !strings.Contains(out, want) {
			t.Errorf("diff %v: exit %d, want %q in:\n%s%s", args, code, want, out, errOut)
		}
	}
}
