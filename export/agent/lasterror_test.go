package agent

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// TestLastErrorKeepsCause checks that a destination whose uploads keep
// failing, behind a queue of one that overflows at every collection,
// reports the transport or server error as LastError, and the overflow
// apart in QueueFull (a part of Dropped) and LastQueueFullTime, also after
// Stop cancels the upload in flight. Nothing here is random: the agent
// retries without bound, so the queue of one must overflow.
func TestLastErrorKeepsCause(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String()
	l.Close()
	tests := []struct {
		name  string
		up    func(t *testing.T) Uploader
		cause string // in LastError
	}{
		{"pyroscope refusing connections", func(t *testing.T) Uploader {
			u, err := NewPyroscope(PyroscopeConfig{URL: refused})
			if err != nil {
				t.Fatal(err)
			}
			return u
		}, "refused"},
		{"server error", func(*testing.T) Uploader {
			return &recorder{fail: func(context.Context, int) error { return Retryable(errors.New("503 service unavailable"), 0) }}
		}, "503 service unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs syncBuffer
			cfg := fastConfig([]Source{&testSource{name: "arena"}}, tt.up(t))
			cfg.Interval = 5 * time.Millisecond
			cfg.QueueSize = 1
			cfg.MaxRetries = 0 // retry without bound ...
			cfg.MaxRetryTime = time.Hour
			cfg.Logger = debugLogger(&logs)
			a, err := Start(cfg)
			if err != nil {
				t.Fatal(err)
			}
			check := func(when string, s Stats) {
				t.Helper()
				d := s.Destinations[0]
				for _, e := range []string{s.LastError, d.LastError} {
					if !strings.Contains(e, tt.cause) || strings.Contains(e, "queue") {
						t.Errorf("%s: LastError %q, want the cause %q", when, e, tt.cause)
					}
				}
				if s.QueueFull < 2 || d.QueueFull != s.QueueFull || s.Dropped < s.QueueFull ||
					d.LastQueueFullTime.IsZero() || !s.LastQueueFullTime.Equal(d.LastQueueFullTime) || s.LastErrorTime.IsZero() {
					t.Errorf("%s: stats %+v, want QueueFull >= 2 within Dropped and its time", when, s)
				}
			}
			// ... so the queue of one overflows at each collection.
			waitFor(t, "two overflows", func() bool { return a.Stats().QueueFull >= 2 })
			check("running", a.Stats())
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			if err := a.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Stop: %v, want the deadline exceeded (the upload in flight never ends)", err)
			}
			s := a.Stats()
			check("stopped", s)
			checkBalance(t, s)
			if out := logs.String(); !strings.Contains(out, "upload queue full") || !strings.Contains(out, tt.cause) {
				t.Errorf("the overflow's log line does not name the cause %q:\n%s", tt.cause, out)
			}
		})
	}
}
