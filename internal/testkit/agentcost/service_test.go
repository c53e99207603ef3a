package agentcost

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof"
	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/internal/cputime"
)

// request is what a client posts to /orders.
type request struct {
	User  string `json:"user"`
	Items int    `json:"items"`
}

// line is one line of an order; its strings and the slice of lines live
// in the request's arena.
type line struct {
	SKU   string `json:"sku"`
	Qty   int64  `json:"qty"`
	Price int64  `json:"price"`
}

// order is the response.
type order struct {
	User  string `json:"user"`
	Lines []line `json:"lines"`
	Total int64  `json:"total"`
}

// service is a small JSON service built as the docs show: an arena per
// request from a pool, encoding/json on both sides.
type service struct{ pool *arena.Pool }

func (s *service) orders(w http.ResponseWriter, r *http.Request) {
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Items <= 0 || req.Items > 1000 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	a := s.pool.Get(r.Context())
	defer s.pool.Put(a)
	o := arena.New[order](a)
	o.User = arena.String(a, req.User)
	o.Lines = arena.MakeSlice[line](a, 0, req.Items)
	for i := range req.Items {
		sku := arena.String(a, "sku-"+strconv.Itoa((i*7919)%1000000))
		l := line{SKU: sku, Qty: int64(i%5 + 1), Price: int64(100 + i*13)}
		o.Lines = append(o.Lines, l)
		o.Total += l.Qty * l.Price
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(o)
}

// startConfig returns what the configuration named cfg passes to
// arenaprof.Start, and whether it calls Start at all.
func startConfig(cfg, dir string) (arenaprof.Config, bool, error) {
	switch {
	case cfg == "none":
		return arenaprof.Config{}, false, nil
	case cfg == "start":
		return arenaprof.Config{}, true, nil
	case cfg == "dir":
		return arenaprof.Config{AppName: "svc", Dir: dir}, true, nil
	case strings.HasPrefix(cfg, "dir:"):
		return arenaprof.Config{AppName: "svc", Dir: dir, Profiles: strings.Split(strings.TrimPrefix(cfg, "dir:"), ",")}, true, nil
	}
	return arenaprof.Config{}, false, fmt.Errorf("unknown configuration %q", cfg)
}

// child runs the service in configuration cfg: it prints "addr ADDR" once
// it listens, then answers each line read from stdin: "mark" with "cpu NS"
// (the process's CPU time so far), "end" with "cpu NS hwm KB" (VmHWM), after
// which it stops.
func child(cfg string) error {
	dir, err := os.MkdirTemp("", "agentcost-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	c, start, err := startConfig(cfg, dir)
	if err != nil {
		return err
	}
	var sess *arenaprof.Session
	if start {
		if sess, err = arenaprof.Start(c); err != nil {
			return err
		}
	}
	s := &service{pool: arena.NewPool()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /orders", s.orders)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	fmt.Printf("addr %s\n", ln.Addr())
	var prof bytes.Buffer
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "mark":
			prof.Reset()
			if err := pprof.StartCPUProfile(&prof); err != nil {
				return err
			}
			fmt.Printf("cpu %d\n", cputime.Process())
		case "end":
			cpu := cputime.Process()
			pprof.StopCPUProfile()
			hwm, err := vmHWM()
			if err != nil {
				return err
			}
			agent, all, err := agentShare(prof.Bytes())
			if err != nil {
				return err
			}
			if path := os.Getenv("ARENAPROF_AGENTCOST_HEAPPROFILE"); path != "" {
				if err := writeHeapProfile(path); err != nil {
					return err
				}
			}
			fmt.Printf("cpu %d hwm %d agent %d all %d\n", cpu, hwm, agent, all)
			srv.Close()
			if sess != nil {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				return sess.Stop(ctx)
			}
			return nil
		}
	}
	return in.Err()
}

// agentFrames are the prefixes of the functions that only the agent's
// goroutines run: its collection and upload loops (and all they call),
// and fgprof's sampling goroutine.
var agentFrames = []string{
	"github.com/arenaprof/arenaprof/export/agent.",
	"github.com/felixge/fgprof.",
}

// agentShare returns the CPU time (nanoseconds) of the samples of the CPU
// profile data on a goroutine of the agent, and of all samples. The
// garbage collection that the agent's allocations cause is not counted:
// it runs on the GC's workers and in assists charged to whichever
// goroutine allocates.
func agentShare(data []byte) (agent, all int64, err error) {
	p, err := profile.Parse(bytes.NewReader(data))
	if err != nil {
		return 0, 0, err
	}
	i := len(p.SampleType) - 1 // cpu/nanoseconds
	for _, s := range p.Sample {
		v := s.Value[i]
		all += v
	stack:
		for _, loc := range s.Location {
			for _, l := range loc.Line {
				if l.Function == nil {
					continue
				}
				for _, pre := range agentFrames {
					if strings.HasPrefix(l.Function.Name, pre) {
						agent += v
						break stack
					}
				}
			}
		}
	}
	return agent, all, nil
}

// writeHeapProfile writes the Go heap profile, current as of a garbage
// collection, to path: where the heap goes (run with
// GODEBUG=memprofilerate=N for a finer profile).
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// vmHWM returns the process's peak resident set size in KiB.
func vmHWM() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for l := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kb int64
			_, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb)
			return kb, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}
