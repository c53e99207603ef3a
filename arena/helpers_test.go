package arena

import (
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/testkit/hookstest"
)

// recorded is a copy of an event, taken during the consumer's call.
type recorded struct {
	hooks.Event
	frames []string // function names, leaf first
}

// recorder collects events while sampling at a given mean.
type recorder struct {
	mu     sync.Mutex
	events []recorded
	frames bool
}

// record registers a consumer at the given mean for the rest of the test.
// withFrames also symbolizes every event's stack.
func record(t testing.TB, mean int64, withFrames bool) *recorder {
	t.Helper()
	old := hooks.MeanBytes()
	if err := hooks.SetMeanBytes(mean); err != nil {
		t.Fatal(err)
	}
	r := &recorder{frames: withFrames}
	unregister := hooks.Register(hookstest.Func(r.add))
	t.Cleanup(func() {
		unregister()
		if err := hooks.SetMeanBytes(old); err != nil {
			t.Error(err)
		}
	})
	return r
}

func (r *recorder) add(e *hooks.Event) {
	c := recorded{Event: *e}
	c.Stack = slices.Clone(e.Stack)
	if r.frames {
		fr := runtime.CallersFrames(c.Stack)
		for {
			f, more := fr.Next()
			c.frames = append(c.frames, f.Function)
			if !more {
				break
			}
		}
	}
	r.mu.Lock()
	r.events = append(r.events, c)
	r.mu.Unlock()
}

// take returns the events recorded so far and forgets them.
func (r *recorder) take() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := r.events
	r.events = nil
	return ev
}

// labelsOf returns a's labels, with those of the context it was taken
// under added as its first slow path or event would add them.
func labelsOf(a *Arena) hooks.Labels {
	if a.lctx != nil {
		a.resolveLabels()
	}
	return a.labels
}
