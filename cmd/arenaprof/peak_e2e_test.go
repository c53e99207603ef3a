package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/export/agent"
)

// TestPyroscopeServersAgreeOnPeaks pushes an arena upload and a peak
// upload (memory="peak") of one service to a Pyroscope v1.19.3 server
// ($ARENAPROF_PYROSCOPE_URL) and a v2.2.1 server
// ($ARENAPROF_PYROSCOPE2_URL; .ci/run starts both, and runs this test in
// the step of TestPyroscopeServersAgree, whose name starts its own): top
// -pyroscope reads the arena upload alone by default, and refuses a
// selector that brings the peak upload, saying why, rather than adding
// peaks up (neither server's SelectSeries aggregates by maximum).
func TestPyroscopeServersAgreeOnPeaks(t *testing.T) {
	v1, v2 := bothServers(t)
	svc := fmt.Sprintf("peak_%d", time.Now().UnixNano())
	now := time.Now().Truncate(time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, url := range []string{v1, v2} {
		up, err := agent.NewPyroscope(agent.PyroscopeConfig{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		for i, source := range []string{"arena", "peak"} {
			p := buildFixture(t)
			p.TimeNanos = now.Add(time.Duration(i-3) * time.Minute).UnixNano()
			p.DurationNanos = int64(time.Minute)
			u := &agent.Upload{
				AppName: svc,
				Profile: source,
				From:    now.Add(time.Duration(i-3) * time.Minute),
				Until:   now.Add(time.Duration(i-2) * time.Minute),
				Data:    profileBytes(t, p),
			}
			if err := up.Upload(ctx, u); err != nil {
				t.Fatalf("push to %s: %v", url, err)
			}
		}
	}
	from, to := now.Add(-10*time.Minute).Format(time.RFC3339), now.Add(time.Minute).Format(time.RFC3339)
	for _, tt := range []struct {
		name string
		sel  string
		code int
		want string
	}{
		{"default leaves peaks out", `{service_name=%q}`, 0, "total"},
		{"peaks by name", `{service_name=%q, memory="peak"}`, 1, "a sum of peaks is no quantity"},
		{"peaks among others", `{service_name=%q, memory=~"arena|peak"}`, 1, "a sum of peaks is no quantity"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, url := range []string{v1, v2} {
				// The pushed data becomes queryable within seconds.
				deadline := time.Now().Add(time.Minute)
				for {
					var out, errOut bytes.Buffer
					code := run([]string{"top", "-pyroscope", url, "-from", from, "-to", to, fmt.Sprintf(tt.sel, svc)}, &out, &errOut)
					got := out.String() + errOut.String()
					if code == tt.code && strings.Contains(got, tt.want) {
						t.Logf("%s: exit %d: %s", url, code, got)
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s: exit %d, want %d with %q:\n%s", url, code, tt.code, tt.want, got)
					}
					time.Sleep(2 * time.Second)
				}
			}
		})
	}
}
