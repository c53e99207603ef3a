package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadLimitAdviceFollowable: rss and leaks refuse an input past
// -max-bytes or -max-memory with advice that names only flags the
// command has, and following the advice (the values it gives) reads the
// input.
func TestReadLimitAdviceFollowable(t *testing.T) {
	dir := t.TempDir()
	series := filepath.Join(dir, "series")
	if err := os.Mkdir(series, 0o755); err != nil {
		t.Fatal(err)
	}
	writeSeries(t, series, 10, 10<<10, 0)
	srv := rssServer(t)
	resp, err := http.Get(srv.URL + "/debug/arenaprof/rss")
	if err != nil {
		t.Fatal(err)
	}
	saved, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	rssFile := filepath.Join(dir, "rss.pb.gz")
	if err := os.WriteFile(rssFile, saved, 0o644); err != nil {
		t.Fatal(err)
	}
	flagIn := regexp.MustCompile(`(?:^|[\s(])(-[a-z][a-z-]*)\b`)
	advice := regexp.MustCompile(`e\.g\. (-max-[a-z]+) ([0-9.]+[A-Za-z]*)`)
	for _, tc := range []struct {
		cmd, input string
	}{
		{"rss", rssFile},
		{"rss", srv.URL},
		{"leaks", series},
	} {
		_, _, usage := runCLI(tc.cmd, "-h")
		for _, bound := range []string{"-max-memory", "-max-bytes"} {
			code, _, errOut := runCLI(tc.cmd, bound, "100", tc.input)
			if code != 1 || !strings.Contains(errOut, "raise "+bound) {
				t.Errorf("%s %s 100 %s: exit %d, %q; want exit 1 and advice to raise %s", tc.cmd, bound, tc.input, code, errOut, bound)
				continue
			}
			for _, m := range flagIn.FindAllStringSubmatch(errOut, -1) {
				if !strings.Contains(usage, "  "+m[1]+" ") {
					t.Errorf("%s %s 100: the refusal names %s, which %s has not:\n%s", tc.cmd, bound, m[1], tc.cmd, errOut)
				}
			}
			args := []string{tc.cmd}
			for _, m := range advice.FindAllStringSubmatch(errOut, -1) {
				args = append(args, m[1], m[2])
			}
			if len(args) == 1 {
				t.Errorf("%s %s 100: no value advised: %s", tc.cmd, bound, errOut)
				continue
			}
			if code, _, errOut := runCLI(append(args, tc.input)...); code != 0 {
				t.Errorf("%v (the advice followed): exit %d, %s", args, code, errOut)
			}
		}
	}
}
