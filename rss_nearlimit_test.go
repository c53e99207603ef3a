package arenaprof_test

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof"
)

// TestNearLimitWritesRSS sets GOMEMLIMIT just above the process's RSS:
// the session's first peak is near it, and its resident-memory profile
// lands in Config.Dir at once, saying how near.
func TestNearLimitWritesRSS(t *testing.T) {
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skip("no /proc/self/statm:", err)
	}
	var size, pages int64
	if _, err := fmt.Sscan(string(statm), &size, &pages); err != nil {
		t.Fatal(err)
	}
	rss := pages * int64(os.Getpagesize())
	old := debug.SetMemoryLimit(rss + rss/20)
	defer debug.SetMemoryLimit(old)
	dir := t.TempDir()
	s, err := arenaprof.Start(arenaprof.Config{AppName: "near", Dir: dir, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(context.Background())
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), "-rss.pb.gz") {
				continue
			}
			data, err := os.ReadFile(dir + "/" + e.Name())
			if err != nil {
				t.Fatal(err)
			}
			p, err := profile.ParseData(data)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range p.Comments {
				if strings.Contains(c, "written near a limit") && strings.Contains(c, "GOMEMLIMIT") {
					return
				}
			}
			t.Fatalf("%s says nothing of the limit: %q", e.Name(), p.Comments)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no rss profile in Config.Dir within 5 s")
}
