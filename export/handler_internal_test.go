package export

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/profiler"
)

// stalledClient is a ResponseWriter that takes write deadlines, as the
// server's does, and whose writes block until the deadline passes: a
// client that never reads.
type stalledClient struct {
	h        http.Header
	mu       sync.Mutex
	deadline time.Time
	writing  chan struct{}
	once     sync.Once
}

func (w *stalledClient) Header() http.Header { return w.h }
func (w *stalledClient) WriteHeader(int)     {}

func (w *stalledClient) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	w.deadline = t
	w.mu.Unlock()
	return nil
}

func (w *stalledClient) Write(b []byte) (int, error) {
	w.once.Do(func() { close(w.writing) })
	w.mu.Lock()
	d := w.deadline
	w.mu.Unlock()
	if d.IsZero() {
		select {} // no deadline: blocked for ever, as the test fails
	}
	time.Sleep(time.Until(d))
	return 0, os.ErrDeadlineExceeded
}

// TestWriteLimit: a client that never reads holds its build slot only until
// the write deadline the handler sets; a server's own WriteTimeout is left
// alone.
func TestWriteLimit(t *testing.T) {
	defer func(d time.Duration) { writeLimit = d }(writeLimit)
	writeLimit = 200 * time.Millisecond
	p, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	h := Handler(p)
	w := &stalledClient{h: http.Header{}, writing: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		h.ServeHTTP(w, httptest.NewRequest("GET", "/x", nil))
		close(done)
	}()
	<-w.writing
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil)) // waits up to a second for the slot
	if rec.Code != http.StatusOK {
		t.Errorf("after a stalled client's deadline: %d, want 200", rec.Code)
	}
	<-done

	// With the server's WriteTimeout, no deadline of the handler's.
	srv := &http.Server{WriteTimeout: time.Hour}
	w = &stalledClient{h: http.Header{}, writing: make(chan struct{})}
	r := httptest.NewRequest("GET", "/x", nil)
	r = r.WithContext(context.WithValue(r.Context(), http.ServerContextKey, srv))
	limitWrite(w, r)
	if !w.deadline.IsZero() {
		t.Errorf("a deadline %v over the server's WriteTimeout", w.deadline)
	}
	limitWrite(w, httptest.NewRequest("GET", "/x", nil))
	if w.deadline.IsZero() {
		t.Error("no deadline without the server's WriteTimeout")
	}
}
