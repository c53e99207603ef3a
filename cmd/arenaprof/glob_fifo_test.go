//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGlobSkipsFIFO: a glob that matches a FIFO (which no one writes)
// skips it and says so, in top's heading and in leaks' notes, instead of
// blocking for ever on opening it; a glob that matches only the FIFO is
// refused naming it.
func TestGlobSkipsFIFO(t *testing.T) {
	dir := t.TempDir()
	fixture := profileBytes(t, buildFixture(t))
	if err := os.WriteFile(filepath.Join(dir, "a.pb.gz"), fixture, 0o644); err != nil {
		t.Fatal(err)
	}
	series := filepath.Join(dir, "series")
	if err := os.Mkdir(series, 0o755); err != nil {
		t.Fatal(err)
	}
	writeSeries(t, series, 10, 10<<10, 0)
	for _, fifo := range []string{filepath.Join(dir, "b.pb.gz"), filepath.Join(series, "heap-fifo.pb.gz")} {
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	skipped := func(path string) string { return path + " (not a regular file)" }
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"top", filepath.Join(dir, "*.pb.gz")}, 0, skipped(filepath.Join(dir, "b.pb.gz"))},
		{[]string{"top", "-json", filepath.Join(dir, "*.pb.gz")}, 0, skipped(filepath.Join(dir, "b.pb.gz"))},
		{[]string{"top", filepath.Join(dir, "b.*")}, 1, "no file matches " + filepath.Join(dir, "b.*") + " (it matches " + skipped(filepath.Join(dir, "b.pb.gz")) + ")"},
		{[]string{"leaks", filepath.Join(series, "*.pb.gz")}, 0, "note: not read: " + skipped(filepath.Join(series, "heap-fifo.pb.gz"))},
	} {
		type result struct {
			code     int
			out, err string
		}
		done := make(chan result, 1)
		go func() {
			code, out, errOut := runCLI(tc.args...)
			done <- result{code, out, errOut}
		}()
		select {
		case r := <-done:
			if r.code != tc.code || !strings.Contains(r.out+r.err, tc.want) {
				t.Errorf("%v: exit %d, want %d and %q in:\n%s%s", tc.args, r.code, tc.code, tc.want, r.out, r.err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%v: still running after 30 s (blocked on the FIFO)", tc.args)
		}
	}
}
