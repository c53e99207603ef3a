package buildlimit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestNewMax(t *testing.T) {
	for _, c := range []struct{ n, want int }{{1, 1}, {3, 3}, {0, DefaultMaxBuilds}, {-2, DefaultMaxBuilds}} {
		if got := New(c.n).Max(); got != c.want {
			t.Errorf("New(%d).Max() = %d, want %d", c.n, got, c.want)
		}
	}
}

// TestAcquire: a free slot is taken at once; a full limiter refuses after
// the wait, or when the context ends, and serves again after a Release.
func TestAcquire(t *testing.T) {
	l := New(1)
	ctx := context.Background()
	if !l.Acquire(ctx, 0) {
		t.Fatal("free slot refused")
	}
	if l.Acquire(ctx, 10*time.Millisecond) {
		t.Fatal("second slot of a limiter of one")
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if l.Acquire(done, -1) {
		t.Fatal("slot given after the context ended")
	}
	l.Release()
	if !l.Acquire(ctx, 0) {
		t.Fatal("released slot refused")
	}
}

// TestShare: a shared handler sees the shared limiter, another its own.
func TestShare(t *testing.T) {
	shared, own := New(2), New(1)
	var got *Limiter
	h := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = For(r, own) })
	for _, c := range []struct {
		name string
		h    http.Handler
		want *Limiter
	}{{"shared", Share(shared, h), shared}, {"own", h, own}} {
		c.h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
		if got != c.want {
			t.Errorf("%s: limiter of %d slots, want %d", c.name, got.Max(), c.want.Max())
		}
	}
}
