// Command httpspan is a net/http service under otelhttp whose handlers
// take an arena per request under the request's span: its tracer provider
// is wrapped by otelarena, so every server span gets the exact bytes its
// request took (arena.allocated_bytes, arena.allocations), and the
// histogram arena.request.allocated gives their distribution per route.
// It serves a few routes on 127.0.0.1, sends itself requests, and prints
// the bytes per request by route:
//
//	go run ./examples/httpspan
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"text/tabwriter"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/otelarena"
)

func main() {
	if err := run(os.Stdout, 50); err != nil {
		fmt.Fprintln(os.Stderr, "httpspan:", err)
		os.Exit(1)
	}
}

// user is what /users lists.
type user struct {
	ID    int64
	Name  string
	Email string
}

var pool = arena.NewPool()

// users builds n users in the request's arena and writes them as JSON;
// n comes from the query (?n=), 10 by default.
func users(w http.ResponseWriter, r *http.Request) {
	a := pool.Get(r.Context()) // the context carries the span
	defer pool.Put(a)
	n, err := strconv.Atoi(r.URL.Query().Get("n"))
	if err != nil || n < 0 || n > 10000 {
		n = 10
	}
	list := arena.MakeSlice[user](a, 0, n)
	for i := range n {
		name := arena.String(a, "user-"+strconv.Itoa(i))
		list = arena.Append(a, list, user{ID: int64(i), Name: name, Email: arena.String(a, name+"@example.com")})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list)
}

// echo reads the body into the request's arena and writes it back.
func echo(w http.ResponseWriter, r *http.Request) {
	a := pool.Get(r.Context())
	defer pool.Put(a)
	body, err := arena.ReadAll(a, r.Body, 1<<20)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_, _ = w.Write(body)
}

// health takes no arena: its spans get no arena attributes.
func health(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") }

// run serves the routes, sends each of them n requests, and prints the
// bytes per request by route from the histogram.
func run(out io.Writer, n int) error {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(ctx)
	sdk := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	defer sdk.Shutdown(ctx)
	tp := otelarena.NewTracerProvider(sdk, otelarena.WithMeterProvider(mp))

	mux := http.NewServeMux()
	for pattern, h := range map[string]http.HandlerFunc{"GET /users": users, "POST /echo": echo, "GET /health": health} {
		// One otelhttp handler per route, named after it: the span has
		// the route's name from its start (span_name on the samples).
		mux.Handle(pattern, otelhttp.NewHandler(h, pattern, otelhttp.WithTracerProvider(tp)))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	defer srv.Close()

	base := "http://" + ln.Addr().String()
	for i := range n {
		reqs := []func() (*http.Response, error){
			func() (*http.Response, error) { return http.Get(base + "/users?n=" + strconv.Itoa(10*(1+i%10))) },
			func() (*http.Response, error) {
				return http.Post(base+"/echo", "text/plain", io.NopCloser(&repeat{n: 100 * (1 + i%20)}))
			},
			func() (*http.Response, error) { return http.Get(base + "/health") },
		}
		for _, do := range reqs {
			resp, err := do()
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	srv.Close() // handlers done: every span has ended

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "route\trequests\tbytes/request mean\tmin\tmax\t")
	var rows [][]string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "arena.request.allocated" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Histogram[int64]).DataPoints {
				name, _ := dp.Attributes.Value(attribute.Key("span.name"))
				lo, _ := dp.Min.Value()
				hi, _ := dp.Max.Value()
				rows = append(rows, []string{name.AsString(), strconv.FormatUint(dp.Count, 10),
					strconv.FormatInt(dp.Sum/int64(dp.Count), 10), strconv.FormatInt(lo, 10), strconv.FormatInt(hi, 10)})
			}
		}
	}
	slices.SortFunc(rows, func(a, b []string) int { return cmp.Compare(a[0], b[0]) })
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", r[0], r[1], r[2], r[3], r[4])
	}
	return tw.Flush()
}

// repeat reads as n bytes of 'x'.
type repeat struct{ n int }

func (r *repeat) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range k {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}
