package pyroread

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/leaks"
)

// fakeFleet is a querier holding the in-use uploads of a few pods: per
// pod, kind and upload millisecond, the bytes of each function. It
// answers LabelValues, LabelNames, SelectSeries at a step of 1 ms and
// SelectMergeProfile over a range as Pyroscope does: the in-use of every
// upload in it, summed.
type fakeFleet struct {
	mu      sync.Mutex
	uploads map[[2]string]map[int64]map[string]int64 // by pod and kind, by ms, by function
	mean    string                                   // sampling_mean and memprofilerate
	drop    bool                                     // SelectMergeProfile drops a stack
	limit   time.Duration                            // max_query_length, if set
	calls   map[string]int
}

var (
	podRE    = regexp.MustCompile(`pod="([^"]*)"`)
	memoryRE = regexp.MustCompile(`memory="([^"]*)"`)
)

func (f *fakeFleet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	method := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	f.mu.Lock()
	f.calls[method]++
	f.mu.Unlock()
	body := new(bytes.Buffer)
	body.ReadFrom(r.Body)
	if method != "SelectMergeProfile" && f.limit > 0 {
		var req struct{ Start, End int64 }
		json.Unmarshal(body.Bytes(), &req)
		if time.Duration(req.End-req.Start)*time.Millisecond > f.limit {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"code":"invalid_argument","message":"the query time range exceeds the limit (max_query_length, actual: 1m, limit: %s)"}`, f.limit)
			return
		}
	}
	switch method {
	case "LabelValues":
		fmt.Fprint(w, `{"names":["memory:inuse_space:bytes:space:bytes","memory:alloc_space:bytes:space:bytes"]}`)
	case "LabelNames":
		fmt.Fprint(w, `{"names":["__name__","bytes","memory","memprofilerate","pod","sampling_mean","service_name","type"]}`)
	case "SelectSeries":
		var req struct{ Start, End int64 }
		json.Unmarshal(body.Bytes(), &req)
		var series []string
		for k, byMs := range f.uploads {
			meanLabel := "sampling_mean"
			extra := `{"name":"type","value":"main.T"}`
			if k[1] == "heap" {
				meanLabel, extra = "memprofilerate", `{"name":"bytes","value":"64"}`
			}
			var pts []string
			for ms, fns := range byMs {
				if ms <= req.Start || ms > req.End {
					continue
				}
				var sum int64
				for _, v := range fns {
					sum += v
				}
				pts = append(pts, fmt.Sprintf(`{"value":%d,"timestamp":"%d"}`, sum, ms))
			}
			series = append(series, fmt.Sprintf(`{"labels":[{"name":"service_name","value":"shop"},{"name":"pod","value":%q},{"name":"memory","value":%q},{"name":%q,"value":%q},%s],"points":[%s]}`,
				k[0], k[1], meanLabel, f.mean, extra, strings.Join(pts, ",")))
		}
		fmt.Fprintf(w, `{"series":[%s]}`, strings.Join(series, ","))
	case "SelectMergeProfile":
		fields := protoFields(body.Bytes())
		sel := string(fields[2].([]byte))
		start, end := int64(fields[3].(uint64)), int64(fields[4].(uint64))
		pod, kind := podRE.FindStringSubmatch(sel)[1], memoryRE.FindAllStringSubmatch(sel, -1)
		sums := map[string]int64{}
		for ms, fns := range f.uploads[[2]string{pod, kind[len(kind)-1][1]}] {
			if ms >= start && ms <= end {
				for fn, v := range fns {
					sums[fn] += v
				}
			}
		}
		p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "inuse_space", Unit: "bytes"}}, PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"}}
		id := uint64(0)
		for fn, v := range sums {
			if f.drop && fn == "main.cache" {
				continue
			}
			id++
			fun := &profile.Function{ID: id, Name: fn}
			loc := &profile.Location{ID: id, Line: []profile.Line{{Function: fun}}}
			p.Function, p.Location = append(p.Function, fun), append(p.Location, loc)
			p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{v}})
		}
		p.Write(w)
	default:
		http.Error(w, "unexpected", http.StatusNotFound)
	}
}

// protoFields reads the top-level fields of a protobuf message: varints
// as uint64, length-delimited ones as bytes.
func protoFields(b []byte) map[int]any {
	out := map[int]any{}
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		b = b[n:]
		switch tag & 7 {
		case 0:
			v, n := binary.Uvarint(b)
			b = b[n:]
			out[int(tag>>3)] = v
		case 2:
			l, n := binary.Uvarint(b)
			out[int(tag>>3)] = b[n : n+int(l)]
			b = b[n+int(l):]
		default:
			return out
		}
	}
	return out
}

// fleetTruth builds the uploads: pod "a" leaks main.leak at 2,048 B/s
// in its arenas beside a flat main.cache; pod "b" has the cache and a
// sawtooth main.churn, and restarts (its uploads stop for 30 s) after
// its fifth; both upload a flat Go heap 3 ms after each arena upload.
func fleetTruth(t0 int64, n int) map[[2]string]map[int64]map[string]int64 {
	up := map[[2]string]map[int64]map[string]int64{}
	add := func(pod, kind string, ms int64, fns map[string]int64) {
		k := [2]string{pod, kind}
		if up[k] == nil {
			up[k] = map[int64]map[string]int64{}
		}
		up[k][ms] = fns
	}
	for i := range n {
		ms := t0 + int64(i)*1000
		add("a", "arena", ms, map[string]int64{"main.leak": 2048 * int64(i+1), "main.cache": 10_000})
		add("a", "heap", ms+3, map[string]int64{"main.steady": 5000})
		bms := ms
		if i >= 5 {
			bms += 30_000
		}
		add("b", "arena", bms, map[string]int64{"main.cache": 10_000, "main.churn": 3000 + 2000*int64(i%2)})
		add("b", "heap", bms+3, map[string]int64{"main.steady": 5000})
	}
	return up
}

// TestReadLeaks reads a fake fleet: two pods told apart by their labels,
// a heap and an arena upload 3 ms apart as one snapshot, pod b's restart
// said and its series read after it, one query per batch of the fit (16)
// and for the first and last snapshot per pod and kind, and batch means
// that fit to the very rate and scatter of the snapshots they average.
func TestReadLeaks(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC).UnixMilli()
	f := &fakeFleet{uploads: fleetTruth(t0, 40), mean: "512", calls: map[string]int{}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c, err := NewClient(Config{URL: srv.URL, Parallel: 4})
	if err != nil {
		t.Fatal(err)
	}
	sel, _ := ParseSelector(`{service_name="shop"}`)
	q := LeaksQuery{Selector: sel, From: time.UnixMilli(t0 - 1000), To: time.UnixMilli(t0 + 80_000), By: "func"}
	rd, err := c.ReadLeaks(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.Pods) != 2 {
		t.Fatalf("%d pods, want 2", len(rd.Pods))
	}
	// 2 label queries, 2 SelectSeries, then per pod and kind 16 batches
	// and the first and last snapshot (pod b's 35 snapshots after its
	// restart: a fit of 18, 16 batches too).
	wantQueries := 4 + 4*18
	if rd.Queries != wantQueries || f.calls["SelectMergeProfile"] != wantQueries-4 || f.calls["SelectSeries"] != 2 {
		t.Errorf("%d queries (%v), want %d", rd.Queries, f.calls, wantQueries)
	}
	for _, p := range rd.Pods {
		if p.Labels["pod"] == "" || p.Labels["service_name"] != "shop" || len(p.Labels) != 2 {
			t.Errorf("pod labels %v, want service_name and pod", p.Labels)
		}
		switch p.Labels["pod"] {
		case "a":
			if len(p.Times) != 40 || p.Read != 40 || len(p.Notes) != 0 {
				t.Errorf("pod a: %d snapshots, %d read, notes %q; want 40, 40, none", len(p.Times), p.Read, p.Notes)
			}
		case "b":
			if len(p.Times) != 35 || p.Read != 40 || len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "the 5 snapshots before it are not read") {
				t.Errorf("pod b: %d snapshots, %d read, notes %q; want 35, 40 and the restart said", len(p.Times), p.Read, p.Notes)
			}
		}
		if p.Total[len(p.Total)-1] == 0 {
			t.Errorf("pod %v: no total", p.Labels)
		}
		secs := make([]float64, len(p.Times))
		for i, x := range p.Times {
			secs[i] = x.Sub(p.Times[0]).Seconds()
		}
		e, err := leaks.New(secs, 6, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range p.Groups {
			// The truth per snapshot, from the fake's uploads.
			truth := make([]float64, len(p.Times))
			for i, x := range p.Times {
				ms := x.UnixMilli()
				if g.Kind == "heap" {
					ms += 3
				}
				truth[i] = float64(f.uploads[[2]string{p.Labels["pod"], g.Kind}][ms][g.Key])
			}
			got, err := e.Fit(g.Y, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := e.Fit(truth, nil)
			if math.Abs(got.Rate-want.Rate) > 1e-9*max(1, math.Abs(want.Rate)) || math.Abs(got.Scatter-want.Scatter) > 1e-9*max(1, want.Scatter) {
				t.Errorf("pod %s %s %s: batch means fit %g (scatter %g), the snapshots %g (%g)", p.Labels["pod"], g.Kind, g.Key, got.Rate, got.Scatter, want.Rate, want.Scatter)
			}
			if g.First != truth[0] || g.Last != truth[len(truth)-1] {
				t.Errorf("pod %s %s %s: first %g last %g, want %g and %g", p.Labels["pod"], g.Kind, g.Key, g.First, g.Last, truth[0], truth[len(truth)-1])
			}
			for i := p.From; i < len(g.V); i++ {
				if g.V[i] != 512*g.Y[i] {
					t.Errorf("pod %s %s %s: variance %g at %d, want 512 times %g", p.Labels["pod"], g.Kind, g.Key, g.V[i], i, g.Y[i])
				}
			}
			if p.Labels["pod"] == "a" && g.Key == "main.leak" && math.Abs(got.Rate-2048) > 1e-6 {
				t.Errorf("main.leak at %g B/s, want 2048", got.Rate)
			}
		}
	}
}

// TestReadLeaksQueryLength: a server whose max_query_length is below
// the range is read again in pieces of that length, with the same pods
// and snapshots.
func TestReadLeaksQueryLength(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC).UnixMilli()
	f := &fakeFleet{uploads: fleetTruth(t0, 40), mean: "512", limit: time.Minute, calls: map[string]int{}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c, err := NewClient(Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	sel, _ := ParseSelector(`{service_name="shop"}`)
	rd, err := c.ReadLeaks(context.Background(), LeaksQuery{Selector: sel, From: time.UnixMilli(t0 - 1000), To: time.UnixMilli(t0 + 150_000), By: "type"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.Pods) != 2 || len(rd.Pods[0].Times) != 40 || len(rd.Pods[1].Times) != 35 {
		t.Errorf("%d pods read in pieces, want 2 of 40 and 35 snapshots", len(rd.Pods))
	}
}

// TestReadLeaksByLabel: grouped by type, each snapshot's bytes come
// from the series, exact, with no stack query; the Go heap's series,
// without a type, are one group "(none)".
func TestReadLeaksByLabel(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC).UnixMilli()
	f := &fakeFleet{uploads: fleetTruth(t0, 40), mean: "512", calls: map[string]int{}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c, err := NewClient(Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	sel, _ := ParseSelector(`{service_name="shop"}`)
	rd, err := c.ReadLeaks(context.Background(), LeaksQuery{Selector: sel, From: time.UnixMilli(t0 - 1000), To: time.UnixMilli(t0 + 80_000), By: "type"})
	if err != nil {
		t.Fatal(err)
	}
	if rd.Queries != 4 || f.calls["SelectMergeProfile"] != 0 {
		t.Errorf("%d queries (%v), want 4 and no stack query", rd.Queries, f.calls)
	}
	for _, p := range rd.Pods {
		if len(p.Groups) != 2 {
			t.Fatalf("pod %v: %d groups, want 2", p.Labels, len(p.Groups))
		}
		for _, g := range p.Groups {
			wantKey := map[string]string{"arena": "main.T", "heap": "(none)"}[g.Kind]
			if g.Key != wantKey {
				t.Errorf("pod %v: a %s group %q, want %q", p.Labels, g.Kind, g.Key, wantKey)
			}
			for i, x := range p.Times {
				ms := x.UnixMilli()
				if g.Kind == "heap" {
					ms += 3
				}
				var want float64
				for _, v := range f.uploads[[2]string{p.Labels["pod"], g.Kind}][ms] {
					want += float64(v)
				}
				if g.Y[i] != want || g.V[i] != 512*want {
					t.Errorf("pod %v %s at %d: %g (variance %g), want %g", p.Labels, g.Key, i, g.Y[i], g.V[i], want)
				}
			}
		}
	}
}

// TestReadLeaksRefused: a server whose stacks do not sum to its series,
// series without their sampling mean, too few snapshots, and a query
// bound too low are refused with the reason.
func TestReadLeaksRefused(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC).UnixMilli()
	tests := []struct {
		name        string
		n           int
		mean        string
		drop        bool
		maxRequests int
		want        string
	}{
		{"truncated", 20, "512", true, 0, "the server truncated or dropped stacks"},
		{"no mean", 20, "", false, 0, "has no label"},
		{"few", 6, "512", false, 0, "no pod has 8 snapshots or more"},
		{"bound", 20, "512", false, 20, "-max-requests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeFleet{uploads: fleetTruth(t0, tt.n), mean: tt.mean, drop: tt.drop, calls: map[string]int{}}
			srv := httptest.NewServer(f)
			defer srv.Close()
			c, err := NewClient(Config{URL: srv.URL, MaxRequests: tt.maxRequests})
			if err != nil {
				t.Fatal(err)
			}
			sel, _ := ParseSelector(`{service_name="shop"}`)
			_, err = c.ReadLeaks(context.Background(), LeaksQuery{Selector: sel, From: time.UnixMilli(t0 - 1000), To: time.UnixMilli(t0 + 80_000), By: "func"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadLeaks: %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

// TestBatches: the batches are internal/leaks' (the fit of batch-constant
// values is the fit of the values, TestReadLeaks); here their shape.
func TestBatches(t *testing.T) {
	for _, m := range []int{4, 16, 17, 40, 1800} {
		b := Batches(m)
		if b[0] != 0 || b[m-1] != min(m, leaks.MaxBatches)-1 {
			t.Errorf("Batches(%d) run from %d to %d", m, b[0], b[m-1])
		}
		for j := 1; j < m; j++ {
			if b[j] != b[j-1] && b[j] != b[j-1]+1 {
				t.Errorf("Batches(%d): %d after %d", m, b[j], b[j-1])
			}
		}
	}
}

// FuzzParseLeakSeries feeds arbitrary SelectSeries answers to the reader
// of in-use series: it never panics, and what it keeps has a kind, a
// positive mean read from its labels and whole non-negative bytes after
// the range's start.
func FuzzParseLeakSeries(f *testing.F) {
	f.Add(`{"series":[{"labels":[{"name":"memory","value":"arena"},{"name":"sampling_mean","value":"4096"},{"name":"pod","value":"a"}],"points":[{"value":8417280,"timestamp":"1795762228231"}]}]}`)
	f.Add(`{"series":[{"labels":[{"name":"memory","value":"heap"},{"name":"memprofilerate","value":"-1"}],"points":[{"value":1.5,"timestamp":"5"}]}]}`)
	f.Add(`{"series":[{"labels":[{"name":"memory","value":"heap"},{"name":"memprofilerate","value":"99999999999999999999"}],"points":[]}]}`)
	f.Add(`{}`)
	f.Fuzz(func(t *testing.T, answer string) {
		got, err := parseLeakSeries(strings.NewReader(answer), "t", 3)
		if err != nil {
			return
		}
		for _, s := range got {
			if (s.kind != "heap" && s.kind != "arena") || s.mean < 1 {
				t.Errorf("a series of kind %q and mean %d kept", s.kind, s.mean)
			}
			for ms, v := range s.points {
				if ms <= 3 || v <= 0 || v != math.Trunc(v) {
					t.Errorf("a point of %g bytes at %d kept", v, ms)
				}
			}
		}
	})
}

// FuzzParseLabelCount: a numeric label is read as the positive integer it
// writes, or refused.
func FuzzParseLabelCount(f *testing.F) {
	for _, s := range []string{"4096", "0", "-1", "1e3", " 7", "9223372036854775807", "9223372036854775808", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseLabelCount("bytes", s)
		if err != nil {
			return
		}
		if n < 1 || fmt.Sprint(n) != strings.TrimPrefix(s, "+") && fmt.Sprint(n) != strings.TrimLeft(strings.TrimPrefix(s, "+"), "0") {
			t.Errorf("ParseLabelCount(%q) = %d", s, n)
		}
	})
}
