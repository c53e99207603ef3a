package arenaprof

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/export/agent"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/buildlimit"
	"github.com/arenaprof/arenaprof/internal/rss"
	"github.com/arenaprof/arenaprof/profiler"
)

// The paths where Start mounts the handlers on Config.Mux.
const (
	handlerPath       = "/debug/arenaprof"
	memoryHandlerPath = "/debug/arenaprof/memory"
	arenasHandlerPath = "/debug/arenaprof/arenas"
	peakHandlerPath   = "/debug/arenaprof/peak"
	rssHandlerPath    = "/debug/arenaprof/rss"
	uiHandlerPath     = "/debug/arenaprof/ui"
	statsHandlerPath  = "/debug/arenaprof/stats"
)

// Config says what [Start] sets up. Its zero value is valid: a profiler and
// nothing else (read it with Session.Handler or Session.Profiler). Every
// optional field's zero value selects its default. Printed with fmt, log/slog
// or encoding/json, a Config shows no credential (see [Config.String]).
type Config struct {
	// AppName names the service in uploads and file names (OTLP's
	// service.name). Required when PyroscopeURL, Pyroscope or Dir is set;
	// with OTLP alone, OTEL_SERVICE_NAME is used when it is empty.
	AppName string
	// Labels are attached to every uploaded profile (e.g. env, version);
	// see agent.Config.Labels for the rules.
	Labels map[string]string

	// Mux, if not nil, gets these seven handlers (the
	// profiles take go tool pprof's ?seconds=N, see export.Handler):
	//
	//	/debug/arenaprof         arena allocations and in-use arena memory
	//	/debug/arenaprof/memory  all memory: arenas and the Go heap
	//	/debug/arenaprof/arenas  the live arenas: where arena memory is held now
	//	/debug/arenaprof/peak    in-use arena memory at its highest estimate
	//	/debug/arenaprof/rss     where the resident memory (RSS) goes, every byte in one class;
	//	                         ?peak=1: at the highest RSS since Start
	//	/debug/arenaprof/ui      the live page: the running profile in a browser
	//	/debug/arenaprof/stats   Session.Stats as JSON: uploads, retries, failures, last error
	//
	// and one more where the runtime has the goroutine leak profile (Go
	// 1.27 on; Go 1.26 built with GOEXPERIMENT=goroutineleakprofile) and
	// Mux has nothing at its exact path: /debug/pprof/goroutineleak, the
	// leaked goroutines as net/http/pprof serves them (arenaprof leaks URL
	// joins them with the live arenas they hold). Nothing else is mounted.
	//
	// e.g. go tool pprof http://host/debug/arenaprof. Each is registered
	// with Mux.Handle at its exact path, which every router matches the
	// same way. An *http.ServeMux, or any router with ServeMux's
	// Handler(*http.Request) method, is checked first: Start fails,
	// mounting nothing, when one of the paths is taken. Other routers are
	// not checked (one that panics on a taken path makes Start fail, with
	// the paths before it left mounted).
	//
	// net/http/pprof's handlers (/debug/pprof/...) are not mounted: that
	// package registers them on http.DefaultServeMux when imported, and
	// on a Mux of your own /debug/pprof/ answers 404 until you mount
	// them. On an *http.ServeMux, mount pprof.Index at "/debug/pprof/"
	// (it serves every named profile below it) and pprof.Cmdline,
	// pprof.Profile, pprof.Symbol and pprof.Trace at their paths, as
	// net/http/pprof's own init does. A router without prefix patterns
	// needs one: with chi (any router whose Handle has Router's
	// signature will do; for gorilla/mux, see Router):
	//
	//	r := chi.NewRouter()
	//	s, err := arenaprof.Start(arenaprof.Config{AppName: "shop", Mux: r})
	//	...
	//	r.Mount("/debug", middleware.Profiler()) // chi's net/http/pprof: /debug/pprof/...
	//	http.ListenAndServe(addr, r)
	Mux Router

	// PyroscopeURL, if set, pushes profiles to a Grafana Pyroscope server
	// (e.g. "http://pyroscope:4040"; user:password@ in the URL is taken as
	// basic auth). For a tenant, a bearer token or custom headers, use
	// Pyroscope instead.
	PyroscopeURL string
	// Pyroscope is the full configuration of the Pyroscope destination;
	// it takes precedence over PyroscopeURL.
	Pyroscope *agent.PyroscopeConfig

	// OTLPURL, if set, pushes profiles as OpenTelemetry profiles over
	// OTLP/HTTP to this base URL ("/v1development/profiles" appended): an
	// OpenTelemetry Collector with the profiles signal on (e.g.
	// "http://otel-collector:4318"), or Grafana Pyroscope, which ingests
	// OTLP itself (e.g. "http://pyroscope:4040"). For headers, TLS or a
	// timeout, or the profiles version (v0.3.0 by default; v0.2.0 for
	// Pyroscope v1.19 and Collector v0.147.0: OTLP.ProfilesVersion or
	// ARENAPROF_OTLP_PROFILES_VERSION), use OTLP instead.
	OTLPURL string
	// OTLP is the full configuration of the OTLP destination; it takes
	// precedence over OTLPURL. What it leaves unset comes from the standard
	// OTEL_EXPORTER_OTLP_* variables (see agent.OTLPConfig); so
	// &agent.OTLPConfig{} sends to OTEL_EXPORTER_OTLP_ENDPOINT.
	OTLP *agent.OTLPConfig

	// Dir, if set, writes profiles into this directory (created if
	// missing), keeping at most 10000 files (see agent.DirConfig). With
	// Dir set, each new peak of RSS at 90% of a limit (GOMEMLIMIT or the
	// cgroup's memory.max) or more is written there at once as an "rss"
	// profile (see /debug/arenaprof/rss?peak=1), before an OOM kill can
	// come.
	Dir string

	// Interval between uploads; default 15 s, at least 1 ms.
	Interval time.Duration
	// Profiles names the profiles uploaded every Interval, each by the
	// name it carries in uploads (file names, Pyroscope's memory label):
	//
	//	"arena"   arena allocations over the interval (alloc_objects,
	//	          alloc_space) and in-use arena memory at its end
	//	          (inuse_objects, inuse_space), estimated from samples
	//	"arenas"  the live arenas at the interval's end: where arena memory
	//	          is held, exact
	//	"peak"    in-use arena memory at the interval's highest estimate
	//	"heap"    the Go heap (runtime/pprof's heap profile) over the interval
	//	"wall"    wall-clock time of every goroutine, running or waiting
	//	          (github.com/felixge/fgprof, 99 stack samples a second)
	//	"cpu"     CPU time (runtime/pprof's CPU profile)
	//	"rss"     resident memory at the interval's end, every byte in one
	//	          class (/debug/arenaprof/rss; docs/rss.md)
	//
	// Empty (the default) uploads the memory profiles: ["arena",
	// "arenas", "peak", "heap"]. A name twice or an unknown name is an
	// error.
	//
	// "wall" is left out by default for its cost: it stops the world 99
	// times a second to take every goroutine's stack, which took about 10%
	// of the CPU of a JSON service at 2,000 requests a second and 1.9 MB
	// of its peak RSS, where the four memory profiles together took 0.2%
	// and 1.5 MB (docs/agent-cost.md). Add it where a wall-clock profile
	// is worth that.
	//
	// "rss" is left out by default for its allocations: each read walks
	// /proc/self/smaps and the runtime's heap profile and allocates about
	// 2 MiB with 1,000 heap sites (14 ms of CPU, 0.1% of a core every
	// 15 s), where the Go heap's upload allocates 10 KiB; a profiler must
	// not be a top allocator of the service it profiles. Add it to follow
	// resident memory over a fleet (arenaprof rss -pyroscope).
	//
	// The Go runtime runs one CPU profile per process. While a session
	// uploads "cpu", net/http/pprof's /debug/pprof/profile answers 500
	// "cpu profiling already in use", and so does every other
	// runtime/pprof.StartCPUProfile (go test -cpuprofile); Start fails when
	// a CPU profile is running already. So "cpu" is left out by default: a
	// service that serves /debug/pprof/profile keeps serving it. Add "cpu"
	// when the agent is the only CPU profiler of the process.
	Profiles []string
	// SampleMeanBytes is the sampling mean of arena allocations: the
	// average number of bytes allocated between two sampled bytes, as
	// runtime.MemProfileRate is for the Go heap. Each byte is sampled with
	// probability 1/SampleMeanBytes, so an object of S bytes is sampled
	// with probability 1-(1-1/SampleMeanBytes)^S, and every sample is
	// weighted so that estimates are unbiased at any mean. Zero keeps the
	// mean in force: 102400 (100 KiB, the .NET runtime's default;
	// runtime.MemProfileRate defaults to 512 KiB) unless
	// hooks.SetMeanBytes changed it. 1 samples every object; above 2^40 or
	// negative is an error.
	//
	// The trade-off: each sample costs a stack capture and an event in
	// the allocating goroutine (about 0.1-0.3 µs, see BENCHMARKS.md), and
	// a profile's interval narrows about as 1/sqrt(samples): halving the
	// mean doubles the samples and their cost, and narrows intervals by
	// about 30%. At the default, a service allocating 1 GB/s in arenas
	// takes about 10,000 samples a second: 1-3 ms of CPU a second.
	//
	// Like runtime.MemProfileRate, the mean is process-wide: Start sets it
	// for every arena (and every allocator reporting through package
	// hooks) until Stop, which restores the mean Start found, as a failed
	// Start does.
	SampleMeanBytes int64
	// MaxBuckets bounds the profiler's memory, in distinct (stack, type,
	// labels) rows; default 16384 (about 10 MiB with 64-frame stacks).
	// Past the bound, new rows go to one overflow row per type and mean,
	// whose stack is a single synthetic frame, so totals still hold them.
	MaxBuckets int
	// MaxConcurrentBuilds bounds the profiles that the handlers mounted on
	// Mux and Session.Handler build at once, all together; default 1. A
	// request past the bound waits up to a second for its turn, then gets
	// 429 Too Many Requests.
	MaxConcurrentBuilds int
	// Logger receives the agent's warnings; when nil, persistent upload
	// failures are logged through slog.Default at most once a minute.
	Logger *slog.Logger
}

// Router is what [Config.Mux] takes: anything that registers a handler for
// an exact path, as *http.ServeMux and chi.Router do. gorilla/mux's
// *mux.Router returns a *mux.Route from Handle; wrap it:
//
//	type gorillaRouter struct{ *mux.Router }
//
//	func (g gorillaRouter) Handle(path string, h http.Handler) { g.Router.Handle(path, h) }
//
//	arenaprof.Config{Mux: gorillaRouter{r}}
type Router interface {
	Handle(pattern string, handler http.Handler)
}

// Session is what [Start] set up. Stop it with [Session.Stop].
type Session struct {
	prof     *profiler.Profiler
	handler  http.Handler
	agent    *agent.Agent
	stopOnce sync.Once
	stopErr  error

	desc string // names the session in the error of a second Start
	// stopWatch ends the session's watch of the RSS for its peak;
	// removeNear removes its near-limit hook (with Config.Dir).
	stopWatch, removeNear func()
	// Start set the sampling mean to mean, from prevMean; Stop restores
	// prevMean while the mean is still the one Start set.
	meanSet        bool
	mean, prevMean int64
}

// running is the session that Start set up (or is setting up) and Stop has
// not stopped: one at a time (see Start).
var (
	runningMu sync.Mutex
	running   *Session
)

// Start turns arena profiling on and sets up what cfg asks for, in one call:
// a profiler (which turns sampling on, at cfg.SampleMeanBytes), the profile
// handlers on cfg.Mux, and an agent pushing cfg.Profiles every interval to
// Pyroscope, OTLP and/or a directory.
// Start is all or nothing: it checks that every path is free on cfg.Mux
// before it mounts any, and on error nothing is left mounted or running
// and the sampling mean is as it was. Its errors are one line.
//
// One session runs at a time: the sampling mean and the profiler's
// consumer are process-wide, and two sessions would change each other's
// mean. A Start while a session runs returns an error that names it (its
// AppName, when and where it was started); Stop it first.
//
//	s, err := arenaprof.Start(arenaprof.Config{
//		AppName:      "shop",
//		Mux:          http.DefaultServeMux,
//		PyroscopeURL: "http://pyroscope:4040",
//	})
//	if err != nil {
//		log.Fatal(err)
//	}
//	// ... serve; on shutdown, after http.Server.Shutdown:
//	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
//	defer cancel()
//	err = s.Stop(ctx) // uploads the last interval
//
// examples/shutdown is a complete service that stops this way.
func Start(cfg Config) (*Session, error) {
	s := &Session{desc: describe(cfg)}
	runningMu.Lock()
	if r := running; r != nil {
		runningMu.Unlock()
		return nil, fmt.Errorf("arenaprof: Start: a session is running already (%s): Stop it first", r.desc)
	}
	running = s // taken while start runs, which may call s.Stop on failure
	runningMu.Unlock()
	if err := start(cfg, s); err != nil {
		runningMu.Lock()
		if running == s {
			running = nil
		}
		runningMu.Unlock()
		return nil, oneLine{err}
	}
	return s, nil
}

// describe names the session Start is starting, for the error of a second
// Start: its AppName, the time and Start's caller.
func describe(cfg Config) string {
	d := "without AppName"
	if cfg.AppName != "" {
		d = fmt.Sprintf("AppName %q", cfg.AppName)
	}
	d += ", started at " + time.Now().UTC().Format(time.DateTime) + " UTC"
	// 0 is describe, 1 Start, 2 Start's caller.
	if pc, file, line, ok := runtime.Caller(2); ok {
		fn := "?"
		if f := runtime.FuncForPC(pc); f != nil {
			fn = f.Name()
		}
		d += fmt.Sprintf(" by %s (%s:%d)", fn, filepath.Base(file), line)
	}
	return d
}

// start sets up what cfg asks for into s. On error, nothing is left
// running and the mean is as it was.
func start(cfg Config, s *Session) (err error) {
	mux := routerOf(cfg.Mux)
	if mux != nil {
		for _, path := range []string{handlerPath, memoryHandlerPath, arenasHandlerPath, peakHandlerPath, rssHandlerPath, uiHandlerPath, statsHandlerPath} {
			if taken(mux, path) {
				return fmt.Errorf("arenaprof: cannot mount on Config.Mux: %s is already registered", path)
			}
		}
	}
	if cfg.MaxConcurrentBuilds < 0 {
		return fmt.Errorf("arenaprof: Config.MaxConcurrentBuilds is %d: want 0 (the default) or more", cfg.MaxConcurrentBuilds)
	}
	pc := cfg.Pyroscope
	if pc == nil && cfg.PyroscopeURL != "" {
		pc = &agent.PyroscopeConfig{URL: cfg.PyroscopeURL}
	}
	oc := cfg.OTLP
	if oc == nil && cfg.OTLPURL != "" {
		oc = &agent.OTLPConfig{URL: cfg.OTLPURL}
	}
	if cfg.AppName == "" && oc != nil {
		cfg.AppName = os.Getenv("OTEL_SERVICE_NAME")
	}
	if (pc != nil || oc != nil || cfg.Dir != "") && cfg.AppName == "" {
		return errors.New("arenaprof: Config.AppName is required to upload profiles (PyroscopeURL, Pyroscope, OTLPURL, OTLP or Dir; with OTLP, OTEL_SERVICE_NAME will do)")
	}
	if cfg.SampleMeanBytes < 0 {
		return fmt.Errorf("arenaprof: Config.SampleMeanBytes is %d: want 0 (the mean in force) or more", cfg.SampleMeanBytes)
	}
	uploads, err := sourcesOf(cfg.Profiles)
	if err != nil {
		return err
	}
	var opts []profiler.Option
	if cfg.MaxBuckets != 0 {
		opts = append(opts, profiler.WithMaxBuckets(cfg.MaxBuckets))
	}
	var uploaders []agent.Uploader
	var dir agent.Uploader
	if pc != nil {
		py, err := agent.NewPyroscope(*pc)
		if err != nil && cfg.Pyroscope == nil {
			return fmt.Errorf("arenaprof: Config.PyroscopeURL: %w", err)
		}
		if err != nil {
			return fmt.Errorf("arenaprof: %w", err)
		}
		uploaders = append(uploaders, py)
	}
	if oc != nil {
		o, err := agent.NewOTLP(*oc)
		if err != nil && cfg.OTLP == nil {
			return fmt.Errorf("arenaprof: Config.OTLPURL: %w", err)
		}
		if err != nil {
			return fmt.Errorf("arenaprof: %w", err)
		}
		uploaders = append(uploaders, o)
	}
	if cfg.Dir != "" {
		d, err := agent.NewDir(agent.DirConfig{Path: cfg.Dir})
		if err != nil {
			return fmt.Errorf("arenaprof: %w", err)
		}
		uploaders = append(uploaders, d)
		dir = d
	}
	if cfg.SampleMeanBytes != 0 {
		prev := hooks.MeanBytes()
		if err := hooks.SetMeanBytes(cfg.SampleMeanBytes); err != nil {
			return fmt.Errorf("arenaprof: Config.SampleMeanBytes: %w", err)
		}
		defer func() {
			if err != nil {
				hooks.SetMeanBytes(prev)
			}
		}()
		s.meanSet, s.mean, s.prevMean = true, cfg.SampleMeanBytes, prev
	}
	p, err := profiler.Start(opts...)
	if err != nil {
		return fmt.Errorf("arenaprof: %w", err)
	}
	limit := buildlimit.New(cfg.MaxConcurrentBuilds)
	s.prof, s.handler = p, buildlimit.Share(limit, export.Handler(p))
	if len(uploaders) > 0 {
		sources := make([]agent.Source, len(uploads))
		for i, name := range uploads {
			sources[i] = profileSources[name](p)
		}
		s.agent, err = agent.Start(agent.Config{
			AppName:   cfg.AppName,
			Labels:    cfg.Labels,
			Interval:  cfg.Interval,
			Sources:   sources,
			Uploaders: uploaders,
			Logger:    cfg.Logger,
		})
		if err != nil {
			p.Stop()
			return fmt.Errorf("arenaprof: %w", err)
		}
	}
	s.stopWatch = rss.Watch()
	if dir != nil {
		s.removeNear = rss.OnNearLimit(nearLimitWriter(cfg, dir))
	}
	if mux != nil {
		if err := mount(mux, withGoroutineLeak(mux, map[string]http.Handler{
			handlerPath:       s.handler,
			memoryHandlerPath: buildlimit.Share(limit, export.MemoryHandler(p)),
			arenasHandlerPath: buildlimit.Share(limit, export.ArenasHandler()),
			peakHandlerPath:   buildlimit.Share(limit, export.PeakHandler(p)),
			rssHandlerPath:    buildlimit.Share(limit, export.RSSHandler()),
			uiHandlerPath:     buildlimit.Share(limit, export.UIHandler(p)), // the live page
			statsHandlerPath:  s.statsHandler(),
		})); err != nil {
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // nothing was profiled for an upload to wait for
			s.Stop(ctx)
			return err
		}
	}
	return nil
}

// nearLimitWriter returns the hook that writes each new peak of RSS near
// a limit (90% of GOMEMLIMIT or of the cgroup's memory.max) to
// Config.Dir as an "rss" profile, before an OOM kill can come.
func nearLimitWriter(cfg Config, dir agent.Uploader) func(*rss.Peak, int64, string) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return func(p *rss.Peak, limit int64, what string) {
		prof, err := rss.NearLimitProfile(p, limit, what)
		if err == nil {
			var buf bytes.Buffer
			if err = prof.Write(&buf); err == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				err = dir.Upload(ctx, &agent.Upload{AppName: cfg.AppName, Labels: cfg.Labels, Profile: "rss",
					From: p.Since, Until: p.Reading.Time, Data: buf.Bytes()})
				cancel()
			}
		}
		if err != nil {
			logger.Warn("arenaprof: writing the resident-memory profile near the limit", "limit", what, "error", err)
		}
	}
}

// profileSources makes the agent's source of each name Config.Profiles
// accepts, in the order the default uploads them.
var profileSources = map[string]func(*profiler.Profiler) agent.Source{
	"arena":  func(p *profiler.Profiler) agent.Source { return agent.ProfilerSource(p) },
	"arenas": func(*profiler.Profiler) agent.Source { return agent.ArenasSource() },
	"peak":   func(p *profiler.Profiler) agent.Source { return agent.PeakSource(p) },
	"heap":   func(*profiler.Profiler) agent.Source { return agent.HeapSource() },
	"wall":   func(*profiler.Profiler) agent.Source { return agent.WallSource() },
	"cpu":    func(*profiler.Profiler) agent.Source { return agent.CPUSource() },
	"rss":    func(*profiler.Profiler) agent.Source { return agent.RSSSource() },
}

// defaultProfiles is what an empty Config.Profiles uploads: the memory
// profiles (see Config.Profiles for why "wall" and "cpu" are not).
var defaultProfiles = []string{"arena", "arenas", "peak", "heap"}

// sourcesOf checks the names of Config.Profiles and returns them, or the
// default when there are none.
func sourcesOf(names []string) ([]string, error) {
	if len(names) == 0 {
		return defaultProfiles, nil
	}
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if profileSources[n] == nil {
			return nil, fmt.Errorf("arenaprof: Config.Profiles: unknown profile %q (known: %s)", n, strings.Join(append(slices.Clone(defaultProfiles), "wall", "cpu", "rss"), ", "))
		}
		if seen[n] {
			return nil, fmt.Errorf("arenaprof: Config.Profiles names %q twice", n)
		}
		seen[n] = true
	}
	return names, nil
}

// routerOf returns m, or nil when m is nil or holds a nil pointer (a nil
// *http.ServeMux meant "no Mux" when the field had that type).
func routerOf(m Router) Router {
	if m == nil {
		return nil
	}
	if v := reflect.ValueOf(m); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return m
}

// handlerFinder is the method of *http.ServeMux (and of routers like it)
// that tells which pattern serves a request.
type handlerFinder interface {
	Handler(r *http.Request) (h http.Handler, pattern string)
}

// taken reports whether mux has a handler registered for exactly path,
// for every method and host: registering path again would panic. The
// lookup uses a method no pattern names, so that patterns with a method
// ("GET /debug/arenaprof"), which do not conflict with path, are not
// mistaken for it; a request without a host matches no host pattern. A
// router without ServeMux's Handler method cannot be asked: its paths
// count as free.
func taken(mux Router, path string) bool {
	f, ok := mux.(handlerFinder)
	if !ok {
		return false
	}
	_, pattern := f.Handler(&http.Request{Method: "ARENAPROF-PROBE", URL: &url.URL{Path: path}, Host: ""})
	return pattern == path
}

// mount registers the handlers on mux by path, in the order of the paths.
// Start checked that every path is free; a panic here means another
// goroutine registered one of them meanwhile, or a router Start could not
// check refused one.
func mount(mux Router, handlers map[string]http.Handler) (err error) {
	var path string
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("arenaprof: cannot mount on Config.Mux at %s: %v", path, r)
		}
	}()
	for path := range handlers { // those Start did not check, all before any is mounted
		if taken(mux, path) {
			return fmt.Errorf("arenaprof: cannot mount on Config.Mux: %s is already registered", path)
		}
	}
	for _, path = range slices.Sorted(maps.Keys(handlers)) {
		mux.Handle(path, handlers[path])
	}
	return nil
}

// oneLine is an error whose message is on one line (a ServeMux panic or
// a wrapped error may span several), keeping the error it wraps: its
// lines are joined by "; ", or by a space after a line that ends in ":"
// (which introduces the next), and runs of white space become one space.
type oneLine struct{ err error }

func (e oneLine) Error() string {
	var b strings.Builder
	for line := range strings.Lines(e.err.Error()) {
		line = strings.Join(strings.Fields(line), " ")
		if line == "" {
			continue
		}
		if b.Len() > 0 {
			if strings.HasSuffix(b.String(), ":") {
				b.WriteByte(' ')
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(line)
	}
	return b.String()
}

func (e oneLine) Unwrap() error { return e.err }

// Profiler returns the session's profiler, for export.Write or
// profiler.Delta.
func (s *Session) Profiler() *profiler.Profiler { return s.prof }

// Handler returns the session's profile handler (export.Handler), for
// mounting on a mux other than Config.Mux. It shares the bound of
// Config.MaxConcurrentBuilds with the handlers mounted on Config.Mux.
func (s *Session) Handler() http.Handler { return s.handler }

// Stop uploads the last partial interval, drains the upload queues within
// ctx's deadline (10 s when ctx has none; see agent.Agent.Stop) and turns
// the profiler off. A handler mounted on
// Config.Mux keeps serving the profile up to Stop. Calling Stop more than
// once returns the first call's result.
//
// Stop undoes what Start changed in the process: the sampling mean goes
// back to the one Start found (unless it was changed again since Start,
// by hooks.SetMeanBytes: then the later change stays), and a new Start
// may run. The handlers stay mounted on Config.Mux (an http.ServeMux
// cannot remove them), so a later Start needs another Mux.
func (s *Session) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() {
		if s.agent != nil {
			s.stopErr = s.agent.Stop(ctx)
		}
		if s.prof != nil {
			s.prof.Stop()
		}
		if s.removeNear != nil {
			s.removeNear()
		}
		if s.stopWatch != nil {
			s.stopWatch()
		}
		if s.meanSet && hooks.MeanBytes() == s.mean {
			hooks.SetMeanBytes(s.prevMean)
		}
		runningMu.Lock()
		if running == s {
			running = nil
		}
		runningMu.Unlock()
	})
	return s.stopErr
}
