package arenaprof_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"path/filepath"
	rpprof "runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof"
	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/report"
)

// uploadedProfiles returns the names of the profiles a session with cfg
// writes into a directory over a few intervals, sorted.
func uploadedProfiles(t *testing.T, cfg arenaprof.Config) []string {
	t.Helper()
	dir := t.TempDir()
	cfg.AppName, cfg.Dir, cfg.Interval = "shop", dir, 20*time.Millisecond
	s, err := arenaprof.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := arena.NewArena()
	allocOrders(a, 1000)
	time.Sleep(50 * time.Millisecond)
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	a.Free()
	files, _ := filepath.Glob(filepath.Join(dir, "*.pb.gz"))
	var names []string
	for _, f := range files {
		base := strings.TrimSuffix(filepath.Base(f), ".pb.gz")
		name := base[strings.LastIndexByte(base, '-')+1:]
		if _, err := strconv.Atoi(name); err == nil {
			// NAME-2.pb.gz: the directory destination's second file of a
			// name within one timestamp (a loaded machine's short intervals).
			base = base[:strings.LastIndexByte(base, '-')]
			name = base[strings.LastIndexByte(base, '-')+1:]
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// TestProfiles: Config.Profiles picks the uploaded profiles one by one;
// empty uploads the memory profiles (neither wall nor CPU).
func TestProfiles(t *testing.T) {
	setMeanBytes(t, 64)
	for _, tc := range []struct {
		name     string
		profiles []string
		want     []string
	}{
		{"default", nil, []string{"arena", "arenas", "heap", "peak"}},
		{"arena alone", []string{"arena"}, []string{"arena"}},
		{"heap and wall", []string{"wall", "heap"}, []string{"heap", "wall"}},
		{"cpu", []string{"cpu", "arena"}, []string{"arena", "cpu"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := uploadedProfiles(t, arenaprof.Config{Profiles: tc.profiles})
			if !slices.Equal(got, tc.want) {
				t.Errorf("Profiles %q uploaded %q, want %q", tc.profiles, got, tc.want)
			}
		})
	}
}

// cpuProfileStatus asks net/http/pprof's CPU profile handler for a one
// second profile and returns its status and body.
func cpuProfileStatus(t *testing.T) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	pprof.Profile(rec, httptest.NewRequest("GET", "/debug/pprof/profile?seconds=1", nil))
	return rec.Code, rec.Body.String()
}

// TestCPUConflict: while a session uploads the CPU profile,
// net/http/pprof's /debug/pprof/profile answers 500 "cpu profiling already
// in use" (as Config.Profiles says); by default it keeps working, and
// after Stop it works again.
func TestCPUConflict(t *testing.T) {
	for _, tc := range []struct {
		name     string
		profiles []string
		want     int
	}{
		{"default", nil, http.StatusOK},
		{"cpu", []string{"arena", "cpu"}, http.StatusInternalServerError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := arenaprof.Start(arenaprof.Config{AppName: "shop", Dir: t.TempDir(), Profiles: tc.profiles})
			if err != nil {
				t.Fatal(err)
			}
			code, body := cpuProfileStatus(t)
			if err := s.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if code != tc.want {
				t.Fatalf("/debug/pprof/profile during the session: %d %q, want %d", code, body, tc.want)
			}
			if code != http.StatusOK && !strings.Contains(body, "cpu profiling already in use") {
				t.Errorf("/debug/pprof/profile during the session: %q", body)
			}
			if code, body := cpuProfileStatus(t); code != http.StatusOK {
				t.Errorf("/debug/pprof/profile after Stop: %d %q", code, body)
			}
		})
	}
}

// TestSampleMeanBytes: Start sets the process-wide mean until Stop, which
// restores the mean Start found; a Start that fails restores it too.
func TestSampleMeanBytes(t *testing.T) {
	setMeanBytes(t, 4096)
	s, err := arenaprof.Start(arenaprof.Config{SampleMeanBytes: 512})
	if err != nil {
		t.Fatal(err)
	}
	if got := hooks.MeanBytes(); got != 512 {
		t.Errorf("mean during the session: %d, want 512", got)
	}
	a := arena.NewArena()
	allocOrders(a, 1000)
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/debug/arenaprof", nil))
	prof, err := report.Parse(rec.Body, report.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if prof.Period != 512 {
		t.Errorf("the profile's period (its mean) is %d, want 512", prof.Period)
	}
	a.Free()
	s.Stop(context.Background())
	if got := hooks.MeanBytes(); got != 4096 {
		t.Errorf("mean after Stop: %d, want 4096 restored", got)
	}

	// A mean changed during the session is the user's: Stop leaves it.
	s, err = arenaprof.Start(arenaprof.Config{SampleMeanBytes: 512})
	if err != nil {
		t.Fatal(err)
	}
	setMeanBytes(t, 1024)
	s.Stop(context.Background())
	if got := hooks.MeanBytes(); got != 1024 {
		t.Errorf("mean after Stop: %d, want 1024, set during the session", got)
	}
	setMeanBytes(t, 512)

	// A CPU profile already running makes Start fail after it set the mean.
	var cpu bytes.Buffer
	if err := rpprof.StartCPUProfile(&cpu); err != nil {
		t.Skipf("a CPU profile is running already (go test -cpuprofile?): %v", err)
	}
	defer rpprof.StopCPUProfile()
	s, err = arenaprof.Start(arenaprof.Config{AppName: "shop", Dir: t.TempDir(), Profiles: []string{"cpu"}, SampleMeanBytes: 64})
	if err == nil {
		s.Stop(context.Background())
		t.Fatal("Start with cpu while a CPU profile runs: no error")
	}
	if got := hooks.MeanBytes(); got != 512 {
		t.Errorf("mean after a failed Start: %d, want 512 restored", got)
	}
}
