package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/export/agent"
)

// bothServers returns the URLs of the Pyroscope v1.19.3 and v2.2.1
// servers .ci/run starts ($ARENAPROF_PYROSCOPE_URL,
// $ARENAPROF_PYROSCOPE2_URL), or skips the test without both.
func bothServers(t *testing.T) (v1, v2 string) {
	t.Helper()
	v1, v2 = os.Getenv("ARENAPROF_PYROSCOPE_URL"), os.Getenv("ARENAPROF_PYROSCOPE2_URL")
	if v1 == "" || v2 == "" {
		t.Skip("needs a Pyroscope v1 server at $ARENAPROF_PYROSCOPE_URL and a v2 server at $ARENAPROF_PYROSCOPE2_URL (.ci/run starts both)")
	}
	return v1, v2
}

// TestPyroscopeServersAgree pushes the same arena profiles to a Pyroscope
// v1.19.3 server ($ARENAPROF_PYROSCOPE_URL) and a v2.2.1 server
// ($ARENAPROF_PYROSCOPE2_URL; .ci/run starts both) and checks that top
// and diff -pyroscope print the same rows and intervals from each: the
// fleet reader's queries (SelectMergeProfile, Series, LabelValues) answer
// alike on the two storage generations. It logs each server's read time.
func TestPyroscopeServersAgree(t *testing.T) {
	v1, v2 := bothServers(t)
	svc := fmt.Sprintf("agree_%d", time.Now().UnixNano())
	now := time.Now().Truncate(time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, url := range []string{v1, v2} {
		up, err := agent.NewPyroscope(agent.PyroscopeConfig{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		for i, pod := range []string{"a", "b", "c"} {
			version := []string{"v1", "v2", "v2"}[i]
			p := buildFixture(t)
			p.TimeNanos = now.Add(time.Duration(i-4) * time.Minute).UnixNano()
			p.DurationNanos = int64(time.Minute)
			data := profileBytes(t, p)
			u := &agent.Upload{
				AppName: svc,
				Labels:  map[string]string{"pod": pod, "version": version},
				Profile: "arena",
				From:    now.Add(time.Duration(i-4) * time.Minute),
				Until:   now.Add(time.Duration(i-3) * time.Minute),
				Data:    data,
			}
			if err := up.Upload(ctx, u); err != nil {
				t.Fatalf("push to %s: %v", url, err)
			}
		}
	}
	from, to := now.Add(-10*time.Minute).Format(time.RFC3339), now.Add(time.Minute).Format(time.RFC3339)
	sel := func(kv string) string { return fmt.Sprintf(`{service_name=%q%s}`, svc, kv) }
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"top", []string{"top", "-pyroscope", "URL", "-from", from, "-to", to, sel("")}},
		{"top by func json", []string{"top", "-pyroscope", "URL", "-from", from, "-to", to, "-by", "func", "-json", sel("")}},
		{"top by pod", []string{"top", "-pyroscope", "URL", "-from", from, "-to", to, "-by", "label=pod", sel("")}},
		{"diff versions", []string{"diff", "-pyroscope", "URL", "-from", from, "-to", to, sel(`,version="v1"`), sel(`,version="v2"`)}},
	} {
		args := tt.args
		t.Run(tt.name, func(t *testing.T) {
			outs := map[string]string{}
			// The pushed data becomes queryable within seconds; until
			// both agree, try again for a minute.
			deadline := time.Now().Add(time.Minute)
			for {
				for _, url := range []string{v1, v2} {
					a := append([]string(nil), args...)
					a[2] = url
					var out, errOut bytes.Buffer
					start := time.Now()
					code := run(a, &out, &errOut)
					outs[url] = fmt.Sprintf("exit %d\n%s%s", code, out.String(), errOut.String())
					t.Logf("%s read in %s", url, time.Since(start).Round(time.Millisecond))
				}
				if outs[v1] == outs[v2] && strings.HasPrefix(outs[v1], "exit 0\n") && strings.Contains(outs[v1], "total") {
					t.Logf("both servers:\n%s", outs[v1])
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("%v differs between the servers:\nv1.19.3 (%s):\n%s\nv2.2.1 (%s):\n%s", args, v1, outs[v1], v2, outs[v2])
				}
				time.Sleep(2 * time.Second)
			}
		})
	}
}
