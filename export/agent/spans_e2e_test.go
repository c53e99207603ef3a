package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export/agent"
	"github.com/arenaprof/arenaprof/internal/estimate"
)

// The span workload: requests of two span names, each taking an arena
// from a pool under a context that carries the pprof labels span_id,
// span_name and trace_id, as the module otelarena sets them (the core module does not
// import it). At the default mean each name gets about 130 and 260
// samples.
const (
	spanRequests = 200   // per span name
	spanSmallN   = 2_000 // spanSmall objects per "GET /small" request: 64 kB
	spanLargeN   = 500   // spanLarge objects per "GET /large" request: 128 kB
)

// spanConfidence is the confidence of the spans parts' interval checks:
// two per part, three parts per run (pprof, OTLP through the Collector and
// directly), so a false failure has probability below 6e-8.
const spanConfidence = 1 - 1e-8

type (
	spanSmall struct{ a [4]uint64 }  // 32 bytes
	spanLarge struct{ a [32]uint64 } // 256 bytes
)

// testSpansEndToEnd runs the agent with the profiler source, uploading
// through up (wrapped to record what it sent) to the Pyroscope server at
// base, on the span workload, and checks what the server keeps of the
// spans:
//
//   - span_name is a series label with the two names;
//   - span_id is kept per sample, not as a series label, and trace_id is
//     no series label either (a series per request would be unbounded): the server's span profile query
//     (SelectMergeSpanProfile) of the span IDs of one name gives the bytes
//     pushed under those IDs, that of one span the bytes of that span, and
//     that of an ID never sent nothing;
//   - arenaprof top -pyroscope -by label=span_name gives, per name, the
//     server's sums and the interval from them, which holds the true
//     bytes.
//
// typeName is the name of the server's arena profile types ("memory" for
// pprof uploads, "space" for OTLP ones).
func testSpansEndToEnd(t *testing.T, cli, base string, up agent.Uploader, typeName string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	t.Cleanup(func() {
		if c, ok := up.(io.Closer); ok {
			c.Close()
		}
	})
	p, app := e2eProfiler(t, "spans")
	rec := &recorder{py: up}
	begin := time.Now().Add(-time.Second)
	a, err := agent.Start(agent.Config{
		AppName:   app,
		Interval:  time.Second,
		Sources:   []agent.Source{agent.ProfilerSource(p)},
		Uploaders: []agent.Uploader{rec.uploader()},
		QueueSize: 100,
	})
	if err != nil {
		t.Fatal(err)
	}
	truth := spanWorkload()
	sctx, scancel := context.WithTimeout(ctx, 15*time.Second)
	err = a.Stop(sctx)
	scancel()
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Minute)
	st := a.Stats()
	if st.Failed != 0 || st.Dropped != 0 || st.CollectErrors != 0 || st.Uploaded != st.Collected {
		t.Fatalf("agent stats %+v: every profile must be uploaded", st)
	}
	if ps := p.Stats(); ps.SpanIDsDropped != 0 {
		t.Fatalf("profiler stats %+v: no span ID may be dropped", ps)
	}

	// What was pushed: alloc_space by span ID, and the IDs of each name.
	pushedBySpan := map[string]int64{}
	idsByName := map[string][]string{}
	for _, pr := range rec.profiles(t, "arena") {
		space := slices.IndexFunc(pr.SampleType, func(st *profile.ValueType) bool { return st.Type == "alloc_space" })
		if space < 0 {
			t.Fatal("an arena profile without alloc_space")
		}
		for _, s := range pr.Sample {
			names, ids, traces := s.Label["span_name"], s.Label["span_id"], s.Label["trace_id"]
			if len(names) != 1 || len(ids) != 1 || len(traces) != 1 {
				t.Fatalf("a sample with span_name %q, span_id %q and trace_id %q: every sample of the workload carries one of each", names, ids, traces)
			}
			if _, ok := pushedBySpan[ids[0]]; !ok {
				idsByName[names[0]] = append(idsByName[names[0]], ids[0])
			}
			pushedBySpan[ids[0]] += s.Value[space]
		}
	}
	if len(idsByName) != 2 {
		t.Fatalf("samples under the span names %v, want 2", mapKeys(idsByName))
	}
	spaceID := arenaTypeIDs(typeName)["alloc_space"]
	sel := selector(app, "memory", "arena")

	waitUntil(ctx, t, "span_name label values", func() error {
		names, err := labelValues(ctx, base, "span_name", sel, begin, until)
		if err == nil && !slices.Equal(names, mapKeys(truth)) {
			err = fmt.Errorf("span_name label values %q, want %q", names, mapKeys(truth))
		}
		return err
	})
	if ids, err := labelValues(ctx, base, "span_id", sel, begin, until); err != nil || len(ids) != 0 {
		t.Errorf("span_id as a series label: values %d (%v), want none", len(ids), err)
	}
	if ids, err := labelValues(ctx, base, "trace_id", sel, begin, until); err != nil || len(ids) != 0 {
		t.Errorf("trace_id as a series label: values %d (%v), want none", len(ids), err)
	}
	sum := func(ids []string) int64 {
		var n int64
		for _, id := range ids {
			n += pushedBySpan[id]
		}
		return n
	}
	for _, name := range mapKeys(idsByName) {
		ids := idsByName[name]
		checks := []struct {
			what string
			ids  []string
			want int64
		}{
			{fmt.Sprintf("the %d spans of %s", len(ids), name), ids, sum(ids)},
			{"span " + ids[0] + " of " + name, ids[:1], pushedBySpan[ids[0]]},
		}
		for _, c := range checks {
			waitUntil(ctx, t, "span profile of "+c.what, func() error {
				got, err := spanProfileTotal(ctx, base, spaceID, sel, c.ids, begin, until)
				if err == nil && got != c.want {
					err = fmt.Errorf("alloc_space %d, pushed %d", got, c.want)
				}
				return err
			})
		}
		t.Logf("%s: %d spans sampled; their span profile holds the %d bytes pushed under them", name, len(ids), sum(ids))
	}
	if got, err := spanProfileTotal(ctx, base, spaceID, sel, []string{"0123456789abcdef"}, begin, until); err != nil || got != 0 {
		t.Errorf("span profile of a span never sent: %d (%v), want 0", got, err)
	}

	// arenaprof top -by label=span_name reads the server's sums per name.
	mean := uploadedMean(t, rec)
	stored := map[string]map[string]int64{}
	for _, name := range mapKeys(truth) {
		stored[name] = map[string]int64{}
		for _, st := range []string{"alloc_space", "alloc_samples", "alloc_tail"} {
			q := selector(app, "memory", "arena", "span_name", name)
			v, err := renderTotal(ctx, base, arenaTypeIDs(typeName)[st], q, begin, until)
			if err != nil {
				t.Fatal(err)
			}
			stored[name][st] = v
		}
	}
	var res struct{ Rows []topRow }
	out := runCLI(t, cli, "top", "-pyroscope", base, "-from", begin.Format(time.RFC3339Nano), "-to", until.Format(time.RFC3339Nano),
		"-by", "label=span_name", "-confidence", fmt.Sprint(spanConfidence), "-json", sel)
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("top -by label=span_name -json: %v: %s", err, out)
	}
	rows := map[string]topRow{}
	for _, r := range res.Rows {
		rows[r.Key] = r
	}
	if len(rows) != len(truth) {
		t.Errorf("top -by label=span_name: rows %v, want %v", mapKeys(rows), mapKeys(truth))
	}
	for _, name := range mapKeys(truth) {
		r, st := rows[name], stored[name]
		iv, err := estimate.SingleMeanInterval(st["alloc_samples"], st["alloc_tail"], mean, spanConfidence, estimate.WindowBoth)
		if err != nil {
			t.Fatal(err)
		}
		if r.Samples != st["alloc_samples"] || r.Bytes != st["alloc_space"] || r.Bytes != sum(idsByName[name]) {
			t.Errorf("%s: top read %d sample events and %d bytes; the server stores %d and %d; pushed %d bytes", name, r.Samples, r.Bytes, st["alloc_samples"], st["alloc_space"], sum(idsByName[name]))
		}
		if math.Abs(r.Lo-iv.Lo) > 1e-6*iv.Hi || math.Abs(r.Hi-iv.Hi) > 1e-6*iv.Hi {
			t.Errorf("%s: top interval [%.0f, %.0f], from the server's sums [%.0f, %.0f]", name, r.Lo, r.Hi, iv.Lo, iv.Hi)
		}
		if tr := float64(truth[name]); tr < r.Lo || tr > r.Hi {
			t.Errorf("%s: true bytes %d outside the interval [%.0f, %.0f] of top", name, truth[name], r.Lo, r.Hi)
		}
		t.Logf("%s: top -by label=span_name: true %d, estimate %d, interval (%g) [%.0f, %.0f], %d samples", name, truth[name], r.Bytes, spanConfidence, r.Lo, r.Hi, r.Samples)
	}
	t.Logf("arenaprof top -pyroscope -by label=span_name '%s':\n%s", sel,
		runCLI(t, cli, "top", "-pyroscope", base, "-from", begin.Format(time.RFC3339), "-to", until.Format(time.RFC3339), "-by", "label=span_name", sel))
}

// spanWorkload runs the span workload over about 2.5 s (several upload
// intervals) and returns the true bytes of each span name.
func spanWorkload() map[string]int64 {
	pool := arena.NewPool(arena.WithSeed(7, 8))
	ids := rand.New(rand.NewPCG(9, 10))
	const rounds = 5
	for range rounds {
		for range spanRequests / rounds {
			for _, name := range []string{"GET /small", "GET /large"} {
				id := fmt.Sprintf("%016x", ids.Uint64()|1) // never the invalid all-zero ID
				trace := fmt.Sprintf("%016x%016x", ids.Uint64(), ids.Uint64()|1)
				ctx := pprof.WithLabels(context.Background(), pprof.Labels("span_id", id, "span_name", name, "trace_id", trace))
				a := pool.Get(ctx)
				if name == "GET /small" {
					for range spanSmallN {
						arena.New[spanSmall](a)
					}
				} else {
					for range spanLargeN {
						arena.New[spanLarge](a)
					}
				}
				pool.Put(a)
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	return map[string]int64{"GET /small": spanRequests * spanSmallN * 32, "GET /large": spanRequests * spanLargeN * 256}
}

// spanProfileTotal returns the total of a profile type over the samples of
// the given span IDs in the series matching sel, from the server's span
// profile query (querier.v1.QuerierService/SelectMergeSpanProfile), which
// reads the span ID each sample is stored with.
func spanProfileTotal(ctx context.Context, base, id, sel string, spans []string, from, until time.Time) (int64, error) {
	req, _ := json.Marshal(map[string]any{
		"profileTypeID": id, "labelSelector": sel, "spanSelector": spans,
		"start": from.UnixMilli(), "end": until.UnixMilli(),
	})
	var resp struct {
		Flamegraph struct {
			Total json.RawMessage `json:"total"` // an int64: a JSON string
		} `json:"flamegraph"`
	}
	if err := post(ctx, base+"/querier.v1.QuerierService/SelectMergeSpanProfile", string(req), &resp); err != nil {
		return 0, err
	}
	s := strings.Trim(string(resp.Flamegraph.Total), `"`)
	if s == "" {
		return 0, nil
	}
	return strconv.ParseInt(s, 10, 64)
}
