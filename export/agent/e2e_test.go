package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/export/agent"
	"github.com/arenaprof/arenaprof/profiler"
	"github.com/arenaprof/arenaprof/report"
)

// e2eRecord is the type the end-to-end workload allocates.
type e2eRecord struct{ a, b, c, d uint64 }

// TestPyroscopeEndToEnd uploads an arena profile to a real Pyroscope server
// and reads it back through the server's own query API: every arena sample
// type must be listed, and the server's stored alloc_space total must equal
// what was pushed. The server's base URL comes from ARENAPROF_PYROSCOPE_URL;
// .ci/run starts the real server from ../shared/pyroscope and sets it. To run
// it against your own server:
//
//	ARENAPROF_PYROSCOPE_URL=http://127.0.0.1:4040 go test ./export/agent -run EndToEnd
func TestPyroscopeEndToEnd(t *testing.T) {
	base := os.Getenv("ARENAPROF_PYROSCOPE_URL")
	if base == "" {
		t.Skip("ARENAPROF_PYROSCOPE_URL is not set: no Pyroscope server to test against (.ci/run starts one)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	p, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	a := arena.NewArena(arena.WithSeed(7, 11))
	const n = 200000 // 6.4 MB of 32-byte records: about 60 samples at the default mean
	for range n {
		arena.New[e2eRecord](a)
	}
	prof, err := export.Build(p.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	var pushed int64
	for _, s := range prof.Sample {
		pushed += s.Value[export.IndexAllocSpace]
	}
	if pushed == 0 {
		t.Fatal("the workload produced no samples")
	}
	var data bytes.Buffer
	if err := prof.Write(&data); err != nil {
		t.Fatal(err)
	}

	app := fmt.Sprintf("arenaprof_e2e_%d", time.Now().UnixNano())
	up, err := agent.NewPyroscope(agent.PyroscopeConfig{URL: base})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	until := time.Now().Truncate(time.Second)
	from := until.Add(-10 * time.Second)
	if err := up.Upload(ctx, &agent.Upload{
		AppName: app, Profile: "arena", From: from, Until: until,
		Data: data.Bytes(), SampleTypes: agent.SampleTypes(prof),
	}); err != nil {
		t.Fatalf("upload rejected by the real server: %v", err)
	}

	want := []string{"alloc_objects", "alloc_space", "inuse_objects", "inuse_space", "alloc_samples", "alloc_tail"}
	var ids map[string]string
	for {
		ids, err = profileTypes(ctx, base, from, until.Add(time.Minute))
		if err == nil && len(ids) >= len(want) && hasAll(ids, want) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("server lists sample types %v (err %v); want %v", ids, err, want)
		case <-time.After(500 * time.Millisecond):
		}
	}
	id := ids["alloc_space"]
	var stored int64
	for {
		stored, err = renderTotal(ctx, base, id, app+".arena", from, until.Add(time.Minute))
		if err == nil && stored == pushed {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("stored alloc_space %d (err %v), pushed %d", stored, err, pushed)
		case <-time.After(500 * time.Millisecond):
		}
	}

	// The interval from the server's own raw sums must hold the true bytes.
	// At confidence 1-1e-6 a false failure has probability below 1e-6.
	samples, err := renderTotal(ctx, base, ids["alloc_samples"], app+".arena", from, until.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	tail, err := renderTotal(ctx, base, ids["alloc_tail"], app+".arena", from, until.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	iv, err := profiler.ComputeInterval(samples, tail, prof.Period, 1-1e-6, report.WindowOf(prof))
	if err != nil {
		t.Fatal(err)
	}
	const truth = n * 32
	if truth < iv.Lo || truth > iv.Hi {
		t.Errorf("true bytes %d outside the interval [%.0f, %.0f] from the server's sums (s=%d, u=%d)", truth, iv.Lo, iv.Hi, samples, tail)
	}
	t.Logf("pushed %d bytes of alloc_space, the server stores %d; true %d; interval from the server's sums (s=%d) [%.0f, %.0f]",
		pushed, stored, truth, samples, iv.Lo, iv.Hi)
}

func hasAll(ids map[string]string, want []string) bool {
	for _, w := range want {
		if ids[w] == "" {
			return false
		}
	}
	return true
}

// profileTypes asks the server's querier for its profile types and returns
// the ID of each arena sample type, keyed by sample type name.
func profileTypes(ctx context.Context, base string, from, until time.Time) (map[string]string, error) {
	body := fmt.Sprintf(`{"start":%d,"end":%d}`, from.UnixMilli(), until.UnixMilli())
	var resp struct {
		ProfileTypes []struct {
			ID         string `json:"ID"`
			SampleType string `json:"sampleType"`
			PeriodType string `json:"periodType"`
		} `json:"profileTypes"`
	}
	if err := post(ctx, base+"/querier.v1.QuerierService/ProfileTypes", body, &resp); err != nil {
		return nil, err
	}
	ids := map[string]string{}
	for _, pt := range resp.ProfileTypes {
		if pt.PeriodType == "space" {
			ids[pt.SampleType] = pt.ID
		}
	}
	return ids, nil
}

// renderTotal returns the total of a profile type for one service, from the
// server's render endpoint (the flame graph's numTicks).
func renderTotal(ctx context.Context, base, id, service string, from, until time.Time) (int64, error) {
	q := url.Values{}
	q.Set("query", fmt.Sprintf(`%s{service_name=%q}`, id, service))
	q.Set("from", fmt.Sprint(from.Unix()))
	q.Set("until", fmt.Sprint(until.Unix()))
	q.Set("format", "json")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/pyroscope/render?"+q.Encode(), nil)
	if err != nil {
		return 0, err
	}
	var resp struct {
		Flamebearer struct {
			NumTicks int64 `json:"numTicks"`
		} `json:"flamebearer"`
	}
	if err := do(req, &resp); err != nil {
		return 0, err
	}
	return resp.Flamebearer.NumTicks, nil
}

func post(ctx context.Context, u, body string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	return do(req, v)
}

func do(req *http.Request, v any) error {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %.300s", req.URL.Path, resp.Status, b)
	}
	return json.Unmarshal(b, v)
}
