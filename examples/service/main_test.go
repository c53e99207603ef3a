package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/report"
)

// Bytes each request allocates in its arena, as the arena counts them
// (sizes rounded up to 8):
//   - /orders?n=40: the order (40 B), 40 items (40 x 32 B) and 40 SKU
//     strings of 5 or 6 bytes (8 B each);
//   - /search: the 64 KiB scratch buffer, 200 pointers, 200 hits (32 B) and
//     200 titles of 22 to 24 bytes (24 B each).
const (
	ordersBytes = 40 + 40*32 + 40*8
	searchBytes = 64<<10 + 200*8 + 200*32 + 200*24
)

// TestService runs the service, loads it, and reads its profile back over
// HTTP: per endpoint label, the interval at 1-1e-7 holds the true bytes
// (the service's arena.Pool samples unseeded: the test fails falsely with
// probability below 2e-7, for two rows; at 1-1e-6 it was 2e-6, above the
// 1e-6 allowed a test). A row is missing with probability below exp(-120):
// /orders alone allocates 480 KiB, some 120 samples at mean 4096.
func TestService(t *testing.T) {
	defer hooks.SetMeanBytes(hooks.MeanBytes())
	const load = 300
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-load", "300", "-mean", "4096"}, &out, ready)
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("service exited: %v\n%s", err, out.String())
	case <-time.After(60 * time.Second):
		t.Fatal("service not ready after 60 s")
	}
	resp, err := http.Get("http://" + addr + "/debug/arenaprof")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	prof, err := report.Parse(bytes.NewReader(body), report.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	by := "label=endpoint"
	res, err := report.Table(prof, report.TableOptions{By: by, Confidence: 1 - 1e-7})
	if err != nil {
		t.Fatal(err)
	}
	truth := map[string]float64{"/orders": load * ordersBytes, "/search": load * searchBytes}
	for _, row := range res.Rows {
		want, ok := truth[row.Key]
		if !ok {
			t.Errorf("unexpected row %q", row.Key)
			continue
		}
		delete(truth, row.Key)
		if !(row.Lo <= want && want <= row.Hi) {
			t.Errorf("%s: true %.0f B outside [%.0f, %.0f] (%d events)", row.Key, want, row.Lo, row.Hi, row.Samples)
		}
	}
	if len(truth) > 0 {
		t.Errorf("no rows for %v", truth)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
