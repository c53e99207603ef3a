package otelarena

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/arenaprof/arenaprof/arena"
)

// order is the JSON request of BenchmarkRequestLoopback: a small order.
type order struct {
	User  string `json:"user"`
	Items []struct {
		SKU   string `json:"sku"`
		Qty   int64  `json:"qty"`
		Price int64  `json:"price"`
	} `json:"items"`
}

// line is an order line as the handler keeps it, in its arena.
type line struct {
	sku        string
	qty, price int64
	next       *line
}

// orderHandler is BenchmarkRequestLoopback's handler: it reads the JSON
// body into an arena taken under the request's context, decodes it, keeps
// its lines in the arena and answers with their total as JSON.
func orderHandler() http.Handler {
	pool := arena.NewPool()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := pool.Get(r.Context())
		defer pool.Put(a)
		body, err := arena.ReadAll(a, r.Body, 1<<16)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var o order
		if err := json.Unmarshal(body, &o); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var head *line
		for _, it := range o.Items {
			l := arena.New[line](a)
			l.sku, l.qty, l.price, l.next = arena.String(a, it.SKU), it.Qty, it.Price, head
			head = l
		}
		var total, n int64
		for l := head; l != nil; l = l.next {
			total += l.qty * l.price
			n++
		}
		out := arena.MakeSlice[byte](a, 0, 128)
		out = append(out, `{"user":`...)
		out = strconv.AppendQuote(out, o.User)
		out = append(out, `,"lines":`...)
		out = strconv.AppendInt(out, n, 10)
		out = append(out, `,"total":`...)
		out = strconv.AppendInt(out, total, 10)
		out = append(out, "}\n"...)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
}

// orderBody is a request of BenchmarkRequestLoopback: 8 lines, about 400
// bytes.
func orderBody(i int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"user":"user-%d","items":[`, i)
	for j := range 8 {
		if j > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"sku":"sku-%05d","qty":%d,"price":%d}`, i*8+j, 1+j%3, 100+37*j)
	}
	b.WriteString("]}")
	return b.Bytes()
}

// BenchmarkRequestLoopback measures requests per second over real
// loopback HTTP connections: two net/http servers under otelhttp with the
// real SDK recording every span (no exporter), one with the SDK's tracer
// provider and one with it wrapped by NewTracerProvider, serving the same
// small JSON request (orderHandler). Clients on 2*GOMAXPROCS goroutines,
// each with a kept-alive connection, send blocks of requests to each
// server in turn, each first every other round (paired, interleaved
// rounds: load that drifts falls on both alike). share-% is arenaprof's
// share of the requests per second lost, 100*(1 - sdk's time/wrapped
// time) over all blocks; median-share-% the median of the pairs' shares,
// which a burst of load on one block moves less. Run with -count 10:
//
//	go test -run '^$' -bench RequestLoopback -count 10 ./otelarena
func BenchmarkRequestLoopback(b *testing.B) {
	sdk := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	b.Cleanup(func() { _ = sdk.Shutdown(context.Background()) })
	var urls [2]string
	for i, tp := range []trace.TracerProvider{sdk, NewTracerProvider(sdk)} {
		srv := httptest.NewServer(otelhttp.NewHandler(orderHandler(), "POST /orders", otelhttp.WithTracerProvider(tp)))
		b.Cleanup(srv.Close)
		urls[i] = srv.URL + "/orders"
	}
	clients := runtime.GOMAXPROCS(0) * 2
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	b.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	bodies := make([][]byte, 64)
	for i := range bodies {
		bodies[i] = orderBody(i)
	}
	post := func(url string, body []byte) {
		resp, err := client.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			panic(err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			panic(fmt.Sprint("status ", resp.StatusCode, err))
		}
	}
	// run sends n requests to url from the clients at once and returns
	// the time they took.
	run := func(url string, n int) time.Duration {
		var wg sync.WaitGroup
		t0 := time.Now()
		for c := range clients {
			wg.Go(func() {
				for k := c; k < n; k += clients {
					post(url, bodies[k%len(bodies)])
				}
			})
		}
		wg.Wait()
		return time.Since(t0)
	}
	for _, u := range urls { // warm both: connections, pools
		run(u, 256)
	}
	const block = 256
	var took [2]time.Duration
	var shares []float64 // of each pair of blocks
	b.ResetTimer()
	for n := 0; n < b.N; n += block {
		var pair [2]time.Duration
		for k := range 2 {
			i := k ^ (n / block & 1)
			pair[i] = run(urls[i], block)
			took[i] += pair[i]
		}
		shares = append(shares, 100*(1-pair[0].Seconds()/pair[1].Seconds()))
	}
	b.StopTimer()
	slices.Sort(shares)
	b.ReportMetric(shares[len(shares)/2], "median-share-%")
	reqs := float64((b.N + block - 1) / block * block)
	b.ReportMetric(reqs/took[0].Seconds(), "sdk-req/s")
	b.ReportMetric(reqs/took[1].Seconds(), "otelarena-req/s")
	b.ReportMetric(100*(1-took[0].Seconds()/took[1].Seconds()), "share-%")
}
