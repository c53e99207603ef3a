package agent

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/rss"
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
// If the Uploader implements io.Closer, Close is called once when the agent
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
	// Data is the gzip-compressed pprof protobuf. When every destination
	// of the agent is a Pyroscope destination, it holds the profile as
	// they send it (see [NewPyroscope]: string labels, type frames), so
	// that the agent compresses each profile once.
	Data []byte

	// sampleTypes describes each sample type of the profile for
	// Pyroscope's sample_type_config (see sampleTypesOf); nil in an
	// Upload made outside the agent, whose types are then read from Data
	// (see Upload.types).
	sampleTypes map[string]sampleTypeConfig
	// typesJSON is sampleTypes marshalled, for the sample_type_config
	// part; nil in an Upload made outside the agent.
	typesJSON []byte
	// pyroscope holds the encodings of a memory profile that Pyroscope
	// destinations send, without type frames and with them (see
	// pyroscopeData), when a destination of the agent asked for them.
	pyroscope [2][]byte
	// parsed is the profile Data encodes, when an uploader asked for it
	// (see parsedReader); read-only.
	parsed *profile.Profile
}

// types returns u's sample types: those the agent derived, or for an
// Upload made by hand, those of the profile Data holds (none if it does not
// decode).
func (u *Upload) types() map[string]sampleTypeConfig {
	if u.sampleTypes != nil {
		return u.sampleTypes
	}
	p, err := profile.ParseData(u.Data)
	if err != nil {
		return nil
	}
	return sampleTypesOf(p)
}

// parsedReader is implemented by uploaders that convert the profile
// rather than send its bytes: the agent then hands them the profile it
// encoded, which saves them parsing Data again.
type parsedReader interface {
	readsParsed()
}

// sampleTypeConfig tells a Pyroscope server how to present one sample
// type; it marshals to the JSON of the sample_type_config part.
type sampleTypeConfig struct {
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

// sampleTypesOf derives the sample_type_config of p (see
// sampleTypeConfigs).
func sampleTypesOf(p *profile.Profile) map[string]sampleTypeConfig {
	return sampleTypeConfigs(p.SampleType, pprofmt.IsHoldings(p))
}

// sampleTypeConfigs derives the sample_type_config of a profile's sample
// types (holdings: of a live-arenas profile, whose values are levels, like
// in-use memory): one entry per sample
// type, with units from the pprof unit ("bytes"; "count" becomes "objects"
// or "goroutines" when the type name says so, "samples" otherwise;
// "nanoseconds" stays), aggregation "average" for in-use types, goroutine
// counts and the live-arenas profile's levels and "sum" for the rest, and cumulative false because the
// agent always sends per-interval values. Pyroscope ingests only the sample
// types listed, so every type is listed, and so are the variance sums a
// Pyroscope upload adds to a profile with alloc_samples (see
// pyroscopeOptions; a server ignores a listed type the profile lacks).
func sampleTypeConfigs(types []*profile.ValueType, holdings bool) map[string]sampleTypeConfig {
	m := make(map[string]sampleTypeConfig, len(types)+2)
	if !holdings && slices.ContainsFunc(types, func(t *profile.ValueType) bool { return t.Type == "alloc_samples" }) {
		types = append(slices.Clip(types), pprofmt.VarianceSampleTypes()...)
	}
	for _, st := range types {
		c := sampleTypeConfig{Units: st.Unit, Aggregation: "sum"}
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
		if strings.HasPrefix(st.Type, "inuse") || strings.HasPrefix(st.Type, "goroutine") || holdings || rssLevel[st.Type] {
			c.Aggregation = "average"
		}
		m[st.Type] = c
	}
	return m
}

// rssLevel names the sample types of the resident-memory profile: levels
// read at one moment, averaged over time like in-use bytes.
var rssLevel = map[string]bool{rss.SampleResident: true, rss.SampleHeapCount: true}

// retryableError marks an upload error as worth retrying, optionally after
// a wait the server asked for (After, 0 if none).
type retryableError struct {
	Err   error
	After time.Duration
}

func (e *retryableError) Error() string { return e.Err.Error() }
func (e *retryableError) Unwrap() error { return e.Err }

// Retryable wraps err so that the agent retries the upload (within
// Config.MaxRetryTime), waiting after (capped by Config.RetryAfterMax)
// instead of its backoff when after > 0, e.g. a server's Retry-After. An
// [Uploader] returns it for errors after which the destination surely
// stored nothing: a connection refused, a 5xx or 429 answer. It returns
// nil for a nil err.
func Retryable(err error, after time.Duration) error {
	if err == nil {
		return nil
	}
	return &retryableError{Err: err, After: max(after, 0)}
}

// isRetryable reports whether err asks for a retry, and the wait the server
// asked for (0 if none).
func isRetryable(err error) (bool, time.Duration) {
	var re *retryableError
	if errors.As(err, &re) {
		return true, re.After
	}
	return false, 0
}

// unconfirmedError marks an upload error after which the destination may
// or may not hold the profile (see [Unconfirmed]).
type unconfirmedError struct {
	Err error
}

func (e *unconfirmedError) Error() string { return e.Err.Error() }
func (e *unconfirmedError) Unwrap() error { return e.Err }

// Unconfirmed wraps err to say that the destination may have stored the
// profile although the upload failed: the request was sent but no answer
// came (the attempt timed out, the connection broke). The agent counts
// such a profile unconfirmed (see [DestinationStats]) and does not retry
// it, since a destination that did store it would then hold it twice
// (Pyroscope's ingest adds what it receives; it does not deduplicate).
// It returns nil for a nil err.
func Unconfirmed(err error) error {
	if err == nil {
		return nil
	}
	return &unconfirmedError{Err: err}
}

// isUnconfirmed reports whether err is (or wraps) an unconfirmedError.
func isUnconfirmed(err error) bool {
	var ue *unconfirmedError
	return errors.As(err, &ue)
}

// uploader returns u as an Uploader, or, with an error, a nil Uploader
// rather than one holding a nil pointer.
func uploader[U Uploader](u U, err error) (Uploader, error) {
	if err != nil {
		return nil, err
	}
	return u, nil
}
