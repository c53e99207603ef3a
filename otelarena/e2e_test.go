package otelarena

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export/agent"
	"github.com/arenaprof/arenaprof/profiler"
)

// Profile type IDs of Grafana's traces-to-profiles: the CPU profile
// pyroscope-go and the agent's cpu source upload, and the arena memory
// profile (bytes allocated).
const (
	cpuTypeID   = "process_cpu:cpu:nanoseconds:cpu:nanoseconds"
	arenaTypeID = "memory:alloc_space:bytes:space:bytes"
)

// e2eRoutes are the end-to-end workload's routes; each request computes
// about 40 ms under its span and allocates 256 KiB in its arena.
var e2eRoutes = []string{"GET /a", "GET /b"}

const e2eRequests = 16 // per route

// TestSpanProfilesEndToEnd serves requests through otelhttp with the real
// SDK and the wrapped provider while the agent uploads CPU and arena
// profiles to a real Pyroscope server, and reads the span profiles back as
// Grafana's traces-to-profiles does (SelectMergeSpanProfile):
//
//   - cpu: the CPU span profile of the spans of one route, and of one span,
//     holds exactly the CPU time pushed under those span IDs, which is
//     every CPU sample pushed in the handler's computation (the goroutine
//     labels); span_name is a series label, span_id not;
//   - memory: the same for arena memory (alloc_space) under
//     memory="arena", with the Go heap and the peak uploaded beside it
//     under the same profile type (memory="heap", memory="peak"): the
//     heap's samples carry no span, the peak's do (its alloc values
//     count since the profiler started), hence the selector;
//   - trace_id: the handler computes again after its span ended, under a
//     trace_id label of its own (pprof.Do): no series of any profile type
//     carries trace_id, and those samples carry no span_id.
//
// It runs with ARENAPROF_E2E=1 against the server at
// ARENAPROF_PYROSCOPE_URL (.ci/run runs it against v1.19.3 and v2.2.1):
//
//	ARENAPROF_E2E=1 ARENAPROF_PYROSCOPE_URL=http://127.0.0.1:4040 go test -count=1 -run SpanProfilesEndToEnd -v .
func TestSpanProfilesEndToEnd(t *testing.T) {
	base := os.Getenv("ARENAPROF_PYROSCOPE_URL")
	if os.Getenv("ARENAPROF_E2E") != "1" || base == "" {
		t.Skip("an end-to-end test against a real Pyroscope server: set ARENAPROF_E2E=1 and ARENAPROF_PYROSCOPE_URL (.ci/run does)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	app := fmt.Sprintf("otelarena_e2e_%d", time.Now().UnixNano())
	prof, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer prof.Stop()
	py, err := agent.NewPyroscope(agent.PyroscopeConfig{URL: base})
	if err != nil {
		t.Fatal(err)
	}
	rec := &pushed{up: py}
	begin := time.Now().Add(-time.Second)
	a, err := agent.Start(agent.Config{
		AppName:   app,
		Interval:  time.Second,
		Sources:   []agent.Source{agent.ProfilerSource(prof), agent.CPUSource(), agent.HeapSource(), agent.PeakSource(prof)},
		Uploaders: []agent.Uploader{rec},
		QueueSize: 100,
	})
	if err != nil {
		t.Fatal(err)
	}
	serveE2E()
	sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
	err = a.Stop(sctx)
	scancel()
	if err != nil {
		t.Fatal(err)
	}
	if st := a.Stats(); st.Failed != 0 || st.Dropped != 0 || st.CollectErrors != 0 || st.Uploaded != st.Collected {
		t.Fatalf("agent stats %+v: every profile must be uploaded", st)
	}
	until := time.Now().Add(time.Minute)

	cpu := rec.bySpan(t, "cpu", "cpu")
	mem := rec.bySpan(t, "arena", "alloc_space")
	for _, c := range []struct {
		name, typeID, sel string
		pushed            spanSums
	}{
		{"cpu", cpuTypeID, sel(app), cpu},
		{"memory", arenaTypeID, sel(app, "memory", "arena"), mem},
	} {
		t.Run(c.name, func(t *testing.T) {
			waitUntil(ctx, t, "span_name label values", func() error {
				names, err := labelValues(ctx, base, "span_name", c.sel, begin, until)
				if err == nil && !slices.Equal(names, e2eRoutes) {
					err = fmt.Errorf("span_name values %q, want %q", names, e2eRoutes)
				}
				return err
			})
			if ids, err := labelValues(ctx, base, "span_id", c.sel, begin, until); err != nil || len(ids) != 0 {
				t.Errorf("span_id as a series label: %d values (%v), want none", len(ids), err)
			}
			for _, route := range e2eRoutes {
				ids := c.pushed.idsOf(route)
				if len(ids) == 0 {
					t.Fatalf("no %s sample pushed under a span of %s", c.name, route)
				}
				for _, q := range []struct {
					what string
					ids  []string
				}{
					{fmt.Sprintf("the %d spans of %s", len(ids), route), ids},
					{"span " + ids[0] + " of " + route, ids[:1]},
				} {
					want := c.pushed.sum(q.ids)
					var got int64
					waitUntil(ctx, t, c.name+" span profile of "+q.what, func() error {
						var err error
						got, err = spanProfileTotal(ctx, base, c.typeID, c.sel, q.ids, begin, until)
						if err == nil && got != want {
							err = fmt.Errorf("%d, pushed %d", got, want)
						}
						return err
					})
					t.Logf("%s span profile (%s) of %s: %d, pushed %d", c.name, c.typeID, q.what, got, want)
				}
			}
			if c.name == "memory" {
				ids := append(c.pushed.idsOf(e2eRoutes[0]), c.pushed.idsOf(e2eRoutes[1])...)
				all, err := spanProfileTotal(ctx, base, c.typeID, sel(app), ids, begin, until)
				t.Logf("memory span profile of every span under %s, without memory=\"arena\": %d (%v), under it %d", sel(app), all, err, c.pushed.sum(ids))
			}
			if got, err := spanProfileTotal(ctx, base, c.typeID, c.sel, []string{"0123456789abcdef"}, begin, until); err != nil || got != 0 {
				t.Errorf("span profile of a span never sent: %d (%v), want 0", got, err)
			}
		})
	}
	t.Run("trace_id", func(t *testing.T) {
		for _, s := range []string{sel(app), sel(app, "memory", "arena")} {
			if ids, err := labelValues(ctx, base, "trace_id", s, begin, until); err != nil || len(ids) != 0 {
				t.Errorf("%s: trace_id as a series label: %d values (%v), want none", s, len(ids), err)
			}
		}
		if cpu.afterEnd == 0 || cpu.afterEndWithSpan != 0 || cpu.afterEndTraced != cpu.afterEnd {
			t.Errorf("after End: %d CPU samples pushed, %d with a span_id, %d with trace_id; want some, none, all", cpu.afterEnd, cpu.afterEndWithSpan, cpu.afterEndTraced)
		}
		t.Logf("CPU samples in the handler's computation under its span: %d of %d carry the span's ID; after End: %d of %d carry a span ID", cpu.underRight, cpu.under, cpu.afterEndWithSpan, cpu.afterEnd)
		if cpu.under == 0 || cpu.underRight != cpu.under {
			t.Errorf("under spans: %d of %d CPU samples carry their span's ID, want all", cpu.underRight, cpu.under)
		}
	})
}

// serveE2E serves the workload's requests through otelhttp, with the real
// SDK wrapped, one goroutine per request as net/http does, in 4 rounds
// half a second apart (several upload intervals).
func serveE2E() {
	sdk := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	defer func() { _ = sdk.Shutdown(context.Background()) }()
	tp := NewTracerProvider(sdk)
	pool := arena.NewPool(arena.WithSeed(61, 62))
	// One otelhttp handler per route, mounted on the mux: the mux sets the
	// request's pattern before otelhttp starts the span, which otelhttp
	// then names after it ("GET /a"), so that span_name is the route.
	mux := http.NewServeMux()
	for _, route := range e2eRoutes {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a := pool.Get(r.Context())
			for range 64 {
				arena.MakeSlice[byte](a, 4096, 4096)
			}
			burnUnderSpan(40 * time.Millisecond)
			pool.Put(a)
		})
		mux.Handle(route, otelhttp.NewHandler(h, route, otelhttp.WithTracerProvider(tp)))
	}
	const rounds = 4
	for i := range rounds {
		for range e2eRequests / rounds {
			for _, route := range e2eRoutes {
				var wg sync.WaitGroup
				wg.Go(func() {
					mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", strings.Fields(route)[1], nil))
					// After End: the handler's goroutine computes
					// under a trace_id of its own.
					pprof.Do(context.Background(), pprof.Labels("trace_id", fmt.Sprintf("%032x", i+1)), func(context.Context) {
						burnAfterEnd(10 * time.Millisecond)
					})
				})
				wg.Wait()
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// pushed uploads to Pyroscope and records what the server accepted.
type pushed struct {
	up agent.Uploader
	mu sync.Mutex
	ok []*agent.Upload
}

func (p *pushed) String() string { return "pyroscope" }

func (p *pushed) Upload(ctx context.Context, u *agent.Upload) error {
	if err := p.up.Upload(ctx, u); err != nil {
		return err
	}
	p.mu.Lock()
	p.ok = append(p.ok, u)
	p.mu.Unlock()
	return nil
}

// spanSums is what was pushed of one sample type, by span: each span ID's
// total and route, and the counts of CPU samples in the handler's
// computation.
type spanSums struct {
	total map[string]int64  // by span_id
	route map[string]string // span_id -> span_name
	order []string          // span IDs in the order first seen

	under, underRight                          int // samples in burnUnderSpan; with one span_id
	afterEnd, afterEndWithSpan, afterEndTraced int // samples in burnAfterEnd; with span_id; with trace_id
}

// bySpan sums sample type st of the uploads of the source named source by
// span.
func (p *pushed) bySpan(t *testing.T, source, st string) spanSums {
	t.Helper()
	s := spanSums{total: map[string]int64{}, route: map[string]string{}}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, u := range p.ok {
		if u.Profile != source {
			continue
		}
		pr, err := profile.ParseData(u.Data)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(pr.SampleType, func(v *profile.ValueType) bool { return v.Type == st })
		if i < 0 {
			t.Fatalf("%s upload without %s: %v", source, st, pr.SampleType)
		}
		for _, smp := range pr.Sample {
			ids := smp.Label[labelSpanID]
			switch {
			case inFunc(smp, "burnUnderSpan"):
				s.under++
				if len(ids) == 1 {
					s.underRight++
				}
			case inFunc(smp, "burnAfterEnd"):
				s.afterEnd++
				if len(ids) > 0 {
					s.afterEndWithSpan++
				}
				if len(smp.Label[labelTraceID]) > 0 {
					s.afterEndTraced++
				}
			}
			if len(ids) != 1 {
				continue
			}
			if _, ok := s.route[ids[0]]; !ok {
				s.order = append(s.order, ids[0])
				s.route[ids[0]] = strings.Join(smp.Label[labelSpanName], ",")
			}
			s.total[ids[0]] += smp.Value[i]
		}
	}
	return s
}

func (s spanSums) idsOf(route string) []string {
	var ids []string
	for _, id := range s.order {
		if s.route[id] == route {
			ids = append(ids, id)
		}
	}
	return ids
}

func (s spanSums) sum(ids []string) int64 {
	var n int64
	for _, id := range ids {
		n += s.total[id]
	}
	return n
}

// sel is the label selector of the series of app with the labels kv.
func sel(app string, kv ...string) string {
	parts := []string{fmt.Sprintf("service_name=%q", app)}
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, fmt.Sprintf("%s=%q", kv[i], kv[i+1]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// waitUntil calls check until it returns nil, failing the test with its
// last error when ctx ends.
func waitUntil(ctx context.Context, t *testing.T, what string, check func() error) {
	t.Helper()
	for {
		err := check()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// spanProfileTotal returns the total of profile type id over the samples
// of the given span IDs in the series matching sel, from the server's span
// profile query, the one Grafana's traces-to-profiles makes.
func spanProfileTotal(ctx context.Context, base, id, sel string, spans []string, from, until time.Time) (int64, error) {
	var resp struct {
		Flamegraph struct {
			Total json.RawMessage `json:"total"` // an int64: a JSON string
		} `json:"flamegraph"`
	}
	err := post(ctx, base+"/querier.v1.QuerierService/SelectMergeSpanProfile", map[string]any{
		"profileTypeID": id, "labelSelector": sel, "spanSelector": spans,
		"start": from.UnixMilli(), "end": until.UnixMilli(),
	}, &resp)
	if err != nil {
		return 0, err
	}
	s := strings.Trim(string(resp.Flamegraph.Total), `"`)
	if s == "" {
		return 0, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// labelValues returns the values of the series label name over the series
// matching sel.
func labelValues(ctx context.Context, base, name, sel string, from, until time.Time) ([]string, error) {
	var resp struct {
		Names []string `json:"names"`
	}
	err := post(ctx, base+"/querier.v1.QuerierService/LabelValues", map[string]any{
		"name": name, "matchers": []string{sel}, "start": from.UnixMilli(), "end": until.UnixMilli(),
	}, &resp)
	return resp.Names, err
}

// post sends body as JSON to the Connect endpoint u and decodes the answer
// into v.
func post(ctx context.Context, u string, body, v any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(string(b)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", u, resp.Status, out)
	}
	return json.Unmarshal(out, v)
}
