// Package agent is arenaprof's continuous-profiling agent: it runs inside a
// service, collects profiles every interval and hands them to destinations
// (a directory, a Pyroscope-compatible server, an OpenTelemetry OTLP
// profiles receiver, or any [Uploader]) without
// ever making the service wait for a slow or dead backend.
//
// Each interval the agent calls every [Source] once, from one goroutine:
//
//   - [ProfilerSource]: the arena allocation profile of a
//     [github.com/arenaprof/arenaprof/profiler.Profiler] as a delta over the
//     interval (alloc values and raw sums over the window, in-use absolute,
//     marked "arenaprof window=both"; [DeltaSource] does the same for any
//     function returning cumulative profiles);
//   - [WallSource]: a wall-clock profile (github.com/felixge/fgprof) over
//     the same interval, a separate profile since wall time cannot merge
//     with space;
//   - [CPUSource] and [HeapSource]: the runtime's CPU profile over the
//     interval and its heap profile as a delta;
//   - [ArenasSource] and [PeakSource]: where arena memory is held at the
//     interval's end (the live-arenas profile, exact) and the in-use
//     profile at the highest estimated live arena bytes within the
//     interval;
//   - anything else implementing [Source] (see [DeltaSource]).
//
// Each destination has its own bounded queue and upload goroutine.
// Collection only appends to the queues; a full queue drops its oldest
// profile. Each upload attempt times out (Config.Timeout, 10 s). Errors
// marked [Retryable] (network errors before the request was sent, HTTP 5xx
// and 429, Pyroscope's "empty ring" while it starts) are retried with
// capped exponential backoff and full jitter, or after the server's
// Retry-After (capped), for up to Config.MaxRetryTime (2 min) per profile:
// a server that is away for a minute loses nothing while the queue has
// room. An attempt whose request was sent but never answered is counted
// unconfirmed and not retried: the server may have stored it, and
// Pyroscope's ingest would store a second copy too.
//
// [Agent.Stats] counts what happened: once the agent has stopped, every
// profile handed to a destination is counted in exactly one of Uploaded,
// Failed, Unconfirmed and Dropped, with the last error and its time. The
// last error is the cause (the transport or server error); profiles dropped
// because a queue was full are counted apart in QueueFull, a part of
// Dropped, and never replace it.
// Without a Config.Logger, persistent failures are logged through
// slog.Default at most once a minute.
//
// [Agent.Stop] collects the last partial interval and drains the queues
// within its context's deadline, or within Config.DrainTimeout (10 s) when
// the context has none; when it returns, the counters are final and no
// source or uploader is called again.
//
// Usage:
//
//	prof, err := profiler.Start()
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer prof.Stop()
//	dir, err := agent.NewDir(agent.DirConfig{Path: "/var/lib/shop/profiles", MaxFiles: 5000})
//	if err != nil {
//		log.Fatal(err)
//	}
//	a, err := agent.Start(agent.Config{
//		AppName:   "shop",
//		Labels:    map[string]string{"env": "prod", "region": "eu-west-1"},
//		Sources:   []agent.Source{agent.ProfilerSource(prof), agent.WallSource(), agent.HeapSource()},
//		Uploaders: []agent.Uploader{dir},
//	})
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer func() {
//		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
//		defer cancel()
//		a.Stop(ctx)
//	}()
//
// To push to Pyroscope instead (or as well), add an uploader:
//
//	py, err := agent.NewPyroscope(agent.PyroscopeConfig{
//		URL:         "https://profiles.example.com",
//		TenantID:    "team-a",
//		BearerToken: os.Getenv("PYROSCOPE_TOKEN"),
//	})
//
// [NewPyroscope] describes the wire format: POST {URL}/ingest with the name,
// from, until and spyName query parameters and a multipart body with the
// "profile" and "sample_type_config" parts (format=pprof only with a raw
// body, [PyroscopeConfig].RawBody). In-use values are uploaded as levels:
// read live memory in Pyroscope with an averaged query (see the README).
//
// To push OpenTelemetry profiles to a Collector (or to Pyroscope's own OTLP
// endpoint), add the OTLP destination; what its config leaves unset comes
// from the OTEL_EXPORTER_OTLP_* variables:
//
//	o, err := agent.NewOTLP(agent.OTLPConfig{URL: "http://otel-collector:4318"})
//
// [NewOTLP] describes what it sends. A destination of your own is any
// type that implements [Uploader] (see its example); it marks the errors
// worth retrying with [Retryable], and those after which the destination
// may have stored the profile with [Unconfirmed].
package agent
