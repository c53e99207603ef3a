package export_test

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/report"
)

type burstObj struct{ x [128]int64 } // 1 KiB

type steadyObj struct{ x [16]int64 }

//go:noinline
func burst(a *arena.Arena, n int) {
	for range n {
		arena.New[burstObj](a)
	}
}

// servedInuse serves url from the handler and returns the in-use row of
// the type typ, with intervals of confidence 1-1e-7 (a false failure
// probability below 1e-7 per check).
func servedInuse(t *testing.T, serve func(*httptest.ResponseRecorder), typ string) (report.TableRow, *profile.Profile) {
	t.Helper()
	rec := httptest.NewRecorder()
	serve(rec)
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	prof, err := profile.Parse(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := report.Table(prof, report.TableOptions{By: "type", InUse: true, Confidence: 1 - 1e-7})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		if strings.HasSuffix(r.Key, typ) {
			return r, prof
		}
	}
	return report.TableRow{}, prof
}

// TestPeakHoldsGoneBurst checks that a burst of arena memory released
// before the read is in the peak profile, its true bytes within the
// in-use interval of that moment, and absent from the in-use profile now.
func TestPeakHoldsGoneBurst(t *testing.T) {
	setMeanBytes(t, 4096)
	p := startProfiler(t)
	steady := arena.NewArena(arena.WithSeed(11, 1))
	defer steady.Free()
	for range 100 {
		arena.New[steadyObj](steady)
	}
	const n = 4000
	b := arena.NewArena(arena.WithSeed(12, 1))
	burst(b, n)
	b.Reset() // the burst is gone
	for range 100 {
		arena.New[steadyObj](steady)
	}

	peak, prof := servedInuse(t, func(rec *httptest.ResponseRecorder) {
		export.PeakHandler(p).ServeHTTP(rec, httptest.NewRequest("GET", "/debug/arenaprof/peak", nil))
		if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename="peak.pb.gz"` {
			t.Errorf("Content-Disposition %q", cd)
		}
	}, "burstObj")
	const truth = n * 1024
	t.Logf("peak: burst in-use %d in [%.0f, %.0f], truth %d", peak.Bytes, peak.Lo, peak.Hi, truth)
	if !(peak.Lo <= truth && truth <= peak.Hi) {
		t.Errorf("burst truth %d outside the peak's in-use interval [%.0f, %.0f]", truth, peak.Lo, peak.Hi)
	}
	if len(prof.Comments) == 0 || !strings.HasPrefix(prof.Comments[len(prof.Comments)-1], pprofmt.PeakCommentPrefix) {
		t.Errorf("comments %q", prof.Comments)
	}
	now, _ := servedInuse(t, func(rec *httptest.ResponseRecorder) {
		export.Handler(p).ServeHTTP(rec, httptest.NewRequest("GET", "/debug/arenaprof", nil))
	}, "burstObj")
	if now.Bytes != 0 {
		t.Errorf("burst still in use now: %d bytes", now.Bytes)
	}
}

// TestPeakWindow checks the seconds=N variant: the peak within the window.
func TestPeakWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("waits a second")
	}
	setMeanBytes(t, 4096)
	p := startProfiler(t)
	// A larger burst before the window is not its peak.
	b := arena.NewArena(arena.WithSeed(21, 1))
	burst(b, 8000)
	b.Reset()
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(200 * time.Millisecond)
		burst(b, 2000)
		b.Reset()
	}()
	row, _ := servedInuse(t, func(rec *httptest.ResponseRecorder) {
		export.PeakHandler(p).ServeHTTP(rec, httptest.NewRequest("GET", "/debug/arenaprof/peak?seconds=1", nil))
	}, "burstObj")
	<-done
	const truth = 2000 * 1024
	if !(row.Lo <= truth && truth <= row.Hi) {
		t.Errorf("window burst truth %d outside [%.0f, %.0f] (estimate %d)", truth, row.Lo, row.Hi, row.Bytes)
	}
	rec := httptest.NewRecorder()
	export.PeakHandler(p).ServeHTTP(rec, httptest.NewRequest("GET", "/debug/arenaprof/peak?seconds=0", nil))
	if rec.Code != 400 {
		t.Errorf("seconds=0: %d", rec.Code)
	}
}
