// Package otelarena puts the memory of arenaprof's arenas on
// OpenTelemetry traces: the exact bytes each request took from its
// arenas on its span, their distribution per span name in a histogram,
// and the span's ID and name on every sampled allocation of those arenas,
// in the manner of grafana/otel-profiling-go.
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
// A span started through tp that is a local root (no parent, or a remote
// one) then
//
//   - has the attribute pyroscope.profile.id, its span ID, so that
//     Grafana's span profiles find it (set when it ends, with the arena
//     attributes: one call instead of two);
//   - returns a context with the pprof labels span_id (its ID, 16
//     lowercase hex digits), span_name (its name at Start) and trace_id
//     (its trace ID, 32 lowercase hex digits): an arena taken with
//     [arena.Pool.Get] under it, or under any of its children's
//     contexts, carries them on every sample (OTLP uploads link each
//     sample to its trace and span with them; Pyroscope uploads keep
//     span_id and span_name and leave trace_id out);
//   - gets, when it ends, the attributes arena.allocated_bytes (int64: the
//     bytes its arenas handed out, each allocation rounded up to 8, as
//     profiles count them) and arena.allocations (int64: the calls that
//     took memory), exact, counted on every request, summed over its
//     arenas and over their Resets; a span whose context no arena was
//     taken under gets neither;
//   - with a meter provider, records those bytes in the histogram
//     arena.request.allocated (unit By) with the attribute span.name (its
//     name at End), so that the bytes per request of each span name have a
//     distribution (p50, p99, max).
//
// An arena Put or Reset after its span ended (a goroutine outliving the
// request) cannot add to the span: its bytes are counted in [Late] and, with
// a meter provider, in the counter arena.request.late_allocated (unit By);
// the samples it takes after the span ended carry the label
// span_late=true beside span_id, span_name and trace_id.
// Spans that do not record (sampled out) get nothing: no labels, no
// attributes, and their arenas cost what they cost without tracing.
//
// Span IDs are new on every request; they live for the agent's upload
// window their samples fall in, then fold into their site's samples
// without them, and at most a quarter of the profiler's bucket bound
// carries them at a time (see [profiler.WithMaxBuckets]); past that,
// samples keep span_name and lose span_id and trace_id.
package otelarena
