package arenaprof

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/export/agent"
	"github.com/arenaprof/arenaprof/internal/buildlimit"
	"github.com/arenaprof/arenaprof/profiler"
)

// HandlerPath is where [Start] mounts the profile handler on Config.Mux,
// beside net/http/pprof's /debug/pprof/, and MemoryHandlerPath where it
// mounts the handler of the profile of all memory, arenas and Go heap
// (export.MemoryHandler).
const (
	HandlerPath       = "/debug/arenaprof"
	MemoryHandlerPath = "/debug/arenaprof/memory"
)

// ArenasHandlerPath is where [Start] mounts the handler of the live-arenas
// profile (export.ArenasHandler): where arena memory is held now; and
// PeakHandlerPath the handler of the peak profile (export.PeakHandler):
// the in-use profile at the highest estimated live arena bytes.
const (
	ArenasHandlerPath = "/debug/arenaprof/arenas"
	PeakHandlerPath   = "/debug/arenaprof/peak"
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

	// Mux, if not nil, gets the profile handler at HandlerPath
	// (go tool pprof http://host/debug/arenaprof), the handler of the
	// profile of all memory, arenas and Go heap, at MemoryHandlerPath, and
	// the handlers of the live-arenas profile at ArenasHandlerPath and of
	// the peak profile at PeakHandlerPath.
	Mux *http.ServeMux

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
	// timeout, use OTLP instead.
	OTLPURL string
	// OTLP is the full configuration of the OTLP destination; it takes
	// precedence over OTLPURL. What it leaves unset comes from the standard
	// OTEL_EXPORTER_OTLP_* variables (see agent.OTLPConfig); so
	// &agent.OTLPConfig{} sends to OTEL_EXPORTER_OTLP_ENDPOINT.
	OTLP *agent.OTLPConfig

	// Dir, if set, writes profiles into this directory (created if
	// missing), keeping at most agent.DefaultDirMaxFiles files.
	Dir string

	// Interval between uploads; default agent.DefaultInterval (15 s).
	Interval time.Duration
	// NoRuntimeProfiles leaves out the Go runtime's profiles (CPU, heap)
	// and the wall-clock profile, which are otherwise uploaded beside the
	// arena profiles (allocations, live arenas and the peak).
	NoRuntimeProfiles bool
	// MaxBuckets bounds the profiler's memory; default
	// 16384 (see profiler.WithMaxBuckets).
	MaxBuckets int
	// MaxConcurrentBuilds bounds the profiles that the handlers mounted on
	// Mux and Session.Handler build at once, all together; default 1. A
	// request past the bound waits up to a second for its turn, then gets
	// 429 Too Many Requests (see export.Handler).
	MaxConcurrentBuilds int
	// Logger receives the agent's warnings; when nil, persistent upload
	// failures are logged through slog.Default at most once a minute.
	Logger *slog.Logger
}

// Session is what [Start] set up. Stop it with [Session.Stop].
type Session struct {
	prof     *profiler.Profiler
	handler  http.Handler
	agent    *agent.Agent
	stopOnce sync.Once
	stopErr  error
}

// Start turns arena profiling on and sets up what cfg asks for, in one call:
// a profiler (which turns sampling on, at the mean hooks.SetMeanBytes set,
// by default 102400 bytes), the profile handler on cfg.Mux, and an
// agent pushing a profile every interval to Pyroscope, OTLP and/or a
// directory.
// Start is all or nothing: it checks that both paths are free on cfg.Mux
// before it mounts either, and on error nothing is left mounted or running.
// Its errors are one line.
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
	s, err := start(cfg)
	if err != nil {
		return nil, oneLine{err}
	}
	return s, nil
}

func start(cfg Config) (*Session, error) {
	if cfg.Mux != nil {
		for _, path := range []string{HandlerPath, MemoryHandlerPath, ArenasHandlerPath, PeakHandlerPath} {
			if taken(cfg.Mux, path) {
				return nil, fmt.Errorf("arenaprof: cannot mount on Config.Mux: %s is already registered", path)
			}
		}
	}
	if cfg.MaxConcurrentBuilds < 0 {
		return nil, fmt.Errorf("arenaprof: Config.MaxConcurrentBuilds is %d: want 0 (the default) or more", cfg.MaxConcurrentBuilds)
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
		return nil, errors.New("arenaprof: Config.AppName is required to upload profiles (PyroscopeURL, Pyroscope, OTLPURL, OTLP or Dir; with OTLP, OTEL_SERVICE_NAME will do)")
	}
	var opts []profiler.Option
	if cfg.MaxBuckets != 0 {
		opts = append(opts, profiler.WithMaxBuckets(cfg.MaxBuckets))
	}
	var uploaders []agent.Uploader
	if pc != nil {
		py, err := agent.NewPyroscope(*pc)
		if err != nil {
			return nil, fmt.Errorf("arenaprof: %w", err)
		}
		uploaders = append(uploaders, py)
	}
	if oc != nil {
		o, err := agent.NewOTLP(*oc)
		if err != nil {
			return nil, fmt.Errorf("arenaprof: %w", err)
		}
		uploaders = append(uploaders, o)
	}
	if cfg.Dir != "" {
		d, err := agent.NewDir(agent.DirConfig{Path: cfg.Dir})
		if err != nil {
			return nil, fmt.Errorf("arenaprof: %w", err)
		}
		uploaders = append(uploaders, d)
	}
	p, err := profiler.Start(opts...)
	if err != nil {
		return nil, fmt.Errorf("arenaprof: %w", err)
	}
	limit := buildlimit.New(cfg.MaxConcurrentBuilds)
	s := &Session{prof: p, handler: buildlimit.Share(limit, export.Handler(p))}
	if len(uploaders) > 0 {
		sources := []agent.Source{agent.ProfilerSource(p), agent.ArenasSource(), agent.PeakSource(p)}
		if !cfg.NoRuntimeProfiles {
			sources = append(sources, agent.CPUSource(), agent.HeapSource(), agent.WallSource())
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
			return nil, fmt.Errorf("arenaprof: %w", err)
		}
	}
	if cfg.Mux != nil {
		if err := mount(cfg.Mux, map[string]http.Handler{
			HandlerPath:       s.handler,
			MemoryHandlerPath: buildlimit.Share(limit, export.MemoryHandler(p)),
			ArenasHandlerPath: buildlimit.Share(limit, export.ArenasHandler()),
			PeakHandlerPath:   buildlimit.Share(limit, export.PeakHandler(p)),
		}); err != nil {
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // nothing was profiled for an upload to wait for
			s.Stop(ctx)
			return nil, err
		}
	}
	return s, nil
}

// taken reports whether mux has a handler registered for exactly path,
// for every method and host: registering path again would panic. The
// lookup uses a method no pattern names, so that patterns with a method
// ("GET /debug/arenaprof"), which do not conflict with path, are not
// mistaken for it; a request without a host matches no host pattern.
func taken(mux *http.ServeMux, path string) bool {
	_, pattern := mux.Handler(&http.Request{Method: "ARENAPROF-PROBE", URL: &url.URL{Path: path}, Host: ""})
	return pattern == path
}

// mount registers the handlers on mux by path, in the order of the paths.
// Start checked that every path is free; a panic here means another
// goroutine registered one of them meanwhile.
func mount(mux *http.ServeMux, handlers map[string]http.Handler) (err error) {
	var path string
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("arenaprof: cannot mount on Config.Mux at %s: %v", path, r)
		}
	}()
	for _, path = range slices.Sorted(maps.Keys(handlers)) {
		mux.Handle(path, handlers[path])
	}
	return nil
}

// oneLine is an error whose message is on one line (a ServeMux panic or
// a wrapped error may span several), keeping the error it wraps.
type oneLine struct{ err error }

func (e oneLine) Error() string {
	return strings.Join(strings.Fields(strings.ReplaceAll(e.err.Error(), "\n", "; ")), " ")
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
func (s *Session) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() {
		if s.agent != nil {
			s.stopErr = s.agent.Stop(ctx)
		}
		s.prof.Stop()
	})
	return s.stopErr
}
