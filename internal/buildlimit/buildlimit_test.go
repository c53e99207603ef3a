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

// TestAcquire: a free slot is taken at once; a full limiter refuses at
// once with no wait, after the wait, or when the context ends, and gives
// a waiting request the slot released while it waits.
func TestAcquire(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		full    bool            // every slot taken before Acquire
		ctx     context.Context // nil: context.Background()
		wait    time.Duration
		release bool // a slot is released while Acquire waits
		want    bool
	}{
		{"free, no wait", false, nil, 0, false, true},
		{"free, ended context", false, ended, -1, false, true},
		{"full, no wait", true, nil, 0, false, false},
		{"full, wait runs out", true, nil, 10 * time.Millisecond, false, false},
		{"full, context ends", true, ended, -1, false, false},
		{"full, released while waiting", true, nil, -1, true, true},
		{"full, released within the wait", true, nil, time.Minute, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := New(2)
			if tc.full {
				for range l.Max() {
					if !l.Acquire(context.Background(), 0) {
						t.Fatal("free slot refused")
					}
				}
			}
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			if tc.release {
				time.AfterFunc(10*time.Millisecond, l.Release)
			}
			if got := l.Acquire(ctx, tc.wait); got != tc.want {
				t.Fatalf("Acquire = %v, want %v", got, tc.want)
			}
			// The slots free after: none taken and none given back but
			// those above.
			want := l.Max()
			if tc.full {
				want = 0
			}
			if tc.release {
				want++
			}
			if tc.want {
				want--
			}
			free := 0
			for l.Acquire(context.Background(), 0) {
				free++
			}
			if free != want {
				t.Errorf("%d slots free after, want %d", free, want)
			}
		})
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
