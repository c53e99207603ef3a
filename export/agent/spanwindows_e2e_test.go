package agent_test

import (
	"context"
	"fmt"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export/agent"
	"github.com/arenaprof/arenaprof/hooks"
)

// Span windows of the end-to-end test: requests with span IDs of their
// own in each of several upload intervals.
const (
	windowCount    = 5
	windowRequests = 4  // per window
	windowObjects  = 10 // per request, each sampled (mean 1)
)

// testSpanWindowsEndToEnd runs the agent's arena source for several upload
// intervals, each with requests of new span IDs (the labels a tracing
// integration puts on an arena's context, under a usage function), every
// allocation sampled: each span ID is in exactly one upload, with all its
// samples, none in a later one (its buckets folded once uploaded), the
// profiler holds no span bucket at the end, and the server stores every
// sample under the span name.
func testSpanWindowsEndToEnd(t *testing.T, base string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	old := hooks.MeanBytes()
	if err := hooks.SetMeanBytes(1); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hooks.SetMeanBytes(old) }()
	p, app := e2eProfiler(t, "spans")
	rec := newRecorder(t, base)
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
	pool := arena.NewPool()
	for w := range windowCount {
		for i := range windowRequests {
			rctx := pprof.WithLabels(context.Background(), pprof.Labels("span_id", fmt.Sprintf("%08x%08x", w, i), "span_name", "GET /e2e"))
			rctx = arena.ContextWithUsage(rctx, func(int64, int64) {})
			ar := pool.Get(rctx)
			for range windowObjects {
				arena.New[e2eSmall](ar)
			}
			pool.Put(ar)
		}
		time.Sleep(1200 * time.Millisecond) // into the next interval
	}
	sctx, scancel := context.WithTimeout(ctx, 15*time.Second)
	err = a.Stop(sctx)
	scancel()
	if err != nil {
		t.Fatal(err)
	}
	if st := a.Stats(); st.Failed != 0 || st.Dropped != 0 || st.Uploaded != st.Collected {
		t.Fatalf("agent stats %+v: every profile must be uploaded", st)
	}
	// What the agent sent, as the server accepted it.
	seen := map[string]int{}      // span ID: uploads carrying it
	samples := map[string]int64{} // span ID: its samples over them
	var named int64
	for _, pr := range rec.profiles(t, "arena") {
		ids := map[string]bool{}
		for _, s := range pr.Sample {
			if len(s.Label["span_name"]) > 0 {
				named += s.Value[4]
			}
			if id := s.Label["span_id"]; len(id) > 0 && s.Value[4] > 0 {
				ids[id[0]] = true
				samples[id[0]] += s.Value[4]
			}
		}
		for id := range ids {
			seen[id]++
		}
	}
	if len(seen) != windowCount*windowRequests {
		t.Errorf("%d span IDs uploaded, want %d", len(seen), windowCount*windowRequests)
	}
	for id, n := range seen {
		if n != 1 || samples[id] != windowObjects {
			t.Errorf("span %s: in %d uploads with %d samples, want 1 upload with %d", id, n, samples[id], windowObjects)
		}
	}
	if want := int64(windowCount * windowRequests * windowObjects); named != want {
		t.Errorf("%d samples under a span name uploaded, want %d", named, want)
	}
	if st := p.Stats(); st.SpanBuckets != 0 || st.SpanIDsDropped != 0 {
		t.Errorf("profiler stats %+v: want no span bucket left and none dropped", st)
	}
	until := time.Now().Add(time.Minute)
	id := arenaTypeIDs("memory")["alloc_samples"]
	waitUntil(ctx, t, "the server stores every sample under the span name", func() error {
		got, err := renderTotal(ctx, base, id, selector(app, "memory", "arena", "span_name", "GET /e2e"), begin, until)
		if err == nil && got != named {
			err = fmt.Errorf("stored %d, pushed %d", got, named)
		}
		return err
	})
	t.Logf("spans: %d span IDs in %d uploads, each in one with its %d samples; the server stores the %d samples under span_name",
		len(seen), len(rec.profiles(t, "arena")), windowObjects, named)
}
