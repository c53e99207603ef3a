// Package arenaprof sets up arena allocation profiling for a service in one
// call. It turns sampling on, serves the profiles on your mux or router
// (Config.Mux: net/http/pprof is not mounted with them, only the goroutine
// leak profile where the runtime has one), and pushes a
// profile every interval to a Grafana Pyroscope server, to an
// OpenTelemetry Collector or any OTLP profiles receiver (Config.OTLPURL),
// or to a directory:
//
//	s, err := arenaprof.Start(arenaprof.Config{
//		AppName:      "shop",
//		Mux:          mux, // go tool pprof http://host/debug/arenaprof
//		PyroscopeURL: "http://pyroscope:4040",
//	})
//	if err != nil {
//		log.Fatal(err)
//	}
//	// ... serve; on shutdown, after http.Server.Shutdown, upload the last
//	// interval within a deadline:
//	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
//	defer cancel()
//	if err := s.Stop(ctx); err != nil {
//		log.Print(err)
//	}
//
//	// Per request: an arena from a pool, reset when the request is done.
//	a := pool.Get(r.Context()) // pprof labels of the context label the arena
//	defer pool.Put(a)
//	u := arena.New[user](a)
//
// Config.Profiles picks the uploaded profiles one by one (arena
// allocations and in-use memory, live arenas, peak, Go heap, wall-clock
// time, CPU); the CPU profile is off by default, since the Go runtime runs
// one per process and net/http/pprof's /debug/pprof/profile would answer
// 500 while the agent holds it. Config.SampleMeanBytes sets the sampling
// mean (the average number of bytes between sampled bytes), process-wide
// like runtime.MemProfileRate; the default is 100 KiB. One session runs
// at a time: a second Start fails, naming the running session, and Stop
// restores the mean Start found.
//
// Printed with fmt, log/slog or encoding/json, a Config shows no
// credential. Session.Stats counts uploads, retries, failures and the last
// error; Config.Mux serves them as JSON at /debug/arenaprof/stats. examples/shutdown is a complete
// service that stops on SIGTERM without losing its last interval.
//
// The packages underneath are there for what the one call does not cover:
// arena (the allocator), profiler (the collector and the statistics),
// export (pprof profiles, the HTTP handler), export/agent (continuous
// profiling to any destination), report (reading profiles back with
// confidence intervals) and hooks (reporting sampled allocations from an
// allocator of your own).
package arenaprof
