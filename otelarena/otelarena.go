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
	mp             metric.MeterProvider
	unsampledNames bool
}

// WithMeterProvider records each local root span's bytes in the histogram
// arena.request.allocated, and late bytes in the counter
// arena.request.late_allocated, of a meter of mp.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// WithUnsampledSpanNames labels the goroutine of a local root span that
// does not record (sampled out) with span_name, its name at Start, from
// Start to End, as grafana/otel-profiling-go does by default, so that CPU
// profiles by span_name cover every request, not only the sampled ones.
// Its context carries the label too: arenas taken under it carry it on
// their samples. It costs each such request the label set and a wrapper
// (BENCHMARKS.md); without it, a span that does not record costs nothing.
func WithUnsampledSpanNames() Option {
	return func(c *config) { c.unsampledNames = true }
}

// NewTracerProvider returns tp with its tracers' local root spans carrying
// the memory of the arenas taken under them, and their goroutines the
// labels span_id and span_name (see the package documentation).
func NewTracerProvider(tp trace.TracerProvider, opts ...Option) trace.TracerProvider {
	var c config
	for _, o := range opts {
		o(&c)
	}
	p := &tracerProvider{TracerProvider: tp, unsampledNames: c.unsampledNames}
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
	inst           *instruments
	unsampledNames bool
	// noGoroutineLabels leaves the goroutines' labels alone: the
	// benchmarks measure what setting them costs a request against it.
	noGoroutineLabels bool
}

// Tracer returns the wrapped provider's tracer, wrapped.
func (p *tracerProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return &tracer{Tracer: p.TracerProvider.Tracer(name, opts...), inst: p.inst, unsampledNames: p.unsampledNames, noGoroutineLabels: p.noGoroutineLabels}
}

type tracer struct {
	trace.Tracer
	inst              *instruments
	unsampledNames    bool
	noGoroutineLabels bool
}

// Start starts a span with the wrapped tracer; the context it returns
// holds the wrapped tracer's own span, so that its children are that
// span's children (the SDK counts them, links and processors see them as
// without the wrapper) and trace.SpanFromContext gives it. A local root
// span that records gets, beside it in the context, the usage function
// that adds its arenas' bytes up and its labels; its goroutine gets the
// labels span_id and span_name until it ends; it gets the profile ID and
// arena attributes when it ends. A child inherits the labels and the
// usage function through the context it was started from.
func (t *tracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if ctx == nil {
		ctx = context.Background()
	}
	parent := ctx
	psc := trace.SpanContextFromContext(ctx)
	localRoot := !psc.IsValid() || psc.IsRemote()
	if !localRoot && len(opts) > 0 {
		cfg := trace.NewSpanStartConfig(opts...)
		localRoot = cfg.NewRoot()
	}
	ctx, span := t.Tracer.Start(ctx, name, opts...)
	if !localRoot {
		return ctx, span
	}
	if !span.IsRecording() {
		if !t.unsampledNames || name == "" {
			return ctx, span
		}
		ctx = pprof.WithLabels(ctx, pprof.Labels(labelSpanName, name))
		pprof.SetGoroutineLabels(ctx)
		return ctx, &labelledSpan{Span: span, parent: parent}
	}
	// One allocation holds the wrapper, what it adds up, its IDs' hex
	// digits, its attributes and the context returned: a traced request
	// pays each allocation in CPU and garbage (BENCHMARKS.md).
	s := &rootSpan{Span: span, name: name, startName: name, inst: t.inst}
	s.goroutine.parent = parent
	sc := span.SpanContext()
	sid, tid := sc.SpanID(), sc.TraceID()
	hex.Encode(s.hexID[:], sid[:])
	hex.Encode(s.hexTraceID[:], tid[:])
	// The goroutine's labels: the parent's with span_id and span_name,
	// not trace_id (a series label per request in Pyroscope v1.19, where
	// a CPU profiler of the process's own, such as pyroscope-go's,
	// would send it).
	if !t.noGoroutineLabels {
		gctx := pprof.WithLabels(parent, pprof.Labels(labelSpanID, s.id(), labelSpanName, name))
		pprof.SetGoroutineLabels(gctx)
		s.goroutine.labels = gctx
	}
	ctx = arena.ContextWithUsage(ctx, s.add)
	s.ctx = spanContext{Context: ctx, s: s}
	if keys.labels == nil {
		// Not seen (TestContextKeys fails): the labels the usual way,
		// without span_late.
		return pprof.WithLabels(ctx, pprof.Labels(labelSpanID, s.id(), labelSpanName, name, labelTraceID, s.traceID())), s
	}
	return &s.ctx, s
}

// labelledSpan is a local root span that does not record, whose
// goroutine carries span_name (WithUnsampledSpanNames): End gives the
// goroutine its parent's labels back.
type labelledSpan struct {
	trace.Span
	parent context.Context
	ended  atomic.Bool
}

// End ends the span and, the first time, sets the goroutine's labels to
// those of the context the span was started from.
func (s *labelledSpan) End(opts ...trace.SpanEndOption) {
	s.Span.End(opts...)
	if !s.ended.Swap(true) {
		pprof.SetGoroutineLabels(s.parent)
	}
}

// rootSpan is a local root span: it adds up its arenas' usage and puts it
// on the span before it ends.
type rootSpan struct {
	trace.Span
	inst *instruments
	ctx  spanContext // the context Start returned

	// goroutine holds the contexts whose labels Start set on its
	// goroutine (labels; nil if it set none) and End sets back
	// (parent's).
	goroutine struct{ parent, labels context.Context }

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

	hexID      [16]byte // the span ID in lowercase hex, written once by Start
	hexTraceID [32]byte // the trace ID in lowercase hex, written once by Start
	attrs      [3]attribute.KeyValue
}

// id returns the span ID's hex digits, without a copy: they are written
// once, before the first call.
func (s *rootSpan) id() string { return unsafe.String(&s.hexID[0], len(s.hexID)) }

// traceID returns the trace ID's 32 hex digits, without a copy, as id.
func (s *rootSpan) traceID() string { return unsafe.String(&s.hexTraceID[0], len(s.hexTraceID)) }

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

// spanName is the interface of the SDK's spans that tells their name
// (sdktrace.ReadOnlySpan's Name).
type spanName interface{ Name() string }

// End puts the arenas' sums and the profile ID on the span, and the bytes
// in the histogram, once, ends the span, and sets its goroutine's labels
// back to those of the context it was started from, once.
func (s *rootSpan) End(opts ...trace.SpanEndOption) {
	// The name the span ends with: the SDK's span tells it, also when it
	// was renamed through trace.SpanFromContext (which gives the SDK's
	// span, not this wrapper).
	sdkName, named := s.Span.(spanName)
	s.mu.Lock()
	first := !s.ended
	if first && named {
		s.name = sdkName.Name()
	}
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
	if first && s.goroutine.labels != nil {
		// Restored, not cleared: a span started under labels of the
		// caller's (pprof.Do) gives them back.
		pprof.SetGoroutineLabels(s.goroutine.parent)
	}
}

// SetName renames the span; the histogram takes the name the span ends
// with (the labels keep the name it started with).
func (s *rootSpan) SetName(name string) {
	s.mu.Lock()
	s.name = name
	s.mu.Unlock()
	s.Span.SetName(name)
}

// spanContext is the context Start returns for a local root span: below
// it, the context the wrapped tracer returned (its span) with the usage
// function; it answers for the pprof labels span_id, span_name and
// trace_id over those of the caller's context, as pprof.WithLabels's
// would, but makes them only when first asked for: an arena taken under
// it reads them at its first sampled allocation or new chunk, which most
// requests never reach, so that most spans pay neither the labels with
// trace_id nor a context for them (BENCHMARKS.md). Once the span has
// ended it answers with span_late=true added, so that the samples an
// arena takes after its span ended say so (an arena under a usage
// function follows its context's labels, see arena.ContextWithUsage).
type spanContext struct {
	context.Context // the usage function over the wrapped tracer's context
	s               *rootSpan
}

// Value returns the span's labels for the key of pprof labels, and what
// the context below holds for any other key (the span among them).
func (c *spanContext) Value(key any) any {
	if key == keys.labels {
		if c.s.done.Load() {
			return c.s.labels(&c.s.lateLabelMap, true)
		}
		return c.s.labels(&c.s.labelMap, false)
	}
	return c.Context.Value(key)
}

// labels returns the pprof label map of the span's context (for
// pprof.Label and pprof.ForLabels), with span_late=true if late, made at
// the first call: the goroutine's labels (the caller's context's with
// span_id and span_name) with trace_id.
func (s *rootSpan) labels(p *atomic.Pointer[any], late bool) any {
	if l := p.Load(); l != nil {
		return *l
	}
	kv := []string{labelSpanLate, "true", labelTraceID, s.traceID()}
	if !late {
		kv = kv[2:]
	}
	base := s.goroutine.labels
	if base == nil {
		base = s.goroutine.parent
		kv = append(kv, labelSpanID, s.id(), labelSpanName, s.startName)
	}
	l := pprof.WithLabels(base, pprof.Labels(kv...)).Value(keys.labels)
	p.CompareAndSwap(nil, &l)
	return *p.Load()
}

// keys are the context key of runtime/pprof's labels, unexported in its
// package: its own reader hands it to a context that notes it.
var keys = func() (k struct{ labels any }) {
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
