package agent

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// Uploader is a destination for profiles. The agent calls Upload from one
// goroutine per destination, with a context that carries the per-attempt
// timeout. An Uploader must treat *Upload as read-only: the same value goes
// to every destination.
//
// An error wrapped with [Retryable] asks the agent to try again (with
// backoff, within Config.MaxRetryTime); one wrapped with [Unconfirmed]
// says the destination may have stored the profile; any other error fails
// the upload at once. An attempt that ends because its timeout expired,
// with an error marked neither way, is counted unconfirmed: an uploader
// whose requests are safe to repeat should mark such errors [Retryable].
// If the Uploader implements [Closer], Close is called once when the agent
// stops; if it implements fmt.Stringer, String names it in [Stats] and logs
// (it must not reveal credentials).
type Uploader interface {
	Upload(ctx context.Context, u *Upload) error
}

// Upload is one profile of one interval, ready to send.
type Upload struct {
	// AppName is Config.AppName, unsanitised.
	AppName string
	// Labels are Config.Labels, unsanitised; read-only.
	Labels map[string]string
	// Profile is the source's name ("arena", "wall", "cpu", "heap").
	Profile string
	// From and Until bound the interval the profile covers.
	From, Until time.Time
	// Data is the gzip-compressed pprof protobuf.
	Data []byte
	// SampleTypes describes each sample type of the profile for Pyroscope's
	// sample_type_config (see [SampleTypes]).
	SampleTypes map[string]SampleTypeConfig

	// parsed is the profile Data encodes, when an uploader asked for it
	// (see parsedReader); read-only.
	parsed *profile.Profile
}

// parsedReader is implemented by uploaders that convert the profile
// rather than send its bytes: the agent then hands them the profile it
// encoded, which saves them parsing Data again.
type parsedReader interface {
	readsParsed()
}

// SampleTypeConfig tells a Pyroscope server how to present one sample type;
// it marshals to the JSON of the sample_type_config part.
type SampleTypeConfig struct {
	Units       string `json:"units,omitempty"`
	DisplayName string `json:"display-name,omitempty"`
	// Aggregation is "sum" for quantities that add up over time
	// (allocations, CPU or wall time) and "average" for levels (in-use
	// memory, goroutines), as pyroscope-go sends it. Grafana Pyroscope
	// (v1.19) ignores it: its flame graphs and default series sum in-use
	// levels over the time range; averaged SelectSeries queries read them
	// (see the README, "Live memory").
	Aggregation string `json:"aggregation,omitempty"`
	Cumulative  bool   `json:"cumulative,omitempty"`
	Sampled     bool   `json:"sampled,omitempty"`
}

// SampleTypes derives the sample_type_config of p: one entry per sample
// type, with units from the pprof unit ("bytes"; "count" becomes "objects"
// or "goroutines" when the type name says so, "samples" otherwise;
// "nanoseconds" stays), aggregation "average" for in-use types, goroutine
// counts and the live-arenas profile's levels and "sum" for the rest, and cumulative false because the
// agent always sends per-interval values. Pyroscope ingests only the sample
// types listed, so every type is listed.
func SampleTypes(p *profile.Profile) map[string]SampleTypeConfig {
	m := make(map[string]SampleTypeConfig, len(p.SampleType))
	holdings := pprofmt.IsHoldings(p) // levels, like in-use memory
	for _, st := range p.SampleType {
		c := SampleTypeConfig{Units: st.Unit, Aggregation: "sum"}
		switch st.Unit {
		case "count", "":
			switch {
			case strings.Contains(st.Type, "object"):
				c.Units = "objects"
			case strings.HasPrefix(st.Type, "goroutine"):
				c.Units = "goroutines"
			default:
				c.Units = "samples"
			}
		}
		if strings.HasPrefix(st.Type, "inuse") || strings.HasPrefix(st.Type, "goroutine") || holdings {
			c.Aggregation = "average"
		}
		m[st.Type] = c
	}
	return m
}

// RetryableError marks an upload error as worth retrying, optionally after
// a wait the server asked for.
type RetryableError struct {
	Err error
	// After is the server's Retry-After, 0 if none.
	After time.Duration
}

// Error returns the wrapped error's message.
func (e *RetryableError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *RetryableError) Unwrap() error { return e.Err }

// Retryable wraps err so that the agent retries the upload, waiting after
// (capped by Config.RetryAfterMax) instead of its backoff when after > 0.
// It returns nil for a nil err.
func Retryable(err error, after time.Duration) error {
	if err == nil {
		return nil
	}
	return &RetryableError{Err: err, After: max(after, 0)}
}

// IsRetryable reports whether err asks for a retry, and the wait the server
// asked for (0 if none).
func IsRetryable(err error) (bool, time.Duration) {
	var re *RetryableError
	if errors.As(err, &re) {
		return true, re.After
	}
	return false, 0
}

// UnconfirmedError marks an upload error after which the destination may
// or may not hold the profile: the request was sent, but no answer came
// (the attempt timed out, the connection broke). The agent counts such a
// profile as unconfirmed and does not retry it, since a destination that
// did store it would then hold it twice (Pyroscope's ingest adds what it
// receives; it does not deduplicate).
type UnconfirmedError struct {
	Err error
}

// Error returns the wrapped error's message.
func (e *UnconfirmedError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *UnconfirmedError) Unwrap() error { return e.Err }

// Unconfirmed wraps err as an [UnconfirmedError]; it returns nil for a nil
// err.
func Unconfirmed(err error) error {
	if err == nil {
		return nil
	}
	return &UnconfirmedError{Err: err}
}

// IsUnconfirmed reports whether err is (or wraps) an [UnconfirmedError].
func IsUnconfirmed(err error) bool {
	var ue *UnconfirmedError
	return errors.As(err, &ue)
}

// uploaderFunc adapts a function to Uploader.
type uploaderFunc struct {
	name string
	fn   func(context.Context, *Upload) error
}

func (f uploaderFunc) Upload(ctx context.Context, u *Upload) error { return f.fn(ctx, u) }
func (f uploaderFunc) String() string                              { return f.name }

// UploaderFunc turns fn into an [Uploader] named name.
func UploaderFunc(name string, fn func(ctx context.Context, u *Upload) error) Uploader {
	if name == "" {
		name = "func"
	}
	return uploaderFunc{name: name, fn: fn}
}
