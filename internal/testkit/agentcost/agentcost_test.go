package agentcost

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"
)

// env returns the environment variable name, or def when it is unset.
func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// defaultConfigs are the configurations TestAgentCost compares unless
// ARENAPROF_AGENTCOST_CONFIGS names others.
const defaultConfigs = "none;start;dir;dir:arena;dir:arenas;dir:peak;dir:heap;dir:wall"

// TestAgentCost runs the service of this package in a child process in
// each configuration, round after round (the configurations interleaved,
// their order rotated each round), loads it at a fixed request rate from
// several workers, and prints each configuration's peak RSS (VmHWM) and
// CPU per request: medians over the rounds, and their spread.
//
//	ARENAPROF_AGENTCOST=1 go test -run TestAgentCost -v -timeout 0 ./internal/testkit/agentcost
//
// Variables (defaults in brackets): ARENAPROF_AGENTCOST_ROUNDS [3],
// ARENAPROF_AGENTCOST_SECONDS [30], ARENAPROF_AGENTCOST_RATE, requests a
// second over all workers [2500], ARENAPROF_AGENTCOST_WORKERS [4],
// ARENAPROF_AGENTCOST_ITEMS, lines per order [40], and
// ARENAPROF_AGENTCOST_CONFIGS, ";"-separated: "none" (no Start), "start"
// (Start with no destination), "dir" (Start writing to a directory, the
// default profiles), "dir:P,Q" (Config.Profiles P and Q). With
// ARENAPROF_AGENTCOST_HEAPPROFILE=PATH each child writes its Go heap
// profile there at the end (the last child's stays).
func TestAgentCost(t *testing.T) {
	if cfg := os.Getenv("ARENAPROF_AGENTCOST_CHILD"); cfg != "" {
		if err := child(cfg); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		return
	}
	if os.Getenv("ARENAPROF_AGENTCOST") == "" {
		t.Skip("set ARENAPROF_AGENTCOST=1 to measure the agent's cost (minutes)")
	}
	rounds, _ := strconv.Atoi(env("ARENAPROF_AGENTCOST_ROUNDS", "3"))
	secs, _ := strconv.Atoi(env("ARENAPROF_AGENTCOST_SECONDS", "30"))
	rate, _ := strconv.Atoi(env("ARENAPROF_AGENTCOST_RATE", "2500"))
	workers, _ := strconv.Atoi(env("ARENAPROF_AGENTCOST_WORKERS", "4"))
	items, _ := strconv.Atoi(env("ARENAPROF_AGENTCOST_ITEMS", "40"))
	configs := strings.Split(env("ARENAPROF_AGENTCOST_CONFIGS", defaultConfigs), ";")
	if rounds < 1 || secs < 1 || rate < 1 || workers < 1 || items < 1 || items > 1000 {
		t.Fatal("ARENAPROF_AGENTCOST_*: want positive rounds, seconds, rate, workers and 1-1000 items")
	}
	load := loadSpec{dur: time.Duration(secs) * time.Second, rate: rate, workers: workers, items: items}
	res := map[string][]result{}
	for r := range rounds {
		for i := range configs {
			cfg := configs[(i+r)%len(configs)]
			m, err := measure(cfg, load)
			if err != nil {
				t.Fatalf("round %d, %s: %v", r+1, cfg, err)
			}
			t.Logf("round %d %-22s hwm %6.1f MB  cpu/req %6.1f µs  agent %5.2f%% %6.2f ms/s  %7.0f req/s", r+1, cfg, m.hwmMB, m.cpuPerReqUs, m.agentPct, m.agentMsPerS, m.reqPerSec)
			res[cfg] = append(res[cfg], m)
		}
	}
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "configuration\tpeak RSS MB\t(range)\tΔ vs none\tCPU/req µs\t(range)\tΔ vs none\tagent CPU %%\t(range)\tagent ms/s\treq/s\t\n")
	base := res[configs[0]]
	for _, cfg := range configs {
		ms := res[cfg]
		h, hlo, hhi := stat(ms, func(m result) float64 { return m.hwmMB })
		c, clo, chi := stat(ms, func(m result) float64 { return m.cpuPerReqUs })
		q, _, _ := stat(ms, func(m result) float64 { return m.reqPerSec })
		bh, _, _ := stat(base, func(m result) float64 { return m.hwmMB })
		bc, _, _ := stat(base, func(m result) float64 { return m.cpuPerReqUs })
		a, alo, ahi := stat(ms, func(m result) float64 { return m.agentPct })
		am, _, _ := stat(ms, func(m result) float64 { return m.agentMsPerS })
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f-%.1f\t%+.1f\t%.1f\t%.1f-%.1f\t%+.1f%%\t%.2f\t%.2f-%.2f\t%.2f\t%.0f\t\n", cfg, h, hlo, hhi, h-bh, c, clo, chi, 100*(c-bc)/bc, a, alo, ahi, am, q)
	}
	tw.Flush()
	t.Logf("medians of %d rounds, %d s each at %d requests/s from %d workers (Δ: medians against %s)\n%s", rounds, secs, rate, workers, configs[0], b.String())
}

// stat returns the median, minimum and maximum of f over ms.
func stat(ms []result, f func(result) float64) (med, lo, hi float64) {
	v := make([]float64, len(ms))
	for i, m := range ms {
		v[i] = f(m)
	}
	slices.Sort(v)
	n := len(v)
	med = v[n/2]
	if n%2 == 0 {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	return med, v[0], v[n-1]
}

type loadSpec struct {
	dur           time.Duration
	rate, workers int
	items         int
}

type result struct {
	hwmMB, cpuPerReqUs, reqPerSec float64
	// agentPct is the agent's share of the process's CPU profile samples,
	// agentMsPerS its CPU milliseconds a second (see agentShare).
	agentPct, agentMsPerS float64
}

// measure runs one child in configuration cfg under load.
func measure(cfg string, load loadSpec) (result, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestAgentCost$")
	cmd.Env = append(os.Environ(), "ARENAPROF_AGENTCOST_CHILD="+cfg)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return result{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return result{}, err
	}
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	defer cmd.Wait()
	defer stdin.Close()
	out := bufio.NewScanner(stdout)
	next := func(prefix string) (string, error) {
		for out.Scan() {
			if v, ok := strings.CutPrefix(out.Text(), prefix); ok {
				return v, nil
			}
		}
		return "", cmp.Or(out.Err(), io.ErrUnexpectedEOF)
	}
	addr, err := next("addr ")
	if err != nil {
		return result{}, err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: load.workers}, Timeout: 10 * time.Second}
	url := "http://" + addr + "/orders"
	// Warm up: connections, the pool, the heap's first cycles.
	if _, err := run(client, url, load, time.Second); err != nil {
		return result{}, err
	}
	fmt.Fprintln(stdin, "mark")
	v, err := next("cpu ")
	if err != nil {
		return result{}, err
	}
	cpu0, _ := strconv.ParseInt(v, 10, 64)
	t0 := time.Now()
	n, err := run(client, url, load, load.dur)
	if err != nil {
		return result{}, err
	}
	elapsed := time.Since(t0)
	fmt.Fprintln(stdin, "end")
	v, err = next("cpu ")
	if err != nil {
		return result{}, err
	}
	var cpu1, hwm, agent, all int64
	if _, err := fmt.Sscanf(v, "%d hwm %d agent %d all %d", &cpu1, &hwm, &agent, &all); err != nil {
		return result{}, err
	}
	client.CloseIdleConnections()
	return result{
		hwmMB:       float64(hwm) * 1024 / 1e6,
		cpuPerReqUs: float64(cpu1-cpu0) / 1e3 / float64(n),
		reqPerSec:   float64(n) / elapsed.Seconds(),
		agentPct:    100 * float64(agent) / float64(max(all, 1)),
		agentMsPerS: float64(agent) / 1e6 / elapsed.Seconds(),
	}, nil
}

// run sends requests for dur from load.workers workers, each paced at
// load.rate/load.workers a second (a worker that falls behind sends at
// once, without bursting to catch up), and returns how many succeeded.
func run(client *http.Client, url string, load loadSpec, dur time.Duration) (int64, error) {
	var n atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	period := time.Duration(float64(time.Second) * float64(load.workers) / float64(load.rate))
	end := time.Now().Add(dur)
	for w := range load.workers {
		wg.Go(func() {
			body := fmt.Sprintf(`{"user":"user-%d","items":%d}`, w, load.items)
			next := time.Now()
			for next.Before(end) {
				resp, err := client.Post(url, "application/json", strings.NewReader(body))
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %s", resp.Status)
					}
				}
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				n.Add(1)
				next = next.Add(period)
				if d := time.Until(next); d > 0 {
					time.Sleep(d)
				} else {
					next = time.Now()
				}
			}
		})
	}
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		return n.Load(), err
	}
	return n.Load(), nil
}
