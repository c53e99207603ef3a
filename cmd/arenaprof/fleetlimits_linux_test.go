package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// hostileQuerier is a Pyroscope querier (Connect JSON) whose SelectSeries
// answers are large: each holds series arena series with a junk label of
// 100 bytes and points points. With distinct, every answer's series are
// combinations of their own; else every answer repeats the same ones.
// It writes its answers as it builds them.
type hostileQuerier struct {
	series, points int
	distinct       bool
	answers        atomic.Int64
}

func (h *hostileQuerier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ProfileTypeID string `json:"profileTypeID"`
		End           int64
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch {
	case strings.HasSuffix(r.URL.Path, "/LabelValues"):
		var names []string
		for _, n := range []string{"memory", "space"} {
			for _, t := range []string{"alloc_objects:count", "alloc_space:bytes", "alloc_samples:count", "alloc_tail:bytes"} {
				names = append(names, n+":"+t+":space:bytes")
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"names": names})
	case strings.HasSuffix(r.URL.Path, "/SelectSeries"):
		n := h.answers.Add(1)
		// Per point: 2 objects of 4 KiB, one sampled, 100 bytes past
		// its sampling threshold.
		v := map[string]int{"alloc_objects": 2, "alloc_space": 8192, "alloc_samples": 1, "alloc_tail": 100}[strings.Split(req.ProfileTypeID, ":")[1]]
		b := bufio.NewWriterSize(w, 64<<10)
		b.WriteString(`{"series":[`)
		junk := strings.Repeat("j", 100)
		for i := range h.series {
			if i > 0 {
				b.WriteByte(',')
			}
			id := int64(i)
			if h.distinct {
				id += n * int64(h.series)
			}
			fmt.Fprintf(b, `{"labels":[{"name":"memory","value":"arena"},{"name":"sampling_mean","value":"4096"},{"name":"type","value":"main.T%d"},{"name":"junk","value":"%s%d"}],"points":[`, id, junk, i)
			for j := range h.points {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(b, `{"value":%d,"timestamp":"%d"}`, v, req.End-int64(j))
			}
			b.WriteString(`]}`)
		}
		b.WriteString(`]}`)
		b.Flush()
	default:
		http.Error(w, "unexpected", http.StatusNotFound)
	}
}

// fleetChildEnv carries the arguments of the CLI run by
// TestFleetReadChild, one per line.
const fleetChildEnv = "ARENAPROF_FLEETREAD_CHILD_ARGS"

// TestFleetReadChild runs the CLI with the arguments in $fleetChildEnv
// and exits with its code: the child process of TestFleetReadMemory.
func TestFleetReadChild(t *testing.T) {
	args := os.Getenv(fleetChildEnv)
	if args == "" {
		t.Skip("the child of TestFleetReadMemory")
	}
	os.Exit(run(strings.Split(args, "\n"), os.Stdout, os.Stderr))
}

// TestFleetReadMemory: a top -pyroscope read against a server answering
// with large series keeps its process's peak resident memory (the child's
// max RSS) under -max-memory, whether it reads the answers through or is
// refused at the bound, naming -max-memory and a value that would do.
// With ARENAPROF_FLEET_MEMORY_LONG=1 it also reads the reported case: 8
// days at the default -max-memory, 72 answers of 60,000 series (1.5 GB).
func TestFleetReadMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 170 MB of answers")
	}
	// The race detector's shadow memory is no part of the read's.
	checkRSS := !raceBuild()
	tests := []struct {
		name      string
		series    int
		distinct  bool
		from      string
		maxMemory int64 // 0: the default
		long      bool
		code      int
		want      string
	}{
		// 24 answers (3 pieces of the range, 2 names, 4 types) of 20,000
		// series (about 7 MB each), the same combinations in each.
		{"large answers read", 20000, false, "-2d", 256 << 20, false, 0, "showing 10 of 20000 groups"},
		// Each answer's combinations its own: 480,000 in all, which would
		// keep about 300 MB.
		{"refused at -max-memory", 20000, true, "-2d", 256 << 20, false, 1, "a quarter of -max-memory 256MiB (half of it is left to the collector's headroom, a quarter to the answers in flight); raise -max-memory (e.g. -max-memory 2GiB)"},
		// 72 answers (9 pieces) of 60,000 series (about 21 MB each).
		{"8 days at the default", 60000, false, "-8d", 0, true, 0, "showing 10 of 60000 groups"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.long && os.Getenv("ARENAPROF_FLEET_MEMORY_LONG") != "1" {
				t.Skip("reads 1.5 GB of answers: set ARENAPROF_FLEET_MEMORY_LONG=1")
			}
			h := &hostileQuerier{series: tt.series, points: 1, distinct: tt.distinct}
			srv := httptest.NewServer(h)
			defer srv.Close()
			args := []string{"top", "-pyroscope", srv.URL, "-from", tt.from, "-by", "type"}
			limit := int64(pprofmt.DefaultMaxMemory)
			if tt.maxMemory > 0 {
				limit = tt.maxMemory
				args = append(args, "-max-memory", formatByteSize(limit))
			}
			args = append(args, `{service_name="shop"}`)
			cmd := exec.Command(os.Args[0], "-test.run=^TestFleetReadChild$")
			cmd.Env = append(os.Environ(), fleetChildEnv+"="+strings.Join(args, "\n"), "GOGC=", "GOMEMLIMIT=")
			out, _ := cmd.CombinedOutput()
			rss := int64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) << 10
			t.Logf("max RSS %.1f MiB after %d answers; exit %d: %.600s", float64(rss)/(1<<20), h.answers.Load(), cmd.ProcessState.ExitCode(), out)
			if cmd.ProcessState.ExitCode() != tt.code || !strings.Contains(string(out), tt.want) {
				t.Errorf("exit %d, want %d with %q", cmd.ProcessState.ExitCode(), tt.code, tt.want)
			}
			if checkRSS && rss >= limit {
				t.Errorf("max RSS %d bytes, at or above -max-memory %d", rss, limit)
			}
		})
	}
}

// raceBuild reports whether the test binary was built with -race.
func raceBuild() bool {
	bi, ok := debug.ReadBuildInfo()
	return ok && slices.Contains(bi.Settings, debug.BuildSetting{Key: "-race", Value: "true"})
}
