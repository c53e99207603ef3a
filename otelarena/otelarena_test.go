package otelarena

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/hooks"
)

//lint:ignore U1000 only the size matters
type obj24 struct{ a, b, c int64 }

type withPtr struct {
	s string
	n int64
}

// setup returns a wrapped provider over the real SDK, with its span
// recorder and metric reader; procs are further span processors.
func setup(t *testing.T, sampler sdktrace.Sampler, procs ...sdktrace.SpanProcessor) (trace.TracerProvider, *tracetest.SpanRecorder, *sdkmetric.ManualReader) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	opts := []sdktrace.TracerProviderOption{sdktrace.WithSpanProcessor(rec), sdktrace.WithSampler(sampler)}
	for _, p := range procs {
		opts = append(opts, sdktrace.WithSpanProcessor(p))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return NewTracerProvider(tp, WithMeterProvider(mp)), rec, reader
}

// work allocates at random in a and returns the exact bytes and
// allocations it took, worked out from the sizes asked for.
func work(rng *rand.Rand, a *arena.Arena) (bytes, allocs int64) {
	for range rng.IntN(200) {
		switch k := rng.IntN(10); {
		case k < 4:
			arena.New[obj24](a)
			bytes += 24
		case k < 6:
			arena.New[withPtr](a)
			bytes += 24
		case k < 8:
			n := rng.IntN(3000) // across chunks, sometimes
			arena.MakeSlice[byte](a, n, n)
			bytes += int64((n + 7) &^ 7)
		case k < 9:
			s := strings.Repeat("y", 1+rng.IntN(40))
			arena.String(a, s)
			bytes += int64((len(s) + 7) &^ 7)
		default:
			n := 2_000 + rng.IntN(20_000) // larger than a chunk
			arena.MakeSlice[int32](a, 0, n)
			bytes += int64((4*n + 7) &^ 7)
		}
		allocs++
	}
	return bytes, allocs
}

// TestExactBytesOnSpans runs 2000 requests, each a local root span of one
// of four names with 0 to 3 arenas taken under it or under a child span,
// some on goroutines of their own, some Reset and used again, and checks
// every ended root span's attributes against the bytes and allocations
// asked for, and the histogram against their sums per span name.
func TestExactBytesOnSpans(t *testing.T) {
	wrapped, rec, reader := setup(t, sdktrace.AlwaysSample())
	tr := wrapped.Tracer("test")
	pool := arena.NewPool(arena.WithChunkSize(4096))
	rng := rand.New(rand.NewPCG(45, 2))
	type truth struct {
		bytes, allocs int64
		arenas        int
		name          string
	}
	want := map[trace.SpanID]*truth{}
	perName := map[string][]int64{}
	const spans = 2000
	for i := range spans {
		name := fmt.Sprintf("GET /r%d", i%4)
		ctx, span := tr.Start(context.Background(), name)
		w := &truth{name: name}
		want[span.SpanContext().SpanID()] = w
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range rng.IntN(4) {
			w.arenas++
			actx := ctx
			var child trace.Span
			if rng.IntN(2) == 0 {
				actx, child = tr.Start(ctx, "child")
			}
			seed := rng.Uint64()
			use := func() {
				r := rand.New(rand.NewPCG(seed, 0))
				a := pool.Get(actx)
				b, n := work(r, a)
				if r.IntN(3) == 0 {
					a.Reset()
					b2, n2 := work(r, a)
					b, n = b+b2, n+n2
				}
				pool.Put(a)
				mu.Lock()
				w.bytes, w.allocs = w.bytes+b, w.allocs+n
				mu.Unlock()
				if child != nil {
					child.End()
				}
			}
			if rng.IntN(2) == 0 {
				wg.Go(use)
			} else {
				use()
			}
		}
		wg.Wait()
		span.End()
		if w.arenas > 0 {
			perName[name] = append(perName[name], w.bytes)
		}
	}
	checked, exact := 0, 0
	for _, s := range rec.Ended() {
		w, ok := want[s.SpanContext().SpanID()]
		if !ok {
			continue // a child
		}
		checked++
		attrs := map[attribute.Key]attribute.Value{}
		for _, kv := range s.Attributes() {
			attrs[kv.Key] = kv.Value
		}
		if id := attrs[attrProfileID].AsString(); id != s.SpanContext().SpanID().String() || len(id) != 16 {
			t.Errorf("span %s: %s = %q", s.Name(), attrProfileID, id)
		}
		b, hasB := attrs[attrBytes]
		n, hasN := attrs[attrAllocs]
		switch {
		case w.arenas == 0 && !hasB && !hasN:
			exact++
		case w.arenas > 0 && hasB && hasN && b.AsInt64() == w.bytes && n.AsInt64() == w.allocs:
			exact++
		default:
			t.Errorf("span %s with %d arenas: bytes %v, allocations %v; want %d, %d", s.Name(), w.arenas, b.String(), n.String(), w.bytes, w.allocs)
		}
	}
	t.Logf("exactness: %d local root spans checked, %d exact", checked, exact)
	if checked != spans || exact != spans {
		t.Errorf("%d spans checked, %d exact, want %d", checked, exact, spans)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "arena.request.allocated" {
				continue
			}
			if m.Unit != "By" {
				t.Errorf("unit %q", m.Unit)
			}
			for _, dp := range m.Data.(metricdata.Histogram[int64]).DataPoints {
				name, _ := dp.Attributes.Value("span.name")
				vs := perName[name.AsString()]
				var sum, mx int64
				for _, v := range vs {
					sum += v
					mx = max(mx, v)
				}
				if gotMax, ok := dp.Max.Value(); int(dp.Count) != len(vs) || dp.Sum != sum || !ok || gotMax != mx {
					t.Errorf("%s: count %d sum %d, want %d and %d (max %d)", name.AsString(), dp.Count, dp.Sum, len(vs), sum, mx)
				}
				found++
			}
		}
	}
	if found != 4 {
		t.Errorf("%d histogram series, want 4", found)
	}
}

// events collects the labels of sampled allocations.
type events struct {
	mu     sync.Mutex
	labels []hooks.Labels
}

func (e *events) Sampled(ev *hooks.Event) {
	e.mu.Lock()
	e.labels = append(e.labels, ev.Labels)
	e.mu.Unlock()
}

func (*events) Released(uint64) {}

// TestLabelsOnSamples samples every allocation (mean 1) of arenas taken
// under a local root span, under its child, and under a remote parent's
// local root: each sample carries the local root's span_id and span_name.
func TestLabelsOnSamples(t *testing.T) {
	wrapped, _, _ := setup(t, sdktrace.AlwaysSample())
	tr := wrapped.Tracer("test")
	old := hooks.MeanBytes()
	if err := hooks.SetMeanBytes(1); err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	unregister := hooks.Register(ev)
	defer func() {
		unregister()
		_ = hooks.SetMeanBytes(old)
	}()
	remote := trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled, Remote: true,
	}))
	cases := []struct {
		name   string
		parent context.Context
		child  bool
	}{
		{"root", context.Background(), false},
		{"child", context.Background(), true},
		{"remote parent", remote, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, root := tr.Start(c.parent, "GET /x")
			id := root.SpanContext().SpanID().String()
			tid := root.SpanContext().TraceID().String()
			if c.parent == remote && tid != (trace.TraceID{1}).String() {
				t.Fatalf("trace ID %s, want the remote parent's", tid)
			}
			if c.child {
				var child trace.Span
				ctx, child = tr.Start(ctx, "db")
				defer child.End()
			}
			pool := arena.NewPool()
			a := pool.Get(ctx)
			arena.New[obj24](a)
			arena.New[withPtr](a)
			pool.Put(a)
			root.End()
			ev.mu.Lock()
			got := ev.labels
			ev.labels = nil
			ev.mu.Unlock()
			if len(got) != 2 {
				t.Fatalf("%d samples, want 2", len(got))
			}
			for _, l := range got {
				sid, _ := l.Get(labelSpanID)
				sname, _ := l.Get(labelSpanName)
				stid, _ := l.Get(labelTraceID)
				if sid != id || sname != "GET /x" || stid != tid {
					t.Errorf("labels %v, want span_id %s, span_name GET /x, trace_id %s", l, id, tid)
				}
			}
		})
	}
}

// TestLateAndNotRecording checks an arena put back after its span ended
// (its bytes go to Late and the late counter, not to the span) and a span
// that does not record (no labels, no attributes, no report).
func TestLateAndNotRecording(t *testing.T) {
	wrapped, rec, reader := setup(t, sdktrace.AlwaysSample())
	tr := wrapped.Tracer("test")
	pool := arena.NewPool()
	r0, b0 := Late()
	ctx, span := tr.Start(context.Background(), "GET /late")
	a := pool.Get(ctx)
	arena.New[obj24](a)
	span.End()
	pool.Put(a)
	if r, b := Late(); r-r0 != 1 || b-b0 != 24 {
		t.Errorf("late: %d reports, %d bytes, want 1 and 24", r-r0, b-b0)
	}
	for _, kv := range rec.Ended()[0].Attributes() {
		if kv.Key == attrBytes || kv.Key == attrAllocs {
			t.Errorf("ended span got %v", kv)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var lateSum int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "arena.request.late_allocated" {
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					lateSum += dp.Value
				}
			}
		}
	}
	if lateSum != 24 {
		t.Errorf("late counter %d, want 24", lateSum)
	}

	never, rec2, _ := setup(t, sdktrace.NeverSample())
	ctx, span = never.Tracer("test").Start(context.Background(), "GET /off")
	if _, ok := pprof.Label(ctx, labelSpanID); ok {
		t.Error("a span that does not record put span_id on its context")
	}
	if _, ok := span.(*rootSpan); ok {
		t.Error("a span that does not record was wrapped")
	}
	a = pool.Get(ctx)
	arena.New[obj24](a)
	span.End()
	pool.Put(a)
	if r, b := Late(); r-r0 != 1 || b-b0 != 24 {
		t.Errorf("a span that does not record got a report: late %d, %d", r-r0, b-b0)
	}
	if n := len(rec2.Ended()); n != 0 {
		t.Errorf("%d spans recorded", n)
	}
}

// TestLateLabel samples every allocation (mean 1) of an arena taken under
// a local root span's context, a child's, or a context derived from it,
// used before the span ends and after (also after a Reset): the samples
// taken after carry span_late=true beside span_id and span_name, the
// others do not; the context itself says so, and still holds the SDK's
// span.
func TestLateLabel(t *testing.T) {
	wrapped, _, _ := setup(t, sdktrace.AlwaysSample())
	tr := wrapped.Tracer("test")
	old := hooks.MeanBytes()
	if err := hooks.SetMeanBytes(1); err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	unregister := hooks.Register(ev)
	defer func() {
		unregister()
		_ = hooks.SetMeanBytes(old)
	}()
	type key struct{}
	for _, c := range []struct {
		name  string
		under func(ctx context.Context) context.Context
	}{
		{"root", func(ctx context.Context) context.Context { return ctx }},
		{"child", func(ctx context.Context) context.Context {
			ctx, child := tr.Start(ctx, "db")
			child.End()
			return ctx
		}},
		{"derived", func(ctx context.Context) context.Context { return context.WithValue(ctx, key{}, 1) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, root := tr.Start(context.Background(), "GET /late")
			if trace.SpanFromContext(ctx) != root.(*rootSpan).Span {
				t.Fatal("the context does not hold the SDK's span")
			}
			id := root.SpanContext().SpanID().String()
			tid := root.SpanContext().TraceID().String()
			pool := arena.NewPool()
			a := pool.Get(c.under(ctx))
			arena.New[obj24](a)
			arena.New[withPtr](a)
			if _, ok := pprof.Label(ctx, labelSpanLate); ok {
				t.Error("span_late before the span ended")
			}
			root.End()
			if v, _ := pprof.Label(ctx, labelSpanLate); v != "true" {
				t.Errorf("span_late %q after the span ended, want true", v)
			}
			arena.New[obj24](a)
			a.Reset()
			arena.New[withPtr](a)
			pool.Put(a)
			ev.mu.Lock()
			got := ev.labels
			ev.labels = nil
			ev.mu.Unlock()
			if len(got) != 4 {
				t.Fatalf("%d samples, want 4", len(got))
			}
			for i, l := range got {
				sid, _ := l.Get(labelSpanID)
				sname, _ := l.Get(labelSpanName)
				late, _ := l.Get(labelSpanLate)
				stid, _ := l.Get(labelTraceID)
				if want := map[bool]string{true: "true"}[i >= 2]; sid != id || sname != "GET /late" || late != want || stid != tid {
					t.Errorf("sample %d: labels %v, want span_id %s, span_name GET /late, span_late %q, trace_id %s", i, l, id, want, tid)
				}
			}
		})
	}
}

// TestContextKeys checks that the context key of pprof labels was seen (a
// new Go that reads it otherwise makes Start fall back to
// pprof.WithLabels, without span_late), and that the context Start
// returns answers for the span and the labels as the packages' own
// contexts do: the wrapped tracer's span (the SDK's), and the span's
// labels over the parent's, span_name the name at Start.
func TestContextKeys(t *testing.T) {
	if keys.labels == nil {
		t.Fatalf("context key not seen: %+v", keys)
	}
	wrapped, _, _ := setup(t, sdktrace.AlwaysSample())
	parent := pprof.WithLabels(context.Background(), pprof.Labels("tenant", "t1"))
	ctx, span := wrapped.Tracer("test").Start(parent, "GET /k")
	defer span.End()
	span.SetName("GET /renamed")
	var got []string
	pprof.ForLabels(ctx, func(k, v string) bool { got = append(got, k+"="+v); return true })
	if want := []string{"span_id=" + span.SpanContext().SpanID().String(), "span_name=GET /k", "tenant=t1", "trace_id=" + span.SpanContext().TraceID().String()}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("labels %v, want %v", got, want)
	}
	if _, ok := ctx.(*spanContext); !ok {
		t.Fatalf("context %T, want *spanContext", ctx)
	}
	sdkSpan, ok := trace.SpanFromContext(ctx).(sdktrace.ReadWriteSpan)
	if !ok || sdkSpan != span.(*rootSpan).Span {
		t.Errorf("SpanFromContext: %T, want the SDK's span", trace.SpanFromContext(ctx))
	}
	if got := trace.SpanContextFromContext(ctx); !got.Equal(span.SpanContext()) {
		t.Errorf("SpanContextFromContext: %v", got)
	}
	if id, _ := pprof.Label(ctx, labelSpanID); id != span.SpanContext().SpanID().String() {
		t.Errorf("span_id %q", id)
	}
	if id, _ := pprof.Label(ctx, labelTraceID); id != span.SpanContext().TraceID().String() || len(id) != 32 {
		t.Errorf("trace_id %q, want the trace ID's 32 hex digits", id)
	}
}

// TestChildrenAreTheSDKs starts 200 local root spans through the wrapped
// provider over the real SDK, each with two children (one started from
// the root's context, one from a context derived from it, on a goroutine
// of its own) and a grandchild, and checks what the SDK recorded: every
// root counts its two children (ReadOnlySpan.ChildSpanCount), every
// child's parent is its root, in the root's trace, and links, events and
// the name given through trace.SpanFromContext reach the SDK's span (the
// histogram takes that name).
func TestChildrenAreTheSDKs(t *testing.T) {
	probe := &parentProbe{}
	wrapped, rec, reader := setup(t, sdktrace.AlwaysSample(), probe)
	tr := wrapped.Tracer("test")
	pool := arena.NewPool()
	link := trace.Link{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{9}, SpanID: trace.SpanID{9}})}
	type key struct{}
	const roots = 200
	for range roots {
		ctx, root := tr.Start(context.Background(), "GET /c", trace.WithLinks(link))
		trace.SpanFromContext(ctx).SetName("GET /c/{id}")
		trace.SpanFromContext(ctx).AddEvent("routed")
		c1ctx, c1 := tr.Start(ctx, "db")
		_, gc := tr.Start(c1ctx, "row")
		a := pool.Get(c1ctx)
		arena.New[obj24](a)
		pool.Put(a)
		gc.End()
		c1.End()
		var wg sync.WaitGroup
		wg.Go(func() {
			_, c2 := tr.Start(context.WithValue(ctx, key{}, 1), "cache")
			c2.End()
		})
		wg.Wait()
		root.End()
	}
	counted, parents := 0, 0
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		byID[s.SpanContext().SpanID()] = s
	}
	for _, s := range rec.Ended() {
		switch s.Name() {
		case "GET /c/{id}":
			if s.ChildSpanCount() == 2 && len(s.Links()) == 1 && len(s.Events()) == 1 {
				counted++
			} else {
				t.Errorf("root: %d children, %d links, %d events, want 2, 1, 1", s.ChildSpanCount(), len(s.Links()), len(s.Events()))
			}
		case "db", "cache":
			if p := byID[s.Parent().SpanID()]; p != nil && p.Name() == "GET /c/{id}" && p.SpanContext().TraceID() == s.SpanContext().TraceID() {
				parents++
			}
		case "row":
			if p := byID[s.Parent().SpanID()]; p == nil || p.Name() != "db" || s.ChildSpanCount() != 0 || p.ChildSpanCount() != 1 {
				t.Errorf("grandchild: parent %v", p)
			}
		default:
			t.Errorf("span named %q", s.Name())
		}
	}
	t.Logf("%d of %d wrapped roots count their 2 children; %d of %d children have their root as parent", counted, roots, parents, 2*roots)
	if probe.sdkParents.Load() != 2*roots {
		t.Errorf("a span processor's OnStart found the SDK's root span in the parent context of %d children, want %d", probe.sdkParents.Load(), 2*roots)
	}
	if counted != roots || parents != 2*roots {
		t.Errorf("%d roots with 2 children, %d children under their root; want %d and %d", counted, parents, roots, 2*roots)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "arena.request.allocated" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Histogram[int64]).DataPoints {
				if name, _ := dp.Attributes.Value("span.name"); name.AsString() != "GET /c/{id}" || dp.Count != roots {
					t.Errorf("histogram: %d values under %q, want %d under the name given through SpanFromContext", dp.Count, name.AsString(), roots)
				}
			}
		}
	}
}

// parentProbe is a span processor that counts the spans "db" and "cache"
// whose parent context, as the SDK hands it to OnStart, holds the SDK's
// span of their root.
type parentProbe struct{ sdkParents atomic.Int64 }

func (p *parentProbe) OnStart(parent context.Context, s sdktrace.ReadWriteSpan) {
	if s.Name() != "db" && s.Name() != "cache" {
		return
	}
	if ps, ok := trace.SpanFromContext(parent).(sdktrace.ReadWriteSpan); ok && ps.Name() == "GET /c/{id}" && ps.SpanContext().SpanID() == s.Parent().SpanID() {
		p.sdkParents.Add(1)
	}
}

func (*parentProbe) OnEnd(sdktrace.ReadOnlySpan)      {}
func (*parentProbe) Shutdown(context.Context) error   { return nil }
func (*parentProbe) ForceFlush(context.Context) error { return nil }

// TestZeroByteCalls checks what arena.allocations counts of calls for zero
// bytes: each is counted (telling them apart would cost the allocation
// fast path a compare), and adds no bytes.
func TestZeroByteCalls(t *testing.T) {
	wrapped, rec, _ := setup(t, sdktrace.AlwaysSample())
	pool := arena.NewPool()
	for _, c := range []struct {
		name  string
		alloc func(a *arena.Arena)
	}{
		{"New of struct{}", func(a *arena.Arena) { arena.New[struct{}](a) }},
		{"MakeSlice of 0", func(a *arena.Arena) { arena.MakeSlice[byte](a, 0, 0) }},
		{"String of \"\"", func(a *arena.Arena) { arena.String(a, "") }},
		{"Bytes of nil", func(a *arena.Arena) { arena.Bytes(a, nil) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, span := wrapped.Tracer("test").Start(context.Background(), c.name)
			a := pool.Get(ctx)
			c.alloc(a)
			c.alloc(a)
			pool.Put(a)
			span.End()
			got := map[attribute.Key]int64{}
			ended := rec.Ended()
			for _, kv := range ended[len(ended)-1].Attributes() {
				got[kv.Key] = kv.Value.AsInt64()
			}
			if got[attrAllocs] != 2 || got[attrBytes] != 0 {
				t.Errorf("%s twice: %s %d, %s %d; want 2 and 0", c.name, attrAllocs, got[attrAllocs], attrBytes, got[attrBytes])
			}
		})
	}
}
