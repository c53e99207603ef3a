// Package buildlimit bounds the profile builds that package export's
// handlers run at once. Each handler has a [Limiter] of its own; [Share]
// makes the handlers of one service (those arenaprof.Start mounts) take
// their slots from one Limiter instead, so that together they hold the
// memory of at most that many profiles, whatever the number of clients.
package buildlimit

import (
	"context"
	"net/http"
	"time"

	"golang.org/x/sync/semaphore"
)

// DefaultMaxBuilds is the default bound of a [Limiter]. One build of a
// full collector (16384 sites, the profiler's default bound) takes 30-50 ms
// of one core and allocates about 7 MB (the arena profile) or 15 MB (the
// memory profile); one at a time leaves a service on two cores one core of
// its own however many clients ask, while a request that arrives during a
// build waits for it.
const DefaultMaxBuilds = 1

// A Limiter bounds the profile builds that run at once in the handlers
// that use it: each request takes a slot from the moment it reads the
// profiler until its profile is written to the client. The slots are a
// golang.org/x/sync/semaphore.Weighted, which serves waiting requests in
// the order they came.
type Limiter struct {
	sem *semaphore.Weighted
	max int
}

// New returns a Limiter that lets n builds run at once; n below 1 selects
// [DefaultMaxBuilds].
func New(n int) *Limiter {
	if n < 1 {
		n = DefaultMaxBuilds
	}
	return &Limiter{sem: semaphore.NewWeighted(int64(n)), max: n}
}

// Max returns the number of builds l lets run at once.
func (l *Limiter) Max() int { return l.max }

// Acquire takes a slot, waiting at most wait (wait < 0: without a bound)
// and not after ctx is done. It reports whether it got one; give it back
// with [Limiter.Release].
func (l *Limiter) Acquire(ctx context.Context, wait time.Duration) bool {
	if l.sem.TryAcquire(1) {
		return true
	}
	if wait == 0 {
		return false
	}
	if wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	return l.sem.Acquire(ctx, 1) == nil
}

// Release gives back a slot taken by [Limiter.Acquire].
func (l *Limiter) Release() { l.sem.Release(1) }

type contextKey struct{}

// Share returns h with l as the Limiter of every request it serves, in
// place of the handler's own.
func Share(l *Limiter, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), contextKey{}, l)))
	})
}

// For returns the Limiter [Share] gave the request r, or own.
func For(r *http.Request, own *Limiter) *Limiter {
	if l, ok := r.Context().Value(contextKey{}).(*Limiter); ok {
		return l
	}
	return own
}
