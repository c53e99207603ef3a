package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"regexp"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/google/pprof/profile"
)

// Defaults and bounds of [Config].
const (
	DefaultInterval      = 15 * time.Second
	DefaultTimeout       = 10 * time.Second
	DefaultMaxRetries    = 2
	DefaultQueueSize     = 20
	DefaultBackoffBase   = time.Second
	DefaultBackoffMax    = 30 * time.Second
	DefaultRetryAfterMax = time.Minute

	// MinInterval and MaxInterval bound Config.Interval.
	MinInterval = time.Millisecond
	MaxInterval = 24 * time.Hour
	// MaxQueueSize bounds Config.QueueSize.
	MaxQueueSize = 1 << 16
	// MaxRetriesLimit bounds Config.MaxRetries.
	MaxRetriesLimit = 100
	// MaxLabels bounds the number of entries of Config.Labels.
	MaxLabels = 64
)

// Source produces one kind of profile, one interval at a time.
//
// A Source may also implement [Starter] (called once by [Start], before the
// first interval begins) and [Closer] (called once by [Agent.Stop], after the
// last Collect). The agent calls these methods and Collect from one
// goroutine, never concurrently.
type Source interface {
	// Name says what the profile holds ("arena", "wall", "cpu", "heap"). It is
	// used in file names and as the suffix of the Pyroscope application name,
	// so it must match [a-z0-9_]+ and be unique within a Config.
	Name() string
	// Collect returns the profile of the interval that ends now and began at
	// the previous Collect (or at Start). A nil profile with a nil error means
	// "nothing to report for this interval". Collect must return promptly
	// once ctx is done.
	Collect(ctx context.Context) (*profile.Profile, error)
}

// Starter is implemented by sources that must begin recording (or take a
// baseline) when the agent starts.
type Starter interface {
	Start(ctx context.Context) error
}

// Closer is implemented by sources and uploaders that hold resources (a
// running profiler, idle connections) to release when the agent stops.
type Closer interface {
	Close() error
}

// Config says what the agent collects, how often, and where it sends it.
// The zero value of every optional field selects its default.
type Config struct {
	// AppName names the service (required, valid UTF-8). Destinations
	// sanitise it as their format needs.
	AppName string
	// Labels are attached to every profile (e.g. env, region, version).
	// Keys match [A-Za-z_][A-Za-z0-9_]* and must not start with "__"
	// (reserved by Pyroscope); values are non-empty valid UTF-8 and may
	// hold any character: each destination escapes or replaces what its
	// format cannot carry.
	Labels map[string]string
	// Interval between collections; default [DefaultInterval], bounded by
	// [MinInterval] and [MaxInterval].
	Interval time.Duration
	// Sources are the profiles to collect each interval (at least one).
	Sources []Source
	// Uploaders are the destinations (at least one). Each has its own queue
	// and upload goroutine, so a slow destination never delays another.
	Uploaders []Uploader
	// Timeout bounds one upload attempt; default [DefaultTimeout].
	Timeout time.Duration
	// MaxRetries bounds the retries after a first failed attempt, for
	// retryable errors only. Zero selects [DefaultMaxRetries]; a negative
	// value disables retries. At most [MaxRetriesLimit].
	MaxRetries int
	// QueueSize bounds the profiles waiting for upload per destination;
	// when it is full the oldest one is dropped. Default
	// [DefaultQueueSize], at most [MaxQueueSize].
	QueueSize int
	// BackoffBase and BackoffMax shape the exponential backoff with full
	// jitter between retries: attempt n waits a uniform random time in
	// [0, min(BackoffMax, BackoffBase*2^n)). Defaults [DefaultBackoffBase]
	// and [DefaultBackoffMax].
	BackoffBase, BackoffMax time.Duration
	// RetryAfterMax caps the wait a server asks for with Retry-After;
	// default [DefaultRetryAfterMax].
	RetryAfterMax time.Duration
	// Logger receives warnings about failed collections and uploads; nil
	// discards them. Messages never hold credentials.
	Logger *slog.Logger
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
	if len(c.Labels) > MaxLabels {
		return c, fmt.Errorf("agent: Config.Labels has %d entries, at most %d allowed", len(c.Labels), MaxLabels)
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
		c.Interval = DefaultInterval
	case c.Interval < MinInterval || c.Interval > MaxInterval:
		return c, fmt.Errorf("agent: Config.Interval %v outside [%v, %v]", c.Interval, MinInterval, MaxInterval)
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
	if err := defaultDuration(&c.Timeout, DefaultTimeout, "Timeout"); err != nil {
		return c, err
	}
	switch {
	case c.MaxRetries == 0:
		c.MaxRetries = DefaultMaxRetries
	case c.MaxRetries < 0:
		c.MaxRetries = 0
	case c.MaxRetries > MaxRetriesLimit:
		return c, fmt.Errorf("agent: Config.MaxRetries %d above %d", c.MaxRetries, MaxRetriesLimit)
	}
	switch {
	case c.QueueSize == 0:
		c.QueueSize = DefaultQueueSize
	case c.QueueSize < 0 || c.QueueSize > MaxQueueSize:
		return c, fmt.Errorf("agent: Config.QueueSize %d outside [1, %d]", c.QueueSize, MaxQueueSize)
	}
	if err := defaultDuration(&c.BackoffBase, DefaultBackoffBase, "BackoffBase"); err != nil {
		return c, err
	}
	if err := defaultDuration(&c.BackoffMax, DefaultBackoffMax, "BackoffMax"); err != nil {
		return c, err
	}
	if c.BackoffMax < c.BackoffBase {
		return c, fmt.Errorf("agent: Config.BackoffMax %v below BackoffBase %v", c.BackoffMax, c.BackoffBase)
	}
	if err := defaultDuration(&c.RetryAfterMax, DefaultRetryAfterMax, "RetryAfterMax"); err != nil {
		return c, err
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
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
	log   *slog.Logger
	dests []*dest

	collected     atomic.Uint64
	collectErrors atomic.Uint64

	stopReq       chan context.Context
	collectorDone chan struct{}
	uploadCtx     context.Context
	cancelUploads context.CancelFunc

	stopOnce sync.Once
	stopErr  error
}

// Start validates cfg, starts every source that implements [Starter] and
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
		log:           cfg.Logger,
		stopReq:       make(chan context.Context, 1),
		collectorDone: make(chan struct{}),
	}
	ctx := context.Background()
	for i, s := range cfg.Sources {
		st, ok := s.(Starter)
		if !ok {
			continue
		}
		if err := st.Start(ctx); err != nil {
			closeSources(cfg.Sources[:i], a.log)
			return nil, fmt.Errorf("agent: starting source %q: %w", s.Name(), err)
		}
	}
	a.uploadCtx, a.cancelUploads = context.WithCancel(context.Background())
	for _, u := range cfg.Uploaders {
		d := &dest{up: u, name: uploaderName(u), cap: cfg.QueueSize, notify: make(chan struct{}, 1), done: make(chan struct{})}
		a.dests = append(a.dests, d)
		go a.uploadLoop(d)
	}
	go a.collectLoop(time.Now())
	return a, nil
}

func closeSources(srcs []Source, log *slog.Logger) {
	for _, s := range srcs {
		if c, ok := s.(Closer); ok {
			if err := c.Close(); err != nil {
				log.Warn("arenaprof agent: closing source", "source", s.Name(), "err", err)
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
// and waits for their queues to drain, all within ctx. When ctx ends first,
// uploads in flight are cancelled and what is still queued is counted as
// dropped; Stop then returns an error wrapping ctx.Err(). In every case,
// when Stop returns, no goroutine of the agent, its sources or its
// uploaders is left running. Calling Stop again returns the first result.
func (a *Agent) Stop(ctx context.Context) error {
	a.stopOnce.Do(func() { a.stopErr = a.stop(ctx) })
	return a.stopErr
}

func (a *Agent) stop(ctx context.Context) error {
	a.stopReq <- ctx
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
	case <-ctx.Done():
		err = ctx.Err()
	}
	// Either everything is delivered, or it is too late: in both cases
	// cancel what is left. Sources and uploaders that honour the
	// cancellation return at once; one that ignores it (a hung filesystem,
	// a custom uploader) must not hold Stop past its deadline, so after a
	// short grace the rest of the shutdown finishes in the background.
	a.cancelUploads()
	if err != nil {
		grace := time.NewTimer(stopGrace)
		defer grace.Stop()
		select {
		case <-drained:
		case <-grace.C:
			go func() {
				<-drained
				a.finishStop()
			}()
			return fmt.Errorf("agent: stop: %w (a source or uploader did not return; the profiles it holds are counted as dropped when it does)", err)
		}
	}
	<-drained
	left := a.finishStop()
	if err != nil {
		return fmt.Errorf("agent: stop: %w (%d profiles not uploaded, counted as dropped)", err, left)
	}
	return nil
}

// stopGrace is how long Stop waits, once its context is done, for sources
// and uploaders to notice the cancellation.
const stopGrace = 50 * time.Millisecond

// finishStop drops what is still queued and closes the uploaders, once
// every goroutine of the agent has returned. It returns the number dropped.
func (a *Agent) finishStop() uint64 {
	var left uint64
	for _, d := range a.dests {
		left += d.abandon()
		if c, ok := d.up.(Closer); ok {
			if cerr := c.Close(); cerr != nil {
				a.log.Warn("arenaprof agent: closing uploader", "uploader", d.name, "err", cerr)
			}
		}
	}
	return left
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
			closeSources(a.cfg.Sources, a.log)
			for _, d := range a.dests {
				d.close()
			}
			return
		}
	}
}

// collect runs every source once for the interval [from, now) and returns
// now, the start of the next interval.
func (a *Agent) collect(ctx context.Context, from time.Time) time.Time {
	until := time.Now()
	for _, s := range a.cfg.Sources {
		p, err := s.Collect(ctx)
		if err == nil && p != nil {
			var u *Upload
			u, err = a.newUpload(s.Name(), p, from, until)
			if err == nil {
				a.collected.Add(1)
				for _, d := range a.dests {
					if d.push(u) {
						a.log.Warn("arenaprof agent: upload queue full, dropped the oldest profile", "uploader", d.name)
					}
				}
				continue
			}
		}
		if err != nil {
			a.collectErrors.Add(1)
			a.log.Warn("arenaprof agent: collecting a profile failed", "source", s.Name(), "err", err)
		}
	}
	return until
}

func (a *Agent) newUpload(name string, p *profile.Profile, from, until time.Time) (*Upload, error) {
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		return nil, fmt.Errorf("encoding profile: %w", err)
	}
	return &Upload{
		AppName:     a.cfg.AppName,
		Labels:      a.cfg.Labels,
		Profile:     name,
		From:        from,
		Until:       until,
		Data:        buf.Bytes(),
		SampleTypes: SampleTypes(p),
	}, nil
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
// uploaded, failed or dropped counters.
func (a *Agent) deliver(d *dest, u *Upload) {
	ctx := a.uploadCtx
	for attempt := 0; ; attempt++ {
		rctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
		err := d.up.Upload(rctx, u)
		timedOut := rctx.Err() != nil
		cancel()
		if err == nil {
			d.uploaded.Add(1)
			return
		}
		if ctx.Err() != nil {
			d.dropped.Add(1)
			return
		}
		retry, after := IsRetryable(err)
		if !retry && timedOut && errors.Is(err, context.DeadlineExceeded) {
			retry = true
		}
		if !retry || attempt >= a.cfg.MaxRetries {
			d.failed.Add(1)
			a.log.Warn("arenaprof agent: upload failed", "uploader", d.name, "profile", u.Profile,
				"attempts", attempt+1, "retryable", retry, "err", err)
			return
		}
		d.retried.Add(1)
		wait := a.backoff(attempt)
		if after > 0 {
			wait = min(after, a.cfg.RetryAfterMax)
		}
		a.log.Debug("arenaprof agent: retrying upload", "uploader", d.name, "profile", u.Profile, "in", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			d.dropped.Add(1)
			return
		}
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
// ends in exactly one of Uploaded, Failed or Dropped once the agent has
// stopped; until then it may also be Queued or in flight.
type Stats struct {
	// Collected counts profiles collected (all sources);
	// CollectErrors counts collections or encodings that failed.
	Collected, CollectErrors uint64
	// Uploaded, Retried, Dropped and Failed are the sums over destinations.
	Uploaded, Retried, Dropped, Failed uint64
	// Destinations holds the counters of each uploader, in Config order.
	Destinations []DestinationStats
}

// DestinationStats counts one destination's uploads.
type DestinationStats struct {
	// Name identifies the uploader (its String method, credentials removed).
	Name string
	// Enqueued counts profiles handed to this destination.
	Enqueued uint64
	// Uploaded counts profiles delivered.
	Uploaded uint64
	// Retried counts retry attempts (not profiles).
	Retried uint64
	// Dropped counts profiles discarded without delivery: the oldest of a
	// full queue, and those queued or in flight when Stop's context ended.
	Dropped uint64
	// Failed counts profiles given up after a non-retryable error or after
	// the last retry.
	Failed uint64
	// Queued is the current length of the queue.
	Queued int
}

// Stats returns a snapshot of the counters. It is safe to call at any time,
// also after Stop.
func (a *Agent) Stats() Stats {
	s := Stats{Collected: a.collected.Load(), CollectErrors: a.collectErrors.Load()}
	for _, d := range a.dests {
		ds := DestinationStats{
			Name:     d.name,
			Enqueued: d.enqueued.Load(),
			Uploaded: d.uploaded.Load(),
			Retried:  d.retried.Load(),
			Dropped:  d.dropped.Load(),
			Failed:   d.failed.Load(),
			Queued:   d.len(),
		}
		s.Uploaded += ds.Uploaded
		s.Retried += ds.Retried
		s.Dropped += ds.Dropped
		s.Failed += ds.Failed
		s.Destinations = append(s.Destinations, ds)
	}
	return s
}

// dest is one destination: a bounded queue that drops its oldest entry
// when full, and the counters of its upload goroutine.
type dest struct {
	up   Uploader
	name string
	cap  int

	mu     sync.Mutex
	queue  []*Upload
	closed bool
	notify chan struct{}
	done   chan struct{}

	enqueued, uploaded, retried, dropped, failed atomic.Uint64
}

// push appends u, dropping the oldest entry when the queue is full; it
// reports whether it dropped one. It never blocks on the upload goroutine.
func (d *dest) push(u *Upload) (dropped bool) {
	d.mu.Lock()
	if len(d.queue) >= d.cap {
		d.queue[0] = nil
		d.queue = d.queue[1:]
		d.dropped.Add(1)
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

// next waits for the oldest queued upload. It returns false once the queue
// is closed and empty, or when ctx ends.
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

// abandon empties the queue, counting its entries as dropped.
func (d *dest) abandon() uint64 {
	d.mu.Lock()
	n := uint64(len(d.queue))
	d.queue = nil
	d.mu.Unlock()
	d.dropped.Add(n)
	return n
}

func (d *dest) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.queue)
}
