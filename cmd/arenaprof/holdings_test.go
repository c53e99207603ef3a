package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/holdings"
)

// stackOf returns the stack of its caller's caller.
//
//go:noinline
func leakySite() []uintptr { return callerStack() }

//go:noinline
func busySite() []uintptr { return callerStack() }

//go:noinline
func callerStack() []uintptr {
	pcs := make([]uintptr, 16)
	return pcs[:runtime.Callers(2, pcs)]
}

// holdingsFile writes the live-arenas profile of hs to a temporary file:
// the registry's reader is replaced by hs while export builds it.
func holdingsFile(t *testing.T, name string, hs []holdings.Holding) string {
	t.Helper()
	old := holdings.SetReader(func() []holdings.Holding { return hs })
	prof, err := export.BuildArenas()
	holdings.SetReader(old)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := prof.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

// holdingsFixture writes a live-arenas profile: leakySite holds two old
// arenas (2 MiB), busySite young ones (3.06 MiB, one labeled), and pool 7
// four idle arenas (4 MiB).
func holdingsFixture(t *testing.T) string {
	leaky, busy := leakySite(), busySite()
	return holdingsFile(t, "arenas.pb.gz", []holdings.Holding{
		{Stack: leaky, Age: 2 * time.Hour, Arenas: 1, Reserved: 1 << 20, Used: 1000},
		{Stack: leaky, Age: 20 * time.Minute, Arenas: 1, Reserved: 1 << 20, Used: 0},
		{Stack: busy, Age: 100 * time.Millisecond, Arenas: 1, Reserved: 3 << 20, Used: 3 << 20},
		{Stack: busy, Labels: hooks.NewLabels("endpoint", "/x"), Age: 5 * time.Minute, Arenas: 1, Reserved: 64 << 10},
		{Stack: busy, Arenas: 4, Reserved: 4 << 20, Pool: 7},
	})
}

func TestTopHoldings(t *testing.T) {
	path := holdingsFixture(t)
	var out, errOut bytes.Buffer
	if code := run([]string{"top", path}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	got := out.String()
	t.Log("\n" + got)
	lines := strings.Split(got, "\n")
	for _, want := range []string{"exact counts and bytes, not sampled (no intervals)", "! marks groups with arenas held 10m or more"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(got, "INTERVAL") {
		t.Error("output shows intervals")
	}
	// Largest reserved first: the idle pool (4 MiB), busySite (3.06 MiB), leakySite (2 MiB).
	var order []string
	for _, l := range lines {
		for _, k := range []string{"idle arenas of pool 7", "busySite", "leakySite"} {
			if strings.Contains(l, k) {
				order = append(order, k)
				if k == "leakySite" && !strings.Contains(l, " 2  !  github.com/arenaprof/arenaprof/cmd/arenaprof.leakySite") {
					t.Errorf("leakySite row not flagged with 2 old arenas: %q", l)
				}
				if k == "busySite" && strings.Contains(l, "!") {
					t.Errorf("busySite row flagged: %q", l)
				}
			}
		}
	}
	if strings.Join(order, ",") != "idle arenas of pool 7,busySite,leakySite" {
		t.Errorf("order %v", order)
	}
	out.Reset()
	if code := run([]string{"top", "-old", "1h", "-json", path}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), `"exact": true`) || !strings.Contains(out.String(), "\"old\": 1\n") {
		t.Errorf("-json -old 1h:\n%s", out.String())
	}
	if code := run([]string{"top", "-by", "type", path}, &out, &errOut); code == 0 {
		t.Error("-by type accepted on a live-arenas profile")
	}
}

func TestDiffHoldings(t *testing.T) {
	leaky, busy := leakySite(), busySite()
	base := holdingsFile(t, "base.pb.gz", []holdings.Holding{
		{Stack: leaky, Age: 20 * time.Minute, Arenas: 1, Reserved: 1 << 20},
		{Stack: busy, Age: time.Second, Arenas: 2, Reserved: 2 << 20},
	})
	next := holdingsFile(t, "next.pb.gz", []holdings.Holding{
		{Stack: leaky, Age: 30 * time.Minute, Arenas: 3, Reserved: 3 << 20},
		{Stack: busy, Age: time.Second, Arenas: 1, Reserved: 1 << 20},
	})
	var out, errOut bytes.Buffer
	if code := run([]string{"diff", base, next}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	got := out.String()
	t.Log("\n" + got)
	var leakyLine, busyLine string
	for _, l := range strings.Split(got, "\n") {
		switch {
		case strings.Contains(l, "leakySite"):
			leakyLine = l
		case strings.Contains(l, "busySite"):
			busyLine = l
		}
	}
	if !strings.Contains(leakyLine, "+2.00MiB") || !strings.Contains(leakyLine, " + ") {
		t.Errorf("leakySite not growing: %q", leakyLine)
	}
	if !strings.Contains(busyLine, "-1.00MiB") || strings.Contains(busyLine, " + ") {
		t.Errorf("busySite: %q", busyLine)
	}
	if strings.Index(got, "leakySite") > strings.Index(got, "busySite") {
		t.Error("the growing site is not first")
	}
	// -fail-above tests intervals: refused, on one line, for exact counts.
	out.Reset()
	errOut.Reset()
	if code := run([]string{"diff", "-fail-above", "1.2", base, next}, &out, &errOut); code != 2 ||
		!strings.Contains(errOut.String(), "-fail-above tests the intervals of sampled profiles") || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("diff -fail-above of live-arenas profiles: exit %d, %q", code, errOut.String())
	}
	// A live-arenas profile against an allocation profile is refused.
	alloc := diffProfileFile(t, "alloc.pb.gz", 1, 1, 10, 1)
	if code := run([]string{"diff", base, alloc}, &out, &errOut); code == 0 {
		t.Error("diff of a live-arenas and an allocation profile accepted")
	}
}
