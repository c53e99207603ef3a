package otelarena

import (
	"context"
	"encoding/hex"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

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
	labelSpanLate = "span_late"
	labelTraceID  = "trace_id"
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
// records gets its labels on the returned context, the usage function
// that adds its arenas' bytes up, and the profile ID and arena attributes
// when it ends; a child inherits them through the context it was started
// from.
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
	// One allocation holds the wrapper, what it adds up, its ID's hex
	// digits, its attributes and the context returned: a traced request
	// pays each allocation in CPU and garbage (BENCHMARKS.md).
	s := &rootSpan{Span: span, name: name, startName: name, inst: t.inst}
	sid := span.SpanContext().SpanID()
	hex.Encode(s.hexID[:], sid[:])
	ctx = arena.ContextWithUsage(ctx, s.add)
	s.ctx = spanContext{Context: ctx, s: s}
	if keys.span == nil || keys.labels == nil {
		// Not seen (TestContextKeys fails): the labels and the span the
		// usual way, without span_late.
		ctx = pprof.WithLabels(ctx, pprof.Labels(labelSpanID, s.id(), labelSpanName, name, labelTraceID, s.traceID()))
		return trace.ContextWithSpan(ctx, s), s
	}
	return &s.ctx, s
}

// rootSpan is a local root span: it adds up its arenas' usage and puts it
// on the span before it ends.
type rootSpan struct {
	trace.Span
	inst *instruments
	ctx  spanContext // the context Start returned

	startName string // the name at Start, the label span_name

	mu      sync.Mutex
	name    string
	bytes   int64
	allocs  int64
	reports int64
	ended   bool

	// done is ended, read by the context without the lock; labelMap and
	// lateLabelMap are the pprof labels of its context, made when first
	// asked for, before and after it ended (see spanContext).
	done         atomic.Bool
	labelMap     atomic.Pointer[any]
	lateLabelMap atomic.Pointer[any]

	hexID [16]byte // the span ID in lowercase hex, written once by Start
	attrs [3]attribute.KeyValue
}

// id returns the span ID's hex digits, without a copy: they are written
// once, before the first call.
func (s *rootSpan) id() string { return unsafe.String(&s.hexID[0], len(s.hexID)) }

// traceID returns the trace ID's 32 lowercase hex digits. It allocates
// them: it is called only where the labels are made, which most requests
// never reach (see spanContext), so that Start pays nothing for them.
func (s *rootSpan) traceID() string {
	tid := s.Span.SpanContext().TraceID()
	return hex.EncodeToString(tid[:])
}

// add is the usage function of the arenas taken under the span (see
// arena.ContextWithUsage); arenas of several goroutines may call it at once.
func (s *rootSpan) add(bytes, allocs int64) {
	s.mu.Lock()
	if s.ended {
		name := s.name
		s.mu.Unlock()
		late.reports.Add(1)
		late.bytes.Add(bytes)
		if s.inst != nil {
			s.inst.late.Add(context.Background(), bytes, metric.WithAttributes(attribute.String("span.name", name)))
		}
		return
	}
	s.bytes += bytes
	s.allocs += allocs
	s.reports++
	s.mu.Unlock()
}

// End puts the arenas' sums and the profile ID on the span, and the bytes
// in the histogram, once, and ends the span.
func (s *rootSpan) End(opts ...trace.SpanEndOption) {
	s.mu.Lock()
	first := !s.ended
	s.ended = true
	bytes, allocs, reports, name := s.bytes, s.allocs, s.reports, s.name
	s.mu.Unlock()
	if first {
		s.done.Store(true)
		// pyroscope.profile.id goes on the span with the arena
		// attributes, when it ends: one SetAttributes call instead of
		// two, each of which grows the SDK's attribute slice. The slice
		// is the span's own: no allocation for the call's arguments.
		s.attrs[0] = attribute.String(attrProfileID, s.id())
		n := 1 // no arena: no arena attribute
		if reports > 0 {
			s.attrs[1], s.attrs[2], n = attribute.Int64(attrBytes, bytes), attribute.Int64(attrAllocs, allocs), 3
		}
		s.Span.SetAttributes(s.attrs[:n]...)
		if reports > 0 && s.inst != nil {
			s.inst.hist.Record(context.Background(), bytes, metric.WithAttributes(attribute.String("span.name", name)))
		}
	}
	s.Span.End(opts...)
}

// SetName renames the span; the histogram takes the name the span ends
// with (the labels keep the name it started with).
func (s *rootSpan) SetName(name string) {
	s.mu.Lock()
	s.name = name
	s.mu.Unlock()
	s.Span.SetName(name)
}

// spanContext is the context Start returns for a local root span: it
// answers for the span itself, as trace.ContextWithSpan's would, and for
// the pprof labels span_id, span_name and trace_id over those of the context below,
// as pprof.WithLabels's would, but makes them only when first asked for:
// an arena taken under it reads them at its first sampled allocation or
// new chunk, which most requests never reach, so that most spans pay
// neither the labels nor a context for each (BENCHMARKS.md). Once the
// span has ended it answers with span_late=true added, so that the
// samples an arena takes after its span ended say so (an arena under a
// usage function follows its context's labels, see
// arena.ContextWithUsage).
type spanContext struct {
	context.Context // the usage function over the caller's context
	s               *rootSpan
}

// Value returns the span for the key of the current span, the span's
// labels for the key of pprof labels, and what the context below holds
// for any other key.
func (c *spanContext) Value(key any) any {
	switch key {
	case keys.span:
		return trace.Span(c.s)
	case keys.labels:
		if c.s.done.Load() {
			return c.s.labels(&c.s.lateLabelMap, true)
		}
		return c.s.labels(&c.s.labelMap, false)
	}
	return c.Context.Value(key)
}

// labels returns the pprof label map of the span's context (for
// pprof.Label and pprof.ForLabels), with span_late=true if late, made at
// the first call: the labels of the context below with the span's.
func (s *rootSpan) labels(p *atomic.Pointer[any], late bool) any {
	if l := p.Load(); l != nil {
		return *l
	}
	ls := pprof.Labels(labelSpanID, s.id(), labelSpanName, s.startName, labelTraceID, s.traceID())
	if late {
		ls = pprof.Labels(labelSpanID, s.id(), labelSpanLate, "true", labelSpanName, s.startName, labelTraceID, s.traceID())
	}
	l := pprof.WithLabels(s.ctx.Context, ls).Value(keys.labels)
	p.CompareAndSwap(nil, &l)
	return *p.Load()
}

// keys are the context keys of OpenTelemetry's current span and of
// runtime/pprof's labels, unexported in their packages: each package's
// own reader hands its key to a context that notes it.
var keys = func() (k struct{ span, labels any }) {
	trace.SpanFromContext(keyProbe{func(key any) { k.span = key }})
	pprof.Label(keyProbe{func(key any) { k.labels = key }}, "")
	return k
}()

// keyProbe is a context that notes the keys it is asked for.
type keyProbe struct{ note func(key any) }

func (keyProbe) Deadline() (time.Time, bool) { return time.Time{}, false }
func (keyProbe) Done() <-chan struct{}       { return nil }
func (keyProbe) Err() error                  { return nil }
func (p keyProbe) Value(key any) any         { p.note(key); return nil }

// late counts the reports of arenas whose span had ended.
var late struct{ reports, bytes atomic.Int64 }

// Late returns how many times an arena was reset or put back after the
// local root span it was taken under had ended, and the bytes those arenas
// had handed out: bytes no span got.
func Late() (reports, bytes int64) {
	return late.reports.Load(), late.bytes.Load()
}
