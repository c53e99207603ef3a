package otelarena

import (
	"context"
	"runtime/pprof"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/arenaprof/arenaprof/arena"
)

// Attribute keys and label names.
const (
	attrProfileID = "pyroscope.profile.id"
	attrBytes     = "arena.allocated_bytes"
	attrAllocs    = "arena.allocations"
	labelSpanID   = "span_id"
	labelSpanName = "span_name"
	scopeName     = "github.com/arenaprof/arenaprof/otelarena"
)

// Option configures [NewTracerProvider].
type Option func(*config)

type config struct {
	mp metric.MeterProvider
}

// WithMeterProvider records each local root span's bytes in the histogram
// arena.request.allocated, and late bytes in the counter
// arena.request.late_allocated, of a meter of mp.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// NewTracerProvider returns tp with its tracers' local root spans carrying
// the memory of the arenas taken under them (see the package
// documentation).
func NewTracerProvider(tp trace.TracerProvider, opts ...Option) trace.TracerProvider {
	var c config
	for _, o := range opts {
		o(&c)
	}
	p := &tracerProvider{TracerProvider: tp}
	if c.mp != nil {
		p.inst = newInstruments(c.mp)
	}
	return p
}

// instruments are the metric instruments of a tracer provider.
type instruments struct {
	hist metric.Int64Histogram
	late metric.Int64Counter
}

// byteBounds are the histogram's bucket bounds: powers of 4 from 256 B to
// 1 GiB, so that requests from a few objects to large uploads each fall
// in a bucket at most 4 times wide.
var byteBounds = func() []float64 {
	var b []float64
	for v := 256.0; v <= 1<<30; v *= 4 {
		b = append(b, v)
	}
	return b
}()

func newInstruments(mp metric.MeterProvider) *instruments {
	m := mp.Meter(scopeName)
	// The errors name a bad name or unit; those are constants here, and
	// the instruments returned are usable (no-ops) whatever happens.
	h, _ := m.Int64Histogram("arena.request.allocated", metric.WithUnit("By"),
		metric.WithDescription("Bytes a request (a local root span) took from arenas, exact"),
		metric.WithExplicitBucketBoundaries(byteBounds...))
	l, _ := m.Int64Counter("arena.request.late_allocated", metric.WithUnit("By"),
		metric.WithDescription("Bytes of arenas reset or put back after their request's span ended"))
	return &instruments{hist: h, late: l}
}

// tracerProvider wraps a trace.TracerProvider; embedding it keeps the
// interface's unexported method.
type tracerProvider struct {
	trace.TracerProvider
	inst *instruments
}

// Tracer returns the wrapped provider's tracer, wrapped.
func (p *tracerProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return &tracer{Tracer: p.TracerProvider.Tracer(name, opts...), inst: p.inst}
}

type tracer struct {
	trace.Tracer
	inst *instruments
}

// Start starts a span with the wrapped tracer. A local root span that
// records gets the profile ID attribute, its labels on the returned
// context, and the usage function that adds its arenas' bytes up; a child
// inherits them through the context it was started from.
func (t *tracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if ctx == nil {
		ctx = context.Background()
	}
	psc := trace.SpanContextFromContext(ctx)
	localRoot := !psc.IsValid() || psc.IsRemote()
	if !localRoot && len(opts) > 0 {
		cfg := trace.NewSpanStartConfig(opts...)
		localRoot = cfg.NewRoot()
	}
	ctx, span := t.Tracer.Start(ctx, name, opts...)
	if !localRoot || !span.IsRecording() {
		return ctx, span
	}
	id := span.SpanContext().SpanID().String()
	// pyroscope.profile.id goes on the span with the arena attributes,
	// when it ends: one SetAttributes call instead of two, each of which
	// grows the SDK's attribute slice (6% of a traced request's CPU).
	r := &root{span: span, name: name, id: id, inst: t.inst}
	ctx = pprof.WithLabels(ctx, pprof.Labels(labelSpanID, id, labelSpanName, name))
	ctx = arena.ContextWithUsage(ctx, r.add)
	s := &rootSpan{Span: span, r: r}
	return trace.ContextWithSpan(ctx, s), s
}

// root is what a local root span adds up from its arenas.
type root struct {
	span trace.Span
	inst *instruments

	id      string // the span ID, 16 hex digits
	mu      sync.Mutex
	name    string
	bytes   int64
	allocs  int64
	reports int64
	ended   bool
}

// add is the usage function of the arenas taken under the span (see
// arena.ContextWithUsage); arenas of several goroutines may call it at once.
func (r *root) add(bytes, allocs int64) {
	r.mu.Lock()
	if r.ended {
		name := r.name
		r.mu.Unlock()
		late.reports.Add(1)
		late.bytes.Add(bytes)
		if r.inst != nil {
			r.inst.late.Add(context.Background(), bytes, metric.WithAttributes(attribute.String("span.name", name)))
		}
		return
	}
	r.bytes += bytes
	r.allocs += allocs
	r.reports++
	r.mu.Unlock()
}

// end puts the sums on the span and in the histogram, once, before the
// span ends.
func (r *root) end() {
	r.mu.Lock()
	if r.ended {
		r.mu.Unlock()
		return
	}
	r.ended = true
	bytes, allocs, reports, name := r.bytes, r.allocs, r.reports, r.name
	r.mu.Unlock()
	if reports == 0 {
		r.span.SetAttributes(attribute.String(attrProfileID, r.id)) // no arena: no arena attribute
		return
	}
	r.span.SetAttributes(attribute.String(attrProfileID, r.id), attribute.Int64(attrBytes, bytes), attribute.Int64(attrAllocs, allocs))
	if r.inst != nil {
		r.inst.hist.Record(context.Background(), bytes, metric.WithAttributes(attribute.String("span.name", name)))
	}
}

// rootSpan is a local root span: it adds its arenas' sums before it ends.
type rootSpan struct {
	trace.Span
	r *root
}

// End adds the arenas' sums to the span and ends it.
func (s *rootSpan) End(opts ...trace.SpanEndOption) {
	s.r.end()
	s.Span.End(opts...)
}

// SetName renames the span; the histogram takes the name the span ends
// with (the labels keep the name it started with).
func (s *rootSpan) SetName(name string) {
	s.r.mu.Lock()
	s.r.name = name
	s.r.mu.Unlock()
	s.Span.SetName(name)
}

// late counts the reports of arenas whose span had ended.
var late struct{ reports, bytes atomic.Int64 }

// Late returns how many times an arena was reset or put back after the
// local root span it was taken under had ended, and the bytes those arenas
// had handed out: bytes no span got.
func Late() (reports, bytes int64) {
	return late.reports.Load(), late.bytes.Load()
}
