package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

func TestRunDir(t *testing.T) {
	dir := t.TempDir()
	var out strings.Builder
	if err := run([]string{"-dir", dir, "-interval", "50ms", "-duration", "200ms", "-workers", "2"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "failed 0") || !strings.Contains(out.String(), "dropped 0") {
		t.Fatalf("output:\n%s", out.String())
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, e := range ents {
		for _, k := range []string{"arena", "wall", "heap"} {
			if strings.HasSuffix(e.Name(), "-"+k+".pb.gz") {
				kinds[k] = true
			}
		}
	}
	if len(kinds) != 3 {
		t.Fatalf("profile kinds written: %v (files %v)", kinds, ents)
	}
}

func TestRunServer(t *testing.T) {
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ingest" && r.Header.Get("X-Scope-OrgID") == "t1" {
			got.Add(1)
		}
	}))
	defer srv.Close()
	var out strings.Builder
	if err := run([]string{"-server", srv.URL, "-tenant", "t1", "-app", "shop", "-interval", "50ms", "-duration", "150ms", "-workers", "1"}, &out); err != nil {
		t.Fatal(err)
	}
	if got.Load() < 3 || !strings.Contains(out.String(), "failed 0") {
		t.Fatalf("%d requests; output:\n%s", got.Load(), out.String())
	}
}

// TestRunBadFlags: bad flags fail the run, which leaves nothing behind
// (without -dir or -server it writes into a temporary directory of its
// own).
func TestRunBadFlags(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for _, args := range [][]string{{"-duration", "-1s"}, {"-workers", "0"}, {"-interval", "1ns"}, {"-server", "ftp://x"}, {"-nope"}} {
		if err := run(args, new(strings.Builder)); err == nil {
			t.Errorf("run(%q) succeeded", args)
		}
	}
	if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
		t.Errorf("failed runs left %v in the temporary directory", ents)
	}
}
