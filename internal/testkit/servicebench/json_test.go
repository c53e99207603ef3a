package servicebench

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/internal/cputime"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
)

// jsonBody turns a line-based request (see serve) into the JSON body a
// client of the JSON service would send.
func jsonBody(tb testing.TB, req string) []byte {
	head, body, _ := strings.Cut(req, "\n")
	o, err := parseHead(nil, head)
	if err != nil {
		tb.Fatal(err)
	}
	var r jsonRequest
	for _, p := range o.params {
		switch p.key {
		case "user":
			r.User = p.value
		case "coupon":
			r.Coupon = p.value
		case "currency":
			r.Currency = p.value
		case "region":
			r.Region = p.value
		}
	}
	for line := range strings.SplitSeq(body, "\n") {
		it, err := parseItem(nil, line)
		if err != nil {
			tb.Fatal(err)
		}
		r.Items = append(r.Items, jsonItem{SKU: it.sku, Qty: it.qty, Price: it.price, Tags: it.tags})
	}
	out, err := json.Marshal(r)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func jsonBodies(tb testing.TB, n int) [][]byte {
	var out [][]byte
	for _, r := range requests(n) {
		out = append(out, jsonBody(tb, r))
	}
	return out
}

func TestJSONArenaAndHeapAgree(t *testing.T) {
	heap := &handler{}
	ar := &handler{pool: arena.NewPool()}
	for i, body := range jsonBodies(t, 8) {
		var hw, aw bytes.Buffer
		herr := heap.serveJSON(&hw, bytes.NewReader(body))
		aerr := ar.serveJSON(&aw, bytes.NewReader(body))
		if herr != nil || aerr != nil || hw.String() != aw.String() {
			t.Fatalf("request %d: heap (%d B, %v), arena (%d B, %v) differ", i, hw.Len(), herr, aw.Len(), aerr)
		}
		if hw.Len() < 10000 {
			t.Fatalf("request %d: response of %d bytes, want a realistic size", i, hw.Len())
		}
	}
	for _, bad := range []string{"", "{", `{"items":[]}`, `{"items":[{"qty":"x"}]}`} {
		if err := ar.serveJSON(io.Discard, strings.NewReader(bad)); err == nil {
			t.Errorf("serveJSON(%q): no error", bad)
		}
	}
}

// BenchmarkJSONService runs a JSON service's handler (encoding/json in
// and out; see serveJSON) on the heap and on an arena.Pool, each at what a
// service runs with: the heap at Go's default runtime.MemProfileRate, the
// arenas with the arena profiler off at its default mean (the Go heap
// sampled at Go's default too). Most of such a request's heap is
// encoding/json's, which no arena takes:
//
//   - path=handler: the handler called directly, from GOMAXPROCS
//     goroutines;
//   - path=http: through a real net/http server on 127.0.0.1, from
//     GOMAXPROCS keep-alive clients in the same process (their CPU and
//     heap count too: read the ratio as a lower bound of the gain).
//
// Metrics as BenchmarkService's.
//
//	go test -run '^$' -bench JSONService -benchtime=1s -count=10 ./internal/testkit/servicebench
func BenchmarkJSONService(b *testing.B) {
	bodies := jsonBodies(b, 64)
	for _, path := range []string{"handler", "http"} {
		for _, impl := range []string{"heap", "arena"} {
			b.Run("path="+path+"/impl="+impl, func(b *testing.B) {
				h := &handler{}
				if impl == "arena" {
					h.pool = arena.NewPool()
					setMean(b, samplingstate.DefaultMeanBytes)
					startProfiler(b)
				}
				if path == "handler" {
					benchJSONHandler(b, h, bodies)
				} else {
					benchJSONHTTP(b, h, bodies)
				}
			})
		}
	}
}

func benchJSONHandler(b *testing.B, h *handler, bodies [][]byte) {
	for _, body := range bodies { // warm the pool and the caches
		if err := h.serveJSON(io.Discard, bytes.NewReader(body)); err != nil {
			b.Fatal(err)
		}
	}
	measure(b, func(pb *testing.PB, next func() []byte) {
		var r bytes.Reader
		for pb.Next() {
			r.Reset(next())
			if err := h.serveJSON(io.Discard, &r); err != nil {
				panic(err)
			}
		}
	}, bodies)
}

func benchJSONHTTP(b *testing.B, h *handler, bodies [][]byte) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if err := h.serveJSON(w, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	}))
	b.Cleanup(srv.Close)
	tr := &http.Transport{MaxIdleConnsPerHost: runtime.GOMAXPROCS(0)}
	b.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	post := func(body []byte) error {
		resp, err := client.Post(srv.URL, "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode != http.StatusOK {
			err = errBadRequest
		}
		return err
	}
	for _, body := range bodies {
		if err := post(body); err != nil {
			b.Fatal(err)
		}
	}
	measure(b, func(pb *testing.PB, next func() []byte) {
		for pb.Next() {
			if err := post(next()); err != nil {
				panic(err)
			}
		}
	}, bodies)
}

// measure runs loop from GOMAXPROCS goroutines and reports CPU per
// request and GC cycles per 1000 requests beside ns/op and B/op.
func measure(b *testing.B, loop func(pb *testing.PB, next func() []byte), bodies [][]byte) {
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cputime.Process()
	b.ReportAllocs()
	b.ResetTimer()
	var i atomic.Uint64
	next := func() []byte { return bodies[i.Add(1)%uint64(len(bodies))] }
	b.RunParallel(func(pb *testing.PB) { loop(pb, next) })
	b.StopTimer()
	cpu := cputime.Process() - cpu0
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(m1.NumGC-m0.NumGC)*1000/float64(b.N), "gc/1000req")
}
