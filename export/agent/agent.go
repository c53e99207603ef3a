package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofenc"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// Defaults and bounds of Config, documented on its fields.
const (
	defaultInterval      = 15 * time.Second
	defaultTimeout       = 10 * time.Second
	defaultDrainTimeout  = 10 * time.Second
	defaultMaxRetryTime  = 2 * time.Minute
	defaultQueueSize     = 20
	defaultBackoffBase   = time.Second
	defaultBackoffMax    = 30 * time.Second
	defaultRetryAfterMax = time.Minute

	minInterval     = time.Millisecond
	maxInterval     = 24 * time.Hour
	maxQueueSize    = 1 << 16
	maxRetriesLimit = 100
	maxLabels       = 64
)

// Source produces one kind of profile, one interval at a time.
//
// A Source may also have a method
//
//	Start(ctx context.Context) error
//
// which [Start] calls once before the first interval begins (to begin
// recording or take a baseline; an error fails Start), and implement
// io.Closer, whose Close [Agent.Stop] calls once after the last Collect (to
// release a running profiler). The agent calls these methods and Collect
// from one goroutine, never concurrently.
type Source interface {
	// Name says what the profile holds ("arena", "wall", "cpu", "heap"). It is
	// used in file names and, for a memory profile, as the value of the
	// Pyroscope series label memory (see [NewPyroscope]), so it must match
	// [a-z0-9_]{1,32} and be unique within a Config.
	Name() string
	// Collect returns the profile of the interval that ends now and began at
	// the previous Collect (or at Start). A nil profile with a nil error means
	// "nothing to report for this interval". Collect must return promptly
	// once ctx is done.
	Collect(ctx context.Context) (*profile.Profile, error)
}

// starter is implemented by sources that must begin recording (or take a
// baseline) when the agent starts (see [Source]).
type starter interface {
	Start(ctx context.Context) error
}

// Config says what the agent collects, how often, and where it sends it.
// The zero value of every optional field selects its default.
type Config struct {
	// AppName names the service (required, valid UTF-8). Destinations
	// sanitise it as their format needs.
	AppName string
	// Labels are attached to every profile (e.g. env, region, version,
	// pod), at most 64. Pyroscope uploads of memory profiles set the label
	// memory themselves (see [NewPyroscope]).
	// Keys match [A-Za-z_][A-Za-z0-9_]* and must not start with "__"
	// (reserved by Pyroscope); values are non-empty valid UTF-8 and may
	// hold any character: each destination escapes or replaces what its
	// format cannot carry.
	Labels map[string]string
	// Interval between collections; default 15 s, at least 1 ms and at
	// most 24 h.
	Interval time.Duration
	// Sources are the profiles to collect each interval (at least one).
	Sources []Source
	// Uploaders are the destinations (at least one). Each has its own queue
	// and upload goroutine, so a slow destination never delays another.
	Uploaders []Uploader
	// Timeout bounds one upload attempt; default 10 s. An
	// attempt that times out after its request was sent is counted
	// unconfirmed (see [DestinationStats]) and not retried.
	Timeout time.Duration
	// DrainTimeout bounds how long [Agent.Stop] spends collecting the
	// last interval and delivering what is queued when its context has no
	// deadline; default 10 s. A context with a deadline
	// sets the bound instead.
	DrainTimeout time.Duration
	// MaxRetryTime bounds how long one profile is retried, from its first
	// attempt: retryable errors (network errors before the request was
	// sent, 5xx, 429, an unhealthy Pyroscope ring) are retried with
	// backoff until then, so a server that is down for less than this
	// loses nothing while the queue has room. Default 2 min.
	MaxRetryTime time.Duration
	// MaxRetries, if positive, also bounds the number of retries of one
	// profile (at most 100); zero sets no count bound (only
	// MaxRetryTime); a negative value disables retries.
	MaxRetries int
	// QueueSize bounds the profiles waiting for upload per destination;
	// when it is full the oldest one is dropped. Default 20, at most
	// 65536.
	QueueSize int
	// BackoffBase and BackoffMax shape the exponential backoff with full
	// jitter between retries: attempt n waits a uniform random time in
	// [0, min(BackoffMax, BackoffBase*2^n)). Defaults 1 s and 30 s.
	BackoffBase, BackoffMax time.Duration
	// RetryAfterMax caps the wait a server asks for with Retry-After;
	// default 1 min.
	RetryAfterMax time.Duration
	// Logger receives a warning about every failed collection and
	// upload. When it is nil, failures that persist (a profile given up,
	// dropped or unconfirmed, a third failed attempt in a row, a failed
	// collection) are reported through slog.Default(), at most once a
	// minute, so that a wrong URL is never silent. Messages never hold
	// credentials.
	Logger *slog.Logger

	// warnEvery and defaultLogger replace the minute and slog.Default in
	// tests.
	warnEvery     time.Duration
	defaultLogger func() *slog.Logger
}

var (
	sourceNameRE = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)
	labelKeyRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
)

// validate checks c and returns a copy with the defaults filled in.
func (c Config) validate() (Config, error) {
	if c.AppName == "" {
		return c, errors.New("agent: Config.AppName is required")
	}
	if !utf8.ValidString(c.AppName) || len(c.AppName) > 256 {
		return c, errors.New("agent: Config.AppName must be valid UTF-8 of at most 256 bytes")
	}
	if len(c.Labels) > maxLabels {
		return c, fmt.Errorf("agent: Config.Labels has %d entries, at most %d allowed", len(c.Labels), maxLabels)
	}
	for k, v := range c.Labels {
		if !labelKeyRE.MatchString(k) {
			return c, fmt.Errorf("agent: label key %q must match [A-Za-z_][A-Za-z0-9_]* (at most 64 bytes)", k)
		}
		if len(k) >= 2 && k[:2] == "__" {
			return c, fmt.Errorf("agent: label key %q: keys starting with \"__\" are reserved", k)
		}
		if v == "" || !utf8.ValidString(v) || len(v) > 1024 {
			return c, fmt.Errorf("agent: label %q must have a non-empty valid UTF-8 value of at most 1024 bytes", k)
		}
	}
	c.Labels = maps.Clone(c.Labels)
	if c.Labels == nil {
		c.Labels = map[string]string{}
	}
	switch {
	case c.Interval == 0:
		c.Interval = defaultInterval
	case c.Interval < minInterval || c.Interval > maxInterval:
		return c, fmt.Errorf("agent: Config.Interval %v outside [%v, %v]", c.Interval, minInterval, maxInterval)
	}
	if len(c.Sources) == 0 {
		return c, errors.New("agent: Config.Sources is empty: name at least one profile to collect (e.g. agent.WallSource())")
	}
	seen := map[string]bool{}
	for i, s := range c.Sources {
		if s == nil {
			return c, fmt.Errorf("agent: Config.Sources[%d] is nil", i)
		}
		n := s.Name()
		if !sourceNameRE.MatchString(n) {
			return c, fmt.Errorf("agent: source name %q must match [a-z0-9_]{1,32}", n)
		}
		if seen[n] {
			return c, fmt.Errorf("agent: two sources are named %q", n)
		}
		seen[n] = true
	}
	if len(c.Uploaders) == 0 {
		return c, errors.New("agent: Config.Uploaders is empty: give at least one destination (e.g. agent.NewDir)")
	}
	for i, u := range c.Uploaders {
		if u == nil {
			return c, fmt.Errorf("agent: Config.Uploaders[%d] is nil", i)
		}
	}
	if err := defaultDuration(&c.Timeout, defaultTimeout, "Timeout"); err != nil {
		return c, err
	}
	if err := defaultDuration(&c.DrainTimeout, defaultDrainTimeout, "DrainTimeout"); err != nil {
		return c, err
	}
	if err := defaultDuration(&c.MaxRetryTime, defaultMaxRetryTime, "MaxRetryTime"); err != nil {
		return c, err
	}
	switch {
	case c.MaxRetries < 0:
		c.MaxRetries = -1
	case c.MaxRetries > maxRetriesLimit:
		return c, fmt.Errorf("agent: Config.MaxRetries %d above %d", c.MaxRetries, maxRetriesLimit)
	}
	switch {
	case c.QueueSize == 0:
		c.QueueSize = defaultQueueSize
	case c.QueueSize < 0 || c.QueueSize > maxQueueSize:
		return c, fmt.Errorf("agent: Config.QueueSize %d outside [1, %d]", c.QueueSize, maxQueueSize)
	}
	if err := defaultDuration(&c.BackoffBase, defaultBackoffBase, "BackoffBase"); err != nil {
		return c, err
	}
	if err := defaultDuration(&c.BackoffMax, defaultBackoffMax, "BackoffMax"); err != nil {
		return c, err
	}
	if c.BackoffMax < c.BackoffBase {
		return c, fmt.Errorf("agent: Config.BackoffMax %v below BackoffBase %v", c.BackoffMax, c.BackoffBase)
	}
	if err := defaultDuration(&c.RetryAfterMax, defaultRetryAfterMax, "RetryAfterMax"); err != nil {
		return c, err
	}
	if c.warnEvery == 0 {
		c.warnEvery = time.Minute
	}
	if c.defaultLogger == nil {
		c.defaultLogger = slog.Default
	}
	return c, nil
}

// defaultDuration fills a zero duration with def and rejects negative ones
// and ones above a day.
func defaultDuration(d *time.Duration, def time.Duration, name string) error {
	switch {
	case *d == 0:
		*d = def
	case *d < 0 || *d > 24*time.Hour:
		return fmt.Errorf("agent: Config.%s %v outside (0, 24h]", name, *d)
	}
	return nil
}

// Agent collects profiles periodically and hands them to its destinations.
// Create one with [Start]; stop it with [Agent.Stop].
type Agent struct {
	cfg   Config
	dests []*dest
	// parsed is set when an uploader reads the parsed profile (see
	// parsedReader), which uploads then carry besides their bytes.
	parsed bool

	// sizeMu guards the writer, each source's last encoded size and
	// sample types (see encode and sampleTypes).
	sizeMu   sync.Mutex
	writer   pprofenc.Writer
	lastSize map[string]int
	types    map[string]sourceTypes

	collected     atomic.Uint64
	collectErrors atomic.Uint64
	// lastSkipped is set when Stop's time ran out before every source
	// was collected for the last interval.
	lastSkipped atomic.Bool

	stopReq       chan context.Context
	collectorDone chan struct{}
	// stamps holds, per source (by index in cfg.Sources), the millisecond
	// of its last profile's TimeNanos; read and written by the collect
	// loop alone (see laterStamp).
	stamps        []int64
	uploadCtx     context.Context
	cancelUploads context.CancelFunc

	// mu guards the fields below and every counter increment, so that
	// once final is set (when Stop returns) no counter changes and no new
	// call to a source or an uploader begins.
	mu    sync.Mutex
	final bool
	busy  map[string]int // calls in flight to sources and uploaders, by description
	warn  warnState

	stopOnce sync.Once
	stopErr  error
}

// warnState rate-limits the warnings sent to slog.Default when
// Config.Logger is nil.
type warnState struct {
	last       time.Time // of the last warning sent
	suppressed int       // warnings not sent since
}

// Start validates cfg, starts every source that has a Start method and
// begins collecting. It returns an error, and leaves nothing running, when
// the config is invalid or a source cannot start (for example a CPU
// profile that is already running in the process).
func Start(cfg Config) (*Agent, error) {
	cfg, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	a := &Agent{
		cfg:           cfg,
		stopReq:       make(chan context.Context, 1),
		collectorDone: make(chan struct{}),
		stamps:        make([]int64, len(cfg.Sources)),
		busy:          map[string]int{},
	}
	ctx := context.Background()
	for i, s := range cfg.Sources {
		st, ok := s.(starter)
		if !ok {
			continue
		}
		if err := st.Start(ctx); err != nil {
			a.closeSources(cfg.Sources[:i])
			return nil, fmt.Errorf("agent: starting source %q: %w", s.Name(), err)
		}
	}
	a.uploadCtx, a.cancelUploads = context.WithCancel(context.Background())
	for _, u := range cfg.Uploaders {
		d := &dest{up: u, name: uploaderName(u), cap: cfg.QueueSize, notify: make(chan struct{}, 1), done: make(chan struct{})}
		if _, ok := u.(parsedReader); ok {
			a.parsed = true
		}
		a.dests = append(a.dests, d)
		go a.uploadLoop(d)
	}
	go a.collectLoop(time.Now())
	return a, nil
}

// logf reports a problem. With a Logger, every problem is logged at level
// (persistent or not); without one, only persistent problems are, through
// slog.Default, at most once per Config.warnEvery.
func (a *Agent) logf(level slog.Level, persistent bool, msg string, args ...any) {
	if a.cfg.Logger != nil {
		a.cfg.Logger.Log(context.Background(), level, msg, args...)
		return
	}
	if !persistent {
		return
	}
	a.mu.Lock()
	now := time.Now()
	if !a.warn.last.IsZero() && now.Sub(a.warn.last) < a.cfg.warnEvery {
		a.warn.suppressed++
		a.mu.Unlock()
		return
	}
	suppressed := a.warn.suppressed
	a.warn.last, a.warn.suppressed = now, 0
	a.mu.Unlock()
	args = append(args, "similar_warnings_suppressed", suppressed,
		"note", fmt.Sprintf("set arenaprof's Logger to see every warning; without one, at most one is logged per %v", a.cfg.warnEvery))
	a.cfg.defaultLogger().Warn(msg, args...)
}

// enter records the start of a call to a source or an uploader. It
// returns false, and the call must not be made, once Stop has returned.
func (a *Agent) enter(what string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.final {
		return false
	}
	a.busy[what]++
	return true
}

// leave records the end of a call begun with enter.
func (a *Agent) leave(what string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.busy[what]--; a.busy[what] <= 0 {
		delete(a.busy, what)
	}
}

// count runs fn, which changes counters, unless Stop has returned; the
// counters are final from then on.
func (a *Agent) count(fn func()) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.final {
		return false
	}
	fn()
	return true
}

func (a *Agent) closeSources(srcs []Source) {
	for _, s := range srcs {
		if c, ok := s.(io.Closer); ok {
			if err := c.Close(); err != nil {
				a.logf(slog.LevelWarn, true, "arenaprof agent: closing source", "source", s.Name(), "err", err)
			}
		}
	}
}

func uploaderName(u Uploader) string {
	if s, ok := u.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", u)
}

// Stop collects the last, partial interval, hands it to the destinations
// and waits for their queues to drain, within ctx's deadline, or within
// Config.DrainTimeout when ctx has none (so Stop(context.Background())
// returns within about DrainTimeout even when a server never answers).
// Retries go on while that time lasts.
//
// When the time runs out (or ctx is cancelled) first, uploads in flight
// are cancelled and what is still queued or in flight is counted as
// dropped; Stop then returns an error wrapping context.DeadlineExceeded or
// ctx.Err() that says how many profiles were not delivered, and names any
// source or uploader that did not return within a short grace after the
// cancellation. In every case, when Stop returns, the counters of
// [Agent.Stats] are final and no new call to a source or an uploader
// begins; a call that ignored the cancellation is left to return on its
// own (its result is discarded, and the source or uploader is closed
// then). A nil error means every profile reached a final count (uploaded,
// failed, unconfirmed or dropped), not that all were uploaded: read
// [Agent.Stats]. Calling Stop again returns the first result.
func (a *Agent) Stop(ctx context.Context) error {
	a.stopOnce.Do(func() { a.stopErr = a.stop(ctx) })
	return a.stopErr
}

func (a *Agent) stop(ctx context.Context) error {
	var drainCtx context.Context
	var cancel context.CancelFunc
	_, hasDeadline := ctx.Deadline()
	if hasDeadline {
		drainCtx, cancel = context.WithCancel(ctx)
	} else {
		drainCtx, cancel = context.WithTimeout(ctx, a.cfg.DrainTimeout)
	}
	defer cancel()
	droppedBefore := a.Stats().Dropped
	a.stopReq <- drainCtx
	drained := make(chan struct{})
	go func() {
		<-a.collectorDone
		for _, d := range a.dests {
			<-d.done
		}
		close(drained)
	}()
	var err error
	select {
	case <-drained:
	case <-drainCtx.Done():
		switch {
		case ctx.Err() != nil:
			err = ctx.Err()
		default:
			err = fmt.Errorf("drain timeout %v reached: %w", a.cfg.DrainTimeout, context.DeadlineExceeded)
		}
	}
	// Either everything is delivered, or it is too late: in both cases
	// cancel what is left. Sources and uploaders that honour the
	// cancellation return at once; one that ignores it (a hung filesystem,
	// a custom uploader) must not hold Stop past its deadline, so after a
	// short grace Stop returns without it.
	a.cancelUploads()
	cancel()
	finished := true
	if err != nil {
		grace := time.NewTimer(stopGrace)
		select {
		case <-drained:
		case <-grace.C:
			finished = false
		}
		grace.Stop()
	}
	// From here on no counter changes and no new call begins.
	a.mu.Lock()
	a.final = true
	left := -droppedBefore
	for _, d := range a.dests {
		d.abandon()
		left += d.dropped.Load()
	}
	stuck := make([]string, 0, len(a.busy))
	for what := range a.busy {
		stuck = append(stuck, what)
	}
	a.mu.Unlock()
	slices.Sort(stuck)
	if finished {
		a.closeUploaders()
	} else {
		go func() {
			<-drained
			a.closeUploaders()
		}()
	}
	if err == nil {
		return nil
	}
	msg := "no profile was left queued"
	if left > 0 {
		msg = fmt.Sprintf("%d profiles not delivered, counted as dropped", left)
	}
	if finished && a.lastSkipped.Load() {
		msg += "; the last interval was not collected in time"
	}
	if len(stuck) > 0 {
		msg += fmt.Sprintf("; still running %v after the cancellation: %s (closed when they return; no other call follows)",
			stopGrace, strings.Join(stuck, ", "))
	}
	return fmt.Errorf("agent: stop: %w; %s", err, msg)
}

// stopGrace is how long Stop waits, once its time is up, for sources and
// uploaders to notice the cancellation. It covers runtime/pprof's
// StopCPUProfile, which waits for the profile writer's next 100 ms tick.
const stopGrace = 250 * time.Millisecond

// closeUploaders closes the uploaders, once every upload goroutine has
// returned.
func (a *Agent) closeUploaders() {
	for _, d := range a.dests {
		if c, ok := d.up.(io.Closer); ok {
			if cerr := c.Close(); cerr != nil {
				a.logf(slog.LevelWarn, true, "arenaprof agent: closing uploader", "uploader", d.name, "err", cerr)
			}
		}
	}
}

// collectLoop runs on its own goroutine until Stop asks for the last
// interval. Collection never waits on an upload: handing a profile to a
// destination only appends to its bounded queue.
func (a *Agent) collectLoop(start time.Time) {
	defer close(a.collectorDone)
	t := time.NewTicker(a.cfg.Interval)
	defer t.Stop()
	from := start
	for {
		select {
		case <-t.C:
			from = a.collect(context.Background(), from)
		case ctx := <-a.stopReq:
			a.collect(ctx, from)
			a.lastSkipped.Store(ctx.Err() != nil)
			a.closeSources(a.cfg.Sources)
			for _, d := range a.dests {
				d.close()
			}
			return
		}
	}
}

// collect runs every source once for the interval [from, now) and returns
// now, the start of the next interval. Once ctx is done (Stop's time is
// up) the remaining sources are not called.
func (a *Agent) collect(ctx context.Context, from time.Time) time.Time {
	until := time.Now()
	for i, s := range a.cfg.Sources {
		if ctx.Err() != nil {
			break
		}
		what := fmt.Sprintf("source %q (Collect)", s.Name())
		if !a.enter(what) {
			break
		}
		p, err := collectSource(ctx, s)
		a.leave(what)
		if err == nil && p != nil {
			p.stamp(func(t int64) int64 { return laterStamp(t, &a.stamps[i]) })
			var u *Upload
			u, err = a.newUploadOf(s.Name(), p, from, until)
			if err == nil {
				type overflow struct{ name, cause string }
				var full []overflow
				a.count(func() {
					a.collected.Add(1)
					for _, d := range a.dests {
						if d.push(u) {
							// Counted in Dropped and QueueFull; LastError
							// keeps the cause (why the queue filled).
							d.lastFullAt = time.Now()
							full = append(full, overflow{d.name, d.lastErr})
						}
					}
				})
				for _, f := range full {
					a.logf(slog.LevelWarn, true, "arenaprof agent: upload queue full, dropped the oldest profile", "uploader", f.name, "last_error", f.cause)
				}
				continue
			}
		}
		if err != nil {
			a.count(func() { a.collectErrors.Add(1) })
			a.logf(slog.LevelWarn, true, "arenaprof agent: collecting a profile failed", "source", s.Name(), "err", err)
		}
	}
	return until
}

// laterStamp returns t (a profile's TimeNanos), moved to the start of the
// millisecond after *last when it falls in or before that millisecond, and
// records its millisecond in *last. Pyroscope keys a series' profiles by
// their time in milliseconds and a query returns one profile per key
// (v1.19's merge iterator drops the others), so two profiles of one source
// within a millisecond, such as a snapshot taken at Stop just after the
// interval's own or two peaks at one instant, would be stored as one. A
// profile so moved is at most a millisecond later than it was when the
// source keeps its profiles in order.
func laterStamp(t int64, last *int64) int64 {
	const ms = int64(time.Millisecond)
	if t/ms <= *last {
		t = (*last + 1) * ms
	}
	*last = t / ms
	return t
}

// encodable is a collected profile, ready to encode: a *profile.Profile
// (profileEncodable), or an interval a source encodes itself
// (encodedSource).
type encodable interface {
	// writeGzip writes the profile gzipped to w with opts' additions;
	// pw is the agent's writer, for those that need one.
	writeGzip(pw *pprofenc.Writer, w io.Writer, opts *pprofenc.Options) error
	// sampleTypes returns the profile's sample types and whether it is a
	// holdings profile (see sampleTypesOf).
	sampleTypes() ([]*profile.ValueType, bool)
	// profile returns the profile decoded, for uploaders that read it.
	profile() (*profile.Profile, error)
	// stamp sets the profile's time (TimeNanos) to f of it.
	stamp(f func(int64) int64)
}

// encodedSource is a Source that can hand the agent its interval to
// encode without building a *profile.Profile (HeapSource).
type encodedSource interface {
	collectEncoded(ctx context.Context) (encodable, error)
}

type profileEncodable struct{ p *profile.Profile }

func (e profileEncodable) writeGzip(pw *pprofenc.Writer, w io.Writer, opts *pprofenc.Options) error {
	return pw.WriteGzip(w, e.p, opts)
}

func (e profileEncodable) sampleTypes() ([]*profile.ValueType, bool) {
	return e.p.SampleType, pprofmt.IsHoldings(e.p)
}

func (e profileEncodable) profile() (*profile.Profile, error) { return e.p, nil }

func (e profileEncodable) stamp(f func(int64) int64) { e.p.TimeNanos = f(e.p.TimeNanos) }

// collectSource collects s's profile of the interval that ends now: nil
// for "nothing to report".
func collectSource(ctx context.Context, s Source) (encodable, error) {
	if es, ok := s.(encodedSource); ok {
		return es.collectEncoded(ctx)
	}
	p, err := s.Collect(ctx)
	if err != nil || p == nil {
		return nil, err
	}
	return profileEncodable{p}, nil
}

// newUploadOf makes the Upload of a collected profile, encoded as its
// destinations need it.
func (a *Agent) newUploadOf(name string, p encodable, from, until time.Time) (*Upload, error) {
	types, typesJSON, err := a.sampleTypes(name, p)
	if err != nil {
		return nil, fmt.Errorf("encoding profile: %w", err)
	}
	u := &Upload{
		AppName:     a.cfg.AppName,
		Labels:      a.cfg.Labels,
		Profile:     name,
		From:        from,
		Until:       until,
		sampleTypes: types,
		typesJSON:   typesJSON,
	}
	// Each encoding a destination sends is made here, once: the plain
	// profile, and for Pyroscope destinations the profile without
	// trace_id, with their labels (and type frames) for a memory profile.
	plain := len(a.dests) == 0
	for _, d := range a.dests {
		pd, ok := d.up.(pyroscopeDest)
		var opts *pprofenc.Options
		if ok {
			opts = pyroscopeEncoding(types, pd.typeFrames())
		}
		if opts == nil {
			plain = true
			continue
		}
		v := pyroscopeVariant(pd.typeFrames())
		if u.pyroscope[v] != nil {
			continue
		}
		if u.pyroscope[v], err = a.encode(name, p, opts); err != nil {
			return nil, fmt.Errorf("encoding profile: %w", err)
		}
		if u.Data == nil {
			u.Data = u.pyroscope[v]
		}
	}
	if plain {
		if u.Data, err = a.encode(name, p, nil); err != nil {
			return nil, fmt.Errorf("encoding profile: %w", err)
		}
	}
	if a.parsed {
		if u.parsed, err = p.profile(); err != nil {
			return nil, fmt.Errorf("encoding profile: %w", err)
		}
	}
	return u, nil
}

// pyroscopeDest is implemented by NewPyroscope's destinations: the agent
// encodes memory profiles for them as they send them (see
// pyroscopeOptions).
type pyroscopeDest interface {
	typeFrames() bool
}

// encode returns p gzipped with opts' additions, in a buffer sized after
// the source's last upload, with the agent's own writer: a service
// collects garbage many times between two uploads, so a writer kept in a
// sync.Pool would be gone by the next one.
func (a *Agent) encode(name string, p encodable, opts *pprofenc.Options) ([]byte, error) {
	a.sizeMu.Lock()
	defer a.sizeMu.Unlock()
	size := a.lastSize[name]
	buf := bytes.NewBuffer(make([]byte, 0, size+size/8+512))
	if err := p.writeGzip(&a.writer, buf, opts); err != nil {
		return nil, err
	}
	if a.lastSize == nil {
		a.lastSize = map[string]int{}
	}
	a.lastSize[name] = buf.Len()
	return buf.Bytes(), nil
}

// sampleTypes returns the sample_type_config of p, and its JSON, as
// sampleTypesOf gives them; a source whose sample types did not change
// since its last profile reuses the last ones.
func (a *Agent) sampleTypes(name string, p encodable) (map[string]sampleTypeConfig, []byte, error) {
	st, holdings := p.sampleTypes()
	a.sizeMu.Lock()
	defer a.sizeMu.Unlock()
	c, ok := a.types[name]
	if ok && c.holdings == holdings && slices.EqualFunc(c.of, st, func(x profile.ValueType, y *profile.ValueType) bool {
		return x == *y
	}) {
		return c.types, c.json, nil
	}
	c.types = sampleTypeConfigs(st, holdings)
	js, err := json.Marshal(c.types)
	if err != nil {
		return nil, nil, err
	}
	c.json, c.holdings = js, holdings
	c.of = c.of[:0]
	for _, t := range st {
		c.of = append(c.of, *t)
	}
	if a.types == nil {
		a.types = map[string]sourceTypes{}
	}
	a.types[name] = c
	return c.types, c.json, nil
}

// sourceTypes is a source's last sample types and their
// sample_type_config.
type sourceTypes struct {
	of       []profile.ValueType
	holdings bool
	types    map[string]sampleTypeConfig
	json     []byte
}

// uploadLoop delivers one destination's queue, oldest first.
func (a *Agent) uploadLoop(d *dest) {
	defer close(d.done)
	for {
		u, ok := d.next(a.uploadCtx)
		if !ok {
			return
		}
		a.deliver(d, u)
	}
}

// deliver uploads u with retries. Each profile ends in exactly one of the
// uploaded, failed, unconfirmed or dropped counters (dropped by Stop when
// it is still in flight then).
func (a *Agent) deliver(d *dest, u *Upload) {
	ctx := a.uploadCtx
	what := fmt.Sprintf("uploader %q (Upload)", d.name)
	first := time.Now()
	for attempt := 0; ; attempt++ {
		if ctx.Err() != nil || !a.enter(what) {
			a.count(func() { d.dropped.Add(1); d.inflight.Add(-1) })
			return
		}
		rctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
		err := d.up.Upload(rctx, u)
		timedOut := rctx.Err() == context.DeadlineExceeded && ctx.Err() == nil
		cancel()
		a.leave(what)
		if err == nil {
			a.count(func() {
				d.uploaded.Add(1)
				d.bytes.Add(uint64(len(u.Data)))
				d.inflight.Add(-1)
			})
			return
		}
		msg := err.Error()
		unconfirmed := isUnconfirmed(err)
		retry, after := isRetryable(err)
		if !unconfirmed && !retry && timedOut && errors.Is(err, context.DeadlineExceeded) {
			// An uploader that says nothing about its timeout may have
			// delivered: a second copy could count twice.
			unconfirmed = true
		}
		switch {
		case unconfirmed:
			a.count(func() { d.unconfirmed.Add(1); d.inflight.Add(-1); d.lastError(msg) })
			a.logf(slog.LevelWarn, true, "arenaprof agent: upload unconfirmed: the request was sent but no answer came; not retried, since the destination may have stored it",
				"uploader", d.name, "profile", u.Profile, "attempts", attempt+1, "err", msg)
			return
		case ctx.Err() != nil:
			// Stop's time ran out and cancelled the attempt: its error
			// (often a bare "context canceled") is no upload error and
			// must not replace the cause already in LastError.
			a.count(func() { d.dropped.Add(1); d.inflight.Add(-1) })
			return
		}
		wait := a.backoff(attempt)
		if after > 0 {
			wait = min(after, a.cfg.RetryAfterMax)
		}
		if retry && a.cfg.MaxRetries >= 0 && (a.cfg.MaxRetries == 0 || attempt < a.cfg.MaxRetries) &&
			time.Since(first)+wait <= a.cfg.MaxRetryTime {
			a.count(func() { d.retried.Add(1); d.lastError(msg) })
			a.logf(slog.LevelDebug, attempt >= 2, "arenaprof agent: upload failed, retrying",
				"uploader", d.name, "profile", u.Profile, "attempts", attempt+1, "in", wait, "err", msg)
			t := time.NewTimer(wait)
			select {
			case <-t.C:
				continue
			case <-ctx.Done():
				t.Stop()
				a.count(func() { d.dropped.Add(1); d.inflight.Add(-1) })
				return
			}
		}
		a.count(func() { d.failed.Add(1); d.inflight.Add(-1); d.lastError(msg) })
		a.logf(slog.LevelWarn, true, "arenaprof agent: upload failed", "uploader", d.name, "profile", u.Profile,
			"attempts", attempt+1, "retryable", retry, "for", time.Since(first).Round(time.Millisecond), "err", msg)
		return
	}
}

// backoff returns the full-jitter wait before retry number attempt+1.
func (a *Agent) backoff(attempt int) time.Duration {
	ceil := a.cfg.BackoffMax
	if attempt < 62 {
		if c := a.cfg.BackoffBase << attempt; c > 0 && c < ceil && c>>attempt == a.cfg.BackoffBase {
			ceil = c
		}
	}
	return rand.N(ceil) // #nosec: jitter needs no cryptographic randomness
}

// Stats counts what an agent did. Every profile handed to a destination
// ends in exactly one of Uploaded, Failed, Unconfirmed or Dropped once the
// agent has stopped; until then it may also be queued or in flight.
type Stats struct {
	// Collected counts profiles collected (all sources);
	// CollectErrors counts collections or encodings that failed.
	Collected, CollectErrors uint64
	// Uploaded, Retried, Dropped, QueueFull, Failed, Unconfirmed and
	// BytesUploaded are the sums over destinations.
	Uploaded, Retried, Dropped, QueueFull, Failed, Unconfirmed, BytesUploaded uint64
	// LastError is the most recent upload error of any destination (see
	// DestinationStats.LastError) and LastErrorTime when it happened;
	// empty and zero if none. A full queue never replaces it: see
	// QueueFull and LastQueueFullTime.
	LastError     string    `json:",omitempty"`
	LastErrorTime time.Time `json:",omitzero"`
	// LastQueueFullTime is the latest time any destination's queue was
	// full and dropped its oldest profile; zero if never.
	LastQueueFullTime time.Time `json:",omitzero"`
	// Destinations holds the counters of each uploader, in Config order.
	Destinations []DestinationStats
}

// DestinationStats counts one destination's uploads.
type DestinationStats struct {
	// Name identifies the uploader (its String method, credentials removed).
	Name string
	// Enqueued counts profiles handed to this destination.
	Enqueued uint64
	// Uploaded counts profiles delivered, and BytesUploaded their
	// compressed size.
	Uploaded, BytesUploaded uint64
	// Retried counts retry attempts (not profiles).
	Retried uint64
	// Dropped counts profiles discarded without delivery: the oldest of a
	// full queue, and those queued or in flight when Stop's time ran out.
	Dropped uint64
	// QueueFull counts the profiles of Dropped that were the oldest of a
	// full queue (collection outpaced uploads, usually because uploads
	// are failing or slow: LastError says why), and LastQueueFullTime is
	// when that last happened. A full queue is not an upload error and
	// never replaces LastError.
	QueueFull         uint64
	LastQueueFullTime time.Time `json:",omitzero"`
	// Failed counts profiles given up after a non-retryable error, or when
	// retrying would exceed Config.MaxRetryTime or Config.MaxRetries.
	Failed uint64
	// Unconfirmed counts profiles whose request was sent but whose answer
	// never came (the attempt timed out or the connection broke): the
	// destination may have stored them. They are not retried, because
	// Pyroscope's ingest is not idempotent: a second copy would be added
	// to the first.
	Unconfirmed uint64
	// Queued is the current length of the queue, InFlight the profiles
	// being uploaded or waiting for a retry (0 or 1).
	Queued, InFlight int
	// LastError is this destination's most recent upload error, retried
	// or not, as the uploader reported it (the errors of the destinations
	// of [NewPyroscope], [NewOTLP] and [NewDir] hold no credentials), and
	// LastErrorTime when it happened: the transport or server error that
	// is the cause, never the queue overflow it may lead to (QueueFull).
	LastError     string    `json:",omitempty"`
	LastErrorTime time.Time `json:",omitzero"`
}

// Stats returns a snapshot of the counters. It is safe to call at any time,
// also after Stop, when the counters are final.
func (a *Agent) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := Stats{Collected: a.collected.Load(), CollectErrors: a.collectErrors.Load()}
	for _, d := range a.dests {
		ds := DestinationStats{
			Name:              d.name,
			Enqueued:          d.enqueued.Load(),
			Uploaded:          d.uploaded.Load(),
			BytesUploaded:     d.bytes.Load(),
			Retried:           d.retried.Load(),
			Dropped:           d.dropped.Load(),
			QueueFull:         d.queueFull.Load(),
			LastQueueFullTime: d.lastFullAt,
			Failed:            d.failed.Load(),
			Unconfirmed:       d.unconfirmed.Load(),
			Queued:            d.len(),
			InFlight:          int(d.inflight.Load()),
			LastError:         d.lastErr,
			LastErrorTime:     d.lastErrAt,
		}
		s.Uploaded += ds.Uploaded
		s.BytesUploaded += ds.BytesUploaded
		s.Retried += ds.Retried
		s.Dropped += ds.Dropped
		s.QueueFull += ds.QueueFull
		if ds.LastQueueFullTime.After(s.LastQueueFullTime) {
			s.LastQueueFullTime = ds.LastQueueFullTime
		}
		s.Failed += ds.Failed
		s.Unconfirmed += ds.Unconfirmed
		if ds.LastErrorTime.After(s.LastErrorTime) {
			s.LastError, s.LastErrorTime = ds.LastError, ds.LastErrorTime
		}
		s.Destinations = append(s.Destinations, ds)
	}
	return s
}

// dest is one destination: a bounded queue that drops its oldest entry
// when full, and the counters of its upload goroutine. Counters change
// only under Agent.mu (see Agent.count); the queue has its own lock.
type dest struct {
	up   Uploader
	name string
	cap  int

	mu     sync.Mutex
	queue  []*Upload
	closed bool
	notify chan struct{}
	done   chan struct{}

	enqueued, uploaded, bytes, retried, dropped, queueFull, failed, unconfirmed atomic.Uint64
	inflight                                                                    atomic.Int64

	// lastErr, lastErrAt and lastFullAt are guarded by Agent.mu.
	lastErr    string
	lastErrAt  time.Time
	lastFullAt time.Time
}

// lastError records msg as the destination's last error; the caller holds
// Agent.mu.
func (d *dest) lastError(msg string) {
	d.lastErr, d.lastErrAt = truncate(msg, 512), time.Now()
}

// push appends u, dropping the oldest entry when the queue is full; it
// reports whether it dropped one. It never blocks on the upload goroutine.
// The caller holds Agent.mu.
func (d *dest) push(u *Upload) (dropped bool) {
	d.mu.Lock()
	if len(d.queue) >= d.cap {
		d.queue[0] = nil
		d.queue = d.queue[1:]
		d.dropped.Add(1)
		d.queueFull.Add(1)
		dropped = true
	}
	d.queue = append(d.queue, u)
	d.enqueued.Add(1)
	d.mu.Unlock()
	select {
	case d.notify <- struct{}{}:
	default:
	}
	return dropped
}

// next waits for the oldest queued upload and counts it in flight. It
// returns false once the queue is closed and empty, or when ctx ends.
func (d *dest) next(ctx context.Context) (*Upload, bool) {
	for {
		if ctx.Err() != nil {
			return nil, false
		}
		d.mu.Lock()
		if len(d.queue) > 0 {
			u := d.queue[0]
			d.queue[0] = nil
			d.queue = d.queue[1:]
			d.inflight.Add(1)
			d.mu.Unlock()
			return u, true
		}
		closed := d.closed
		d.mu.Unlock()
		if closed {
			return nil, false
		}
		select {
		case <-d.notify:
		case <-ctx.Done():
			return nil, false
		}
	}
}

func (d *dest) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	select {
	case d.notify <- struct{}{}:
	default:
	}
}

// abandon empties the queue and counts its entries, and the profile in
// flight if any, as dropped. The caller holds Agent.mu and sets final.
func (d *dest) abandon() {
	d.mu.Lock()
	n := uint64(len(d.queue)) + uint64(max(d.inflight.Load(), 0))
	d.queue = nil
	d.inflight.Store(0)
	d.mu.Unlock()
	d.dropped.Add(n)
}

func (d *dest) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.queue)
}
