// Package otelarena puts the memory of arenaprof's arenas on
// OpenTelemetry traces: the exact bytes each request took from its
// arenas on its span, their distribution per span name in a histogram,
// and the span's ID and name on every sampled allocation of those arenas
// and on the CPU samples of its goroutine, in the manner of
// grafana/otel-profiling-go, which it replaces: Grafana's
// traces-to-profiles then shows a span's CPU and its arena memory.
//
// Wrap the tracer provider once:
//
//	tp := otelarena.NewTracerProvider(sdkTracerProvider,
//		otelarena.WithMeterProvider(meterProvider))
//	otel.SetTracerProvider(tp)
//
// and take each request's arena under its span:
//
//	a := pool.Get(r.Context()) // r's context carries the span
//	defer pool.Put(a)
//
// The context Start returns holds the wrapped tracer's own span (the
// SDK's): children started from it are that span's children (the SDK
// counts them in ReadOnlySpan.ChildSpanCount), trace.SpanFromContext
// gives it, and processors, exporters and links see the trace as without
// the wrapper. What the wrapper adds rides beside the span in the
// context, and in the span Start returns, whose End must be called (as
// otelhttp and every instrumentation does) on the goroutine that started
// it.
//
// A span started through tp that is a local root (no parent, or a remote
// one) and records then
//
//   - has the attribute pyroscope.profile.id, its span ID, so that
//     Grafana's span profiles find it (set when it ends, with the arena
//     attributes: one call instead of two);
//   - labels its goroutine, from Start to End, with the pprof labels
//     span_id (its ID, 16 lowercase hex digits) and span_name (its name
//     at Start) over the caller's own, as grafana/otel-profiling-go does:
//     CPU samples taken under it, and on goroutines started under it,
//     carry them, and End sets the goroutine's labels back to those of
//     the context the span was started from (restored, not cleared);
//   - returns a context with those labels and trace_id (its trace ID, 32
//     lowercase hex digits): an arena taken with [arena.Pool.Get] under
//     it, or under any of its children's contexts, carries them on every
//     sample (OTLP uploads link each sample to its trace and span with
//     them; Pyroscope uploads keep span_id and span_name and leave
//     trace_id out); the goroutine's labels leave trace_id out, since a
//     CPU profiler of the process's own (pyroscope-go's) would send it to
//     Pyroscope, where v1.19 makes it a series label per trace;
//   - gets, when it ends, the attributes arena.allocated_bytes (int64: the
//     bytes its arenas handed out, each allocation rounded up to 8, as
//     profiles count them) and arena.allocations (int64: the calls of
//     New, MakeSlice, String and Bytes, those for zero bytes included,
//     and each growth by Append, AppendString, Grow or ReadAll), exact,
//     counted on every request, summed over its arenas and over their
//     Resets; a span whose context no arena was taken under gets neither;
//   - with a meter provider, records those bytes in the histogram
//     arena.request.allocated (unit By) with the attribute span.name (the
//     name it ends with, also when it was renamed through
//     trace.SpanFromContext), so that the bytes per request of each span
//     name have a distribution (p50, p99, max).
//
// Children take no labels of their own: their samples carry their local
// root's span_id and span_name (otel-profiling-go's default scope). A
// child started on a goroutine that was not started under the request (a
// worker pool's) does not label it; pprof.SetGoroutineLabels(ctx) there
// does.
//
// An arena Put or Reset after its span ended (a goroutine outliving the
// request) cannot add to the span: its bytes are counted in [Late] and, with
// a meter provider, in the counter arena.request.late_allocated (unit By);
// the samples it takes after the span ended carry the label
// span_late=true beside span_id, span_name and trace_id.
// Spans that do not record (sampled out) get nothing: no labels, no
// attributes, and their arenas cost what they cost without tracing;
// with [WithUnsampledSpanNames], their goroutines and contexts get
// span_name, as otel-profiling-go gives them.
//
// Span IDs are new on every request; they live for the agent's upload
// window their samples fall in, then fold into their site's samples
// without them, and at most a quarter of the profiler's bucket bound
// carries them at a time (see [profiler.WithMaxBuckets]); past that,
// samples keep span_name and lose span_id and trace_id.
package otelarena
