package pyroread

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/report"
)

func TestNamesWithData(t *testing.T) {
	tests := []struct {
		ids  []string
		want []string
	}{
		{[]string{"memory:alloc_space:bytes:space:bytes", "memory:inuse_space:bytes:space:bytes"}, []string{"memory"}},
		{[]string{"space:alloc_samples:count:space:bytes", "wallclock:wall:nanoseconds:wallclock:nanoseconds"}, []string{"space"}},
		{[]string{"space:alloc_tail:bytes:space:bytes", "memory:alloc_objects:count:space:bytes"}, []string{"memory", "space"}},
		// In-use types alone hold nothing a read adds up.
		{[]string{"space:inuse_space:bytes:space:bytes", "memory:inuse_objects:count:space:bytes"}, nil},
		// Other names are not the agent's.
		{[]string{"arenaprof:alloc_space:bytes:space:bytes", "process_cpu:cpu:nanoseconds:cpu:nanoseconds", "space:alloc_space:bytes:space:count"}, nil},
		{nil, nil},
	}
	for _, tt := range tests {
		if got := namesWithData(tt.ids); !slices.Equal(got, tt.want) {
			t.Errorf("namesWithData(%v) = %v, want %v", tt.ids, got, tt.want)
		}
	}
}

// TestReadNames: Read adds up the sums under the names the server lists
// for the selector, and reads nothing under the others.
func TestReadNames(t *testing.T) {
	// Per name, the sum of every alloc type (alloc_objects 1, alloc_space
	// 10, alloc_samples 100, alloc_tail 1000, times the name's factor).
	factor := map[string]int64{"memory": 1, "space": 3}
	tests := []struct {
		listed []string
		limit  time.Duration // the server's max_query_length, if any
		want   int64         // factor of the read's sums
		err    error
	}{
		{[]string{"memory"}, 0, 1, nil},
		{[]string{"space"}, 0, 3, nil},
		{[]string{"memory", "space"}, 0, 4, nil},
		// A read of 5 h from a server limited to 2 h: its LabelValues names
		// the limit, and the read goes again in three pieces.
		{[]string{"memory", "space"}, 2 * time.Hour, 12, nil},
		{nil, 0, 0, ErrNoData},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.listed), func(t *testing.T) {
			var asked []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var req struct {
					ProfileTypeID string   `json:"profileTypeID"`
					Name          string   `json:"name"`
					Matchers      []string `json:"matchers"`
					Start         int64    `json:"start"`
					End           int64    `json:"end"`
				}
				if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				if tt.limit > 0 && time.Duration(req.End-req.Start)*time.Millisecond > tt.limit {
					w.WriteHeader(http.StatusBadRequest)
					fmt.Fprintf(w, `{"code":"invalid_argument","message":"the query time range exceeds the limit (max_query_length, actual: 5h, limit: %s)"}`, tt.limit)
					return
				}
				switch {
				case strings.HasSuffix(r.URL.Path, "/LabelValues"):
					if req.Name != profileTypeLabel || len(req.Matchers) != 1 || !strings.Contains(req.Matchers[0], `service_name="shop"`) {
						http.Error(w, "unexpected LabelValues", http.StatusBadRequest)
						return
					}
					names := []string{"wallclock:wall:nanoseconds:wallclock:nanoseconds"}
					for _, n := range tt.listed {
						names = append(names, typeID(n, allocTypes[2].suffix), n+":inuse_space:bytes:space:bytes")
					}
					json.NewEncoder(w).Encode(map[string]any{"names": names})
				case strings.HasSuffix(r.URL.Path, "/SelectSeries"):
					asked = append(asked, req.ProfileTypeID)
					name, suffix, _ := strings.Cut(req.ProfileTypeID, ":")
					i := slices.IndexFunc(allocTypes, func(t allocType) bool { return t.suffix == suffix })
					if allocTypes[i].idx >= pprofmt.NumSampleTypes { // uploads without the variance sums
						fmt.Fprint(w, `{"series":[]}`)
						return
					}
					v := factor[name] * []int64{1, 10, 100, 1000}[i]
					fmt.Fprintf(w, `{"series":[{"labels":[{"name":"memory","value":"arena"},{"name":"sampling_mean","value":"4096"}],"points":[{"value":%d,"timestamp":"%d"}]}]}`, v, req.End)
				default:
					http.Error(w, "unexpected", http.StatusNotFound)
				}
			}))
			defer srv.Close()
			c, err := NewClient(Config{URL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			sel, _ := ParseSelector(`{service_name="shop"}`)
			end := time.Now()
			from := end.Add(-time.Hour)
			if tt.limit > 0 {
				from = end.Add(-5 * time.Hour)
			}
			p, err := c.Read(context.Background(), Query{Selector: sel, From: from, To: end})
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Read: %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			pieces := 1
			if tt.limit > 0 {
				pieces = 3
			}
			if len(asked) != len(allocTypes)*len(tt.listed)*pieces {
				t.Errorf("asked for %v", asked)
			}
			if len(p.Sample) != 1 {
				t.Fatalf("%d samples", len(p.Sample))
			}
			v := p.Sample[0].Value
			for i, idx := range []int{pprofmt.IndexAllocObjects, pprofmt.IndexAllocSpace, pprofmt.IndexAllocSamples, pprofmt.IndexAllocTail} {
				want := tt.want * []int64{1, 10, 100, 1000}[i]
				if v[idx] != want {
					t.Errorf("sample type %d = %d, want %d", idx, v[idx], want)
				}
			}
		})
	}
}

// fakeQuerier is a querier answering LabelValues with the memory profile
// types and SelectSeries with what series returns for a request, counting
// the requests; limit, if set, is its max_query_length.
type fakeQuerier struct {
	limit  time.Duration
	series func(typeID string, start, end int64) string
	merge  func(n int) []byte // the nth SelectMergeProfile answer
	calls  map[string]int
}

func (f *fakeQuerier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	method := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	f.calls[method]++
	if method == "SelectMergeProfile" {
		w.Write(f.merge(f.calls[method]))
		return
	}
	var req struct {
		ProfileTypeID string `json:"profileTypeID"`
		Start, End    int64
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if f.limit > 0 && time.Duration(req.End-req.Start)*time.Millisecond > f.limit {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"code":"invalid_argument","message":"the query time range exceeds the limit (max_query_length, actual: 7d, limit: %s)"}`, f.limit)
		return
	}
	switch method {
	case "LabelValues":
		fmt.Fprintf(w, `{"names":[%q]}`, typeID("memory", allocTypes[0].suffix))
	case "SelectSeries":
		w.Write([]byte(f.series(req.ProfileTypeID, req.Start, req.End)))
	default:
		http.Error(w, "unexpected", http.StatusNotFound)
	}
}

// arenaSeries is a SelectSeries answer of one arena series per type name,
// of value v at end.
func arenaSeries(end int64, v int, types ...string) string {
	var b strings.Builder
	b.WriteString(`{"series":[`)
	for i, t := range types {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"labels":[{"name":"memory","value":"arena"},{"name":"sampling_mean","value":"4096"},{"name":"type","value":%q}],"points":[{"value":%d,"timestamp":"%d"}]}`, t, v, end)
	}
	b.WriteString(`]}`)
	return b.String()
}

// TestReadMaxRequests: a read that would pass MaxRequests is refused
// before its queries are sent, naming the server's max_query_length, the
// range and -max-requests, with a value that would do.
func TestReadMaxRequests(t *testing.T) {
	end := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		limit       time.Duration
		from        time.Duration
		maxRequests int
		stacks      bool
		want        []string // in the error; none: the read succeeds
		wantSeries  int      // SelectSeries sent
	}{
		// Pieces are 1 ms shorter than the limit: SelectSeries asks for 1
		// ms before its piece.
		{"7d against 1m", time.Minute, 7 * 24 * time.Hour, 0, false, []string{"-max-requests 1000 allows", "max_query_length, 1m0s", "168h0m0s", "10081 pieces", "70575 queries or more", "narrow -from and -to; raise -max-requests (e.g. -max-requests 200000)"}, 0},
		{"1d against 1m, raised", time.Minute, 24 * time.Hour, 20000, false, nil, 6 * 1441},
		{"3h against 1h", time.Hour, 3 * time.Hour, 0, false, nil, 24},
		{"8d, default pieces, cap 40", 0, 8 * 24 * time.Hour, 40, false, []string{"Pyroscope's default max_query_length, 24h", "9 pieces", "63 queries or more", "e.g. -max-requests 200"}, 0},
		{"stacks past the cap", 0, time.Hour, 20, true, []string{"37 queries (30 for the stacks of 5 combinations", "e.g. -max-requests 50"}, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeQuerier{limit: tt.limit, calls: map[string]int{}, series: func(_ string, _, end int64) string {
				return arenaSeries(end, 1, "a", "b", "c", "d", "e")
			}}
			srv := httptest.NewServer(f)
			defer srv.Close()
			c, err := NewClient(Config{URL: srv.URL, MaxRequests: tt.maxRequests})
			if err != nil {
				t.Fatal(err)
			}
			sel, _ := ParseSelector(`{service_name="shop"}`)
			_, err = c.Read(context.Background(), Query{Selector: sel, From: end.Add(-tt.from), To: end, Labels: []string{"type"}, Stacks: tt.stacks})
			if f.calls["SelectSeries"] != tt.wantSeries || f.calls["SelectMergeProfile"] != 0 {
				t.Errorf("sent %v, want %d SelectSeries", f.calls, tt.wantSeries)
			}
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var le *LimitError
			if !errors.As(err, &le) || le.Flag != FlagMaxRequests {
				t.Fatalf("Read: %v, want a -max-requests refusal", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestReadPeak: peak uploads are refused, by the selector before any
// query, by the series' labels when a wider selector brings them.
func TestReadPeak(t *testing.T) {
	tests := []struct {
		sel       string
		wantCalls int
	}{
		{`{service_name="shop", memory="peak"}`, 0},
		{`{service_name="shop", memory=~"peak|arena"}`, 2},
		{`{service_name="shop", memory!="heap"}`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.sel, func(t *testing.T) {
			f := &fakeQuerier{calls: map[string]int{}, series: func(_ string, _, end int64) string {
				return fmt.Sprintf(`{"series":[{"labels":[{"name":"memory","value":"peak"},{"name":"sampling_mean","value":"4096"}],"points":[{"value":5,"timestamp":"%d"}]}]}`, end)
			}}
			srv := httptest.NewServer(f)
			defer srv.Close()
			c, err := NewClient(Config{URL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			sel, err := ParseSelector(tt.sel)
			if err != nil {
				t.Fatal(err)
			}
			end := time.Now()
			_, err = c.Read(context.Background(), Query{Selector: sel, From: end.Add(-time.Hour), To: end})
			if !errors.Is(err, ErrPeak) || !strings.Contains(err.Error(), "sum of peaks is no quantity") || !strings.Contains(err.Error(), "maximum") {
				t.Errorf("Read: %v, want ErrPeak", err)
			}
			if n := f.calls["LabelValues"] + f.calls["SelectSeries"]; n != tt.wantCalls {
				t.Errorf("%d queries sent, want %d", n, tt.wantCalls)
			}
		})
	}
}

// TestReadRetainedBound: a read whose combinations would keep more than a
// quarter of MaxMemory is refused, naming -max-memory; the value it
// suggests reads it.
func TestReadRetainedBound(t *testing.T) {
	// 8 pieces of 2 h, each answering 3,000 combinations of its own
	// (about 1,200 bytes kept each): 24,000 in all, about 29 MB kept.
	f := &fakeQuerier{limit: 2 * time.Hour, calls: map[string]int{}, series: func(_ string, start, _ int64) string {
		types := make([]string, 3000)
		for i := range types {
			types[i] = fmt.Sprintf("main.T%d_%d_%s", start, i, strings.Repeat("x", 300))
		}
		return arenaSeries(start+1, 3, types...)
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	sel, _ := ParseSelector(`{service_name="shop"}`)
	end := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	q := Query{Selector: sel, From: end.Add(-15 * time.Hour), To: end, Labels: []string{"type"}}
	c, err := NewClient(Config{URL: srv.URL, Limits: report.ParseOptions{MaxMemory: 64 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Read(context.Background(), q)
	var le *LimitError
	if !errors.As(err, &le) || le.Flag != FlagMaxMemory || !strings.Contains(err.Error(), "-max-memory 64MiB") {
		t.Fatalf("Read: %v, want a -max-memory refusal", err)
	}
	if le.Suggest < 4*29e6 {
		t.Fatalf("suggests %d bytes, below 4 times the 29 MB kept: %v", le.Suggest, err)
	}
	c, err = NewClient(Config{URL: srv.URL, Limits: report.ParseOptions{MaxMemory: le.Suggest}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Read(context.Background(), q)
	if err != nil {
		t.Fatalf("Read at the suggested %d bytes: %v", le.Suggest, err)
	}
	if len(p.Sample) != 8*3000 {
		t.Errorf("%d samples, want %d", len(p.Sample), 8*3000)
	}
}

// mergedProfile is a SelectMergeProfile answer: one sample of value v per
// stack, each stack of depth frames named after its index and prefix.
func mergedProfile(t *testing.T, prefix string, stacks, depth int, v int64) []byte {
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}}}
	for i := range stacks {
		s := &profile.Sample{Value: []int64{v}}
		for d := range depth {
			fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: fmt.Sprintf("%s.f%d_%d", prefix, i, d), Filename: "x.go"}
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn, Line: int64(d + 1)}}}
			p.Function = append(p.Function, fn)
			p.Location = append(p.Location, loc)
			s.Location = append(s.Location, loc)
		}
		p.Sample = append(p.Sample, s)
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestReadStacks: stacks are added up over the alloc types as their
// answers arrive, in the order they were first seen, and what they keep
// counts against MaxMemory: stacks of their own in every answer are
// refused, naming -max-memory.
func TestReadStacks(t *testing.T) {
	const perType = 3
	tests := []struct {
		name     string
		stacks   int
		distinct bool          // every answer's stacks its own
		span     time.Duration // the range read
		want     string
	}{
		{"read", 3, false, time.Hour, ""},
		// 12 answers (3 pieces, 4 types) of 2,000 stacks of their own,
		// about 22 MB kept, past the 16 MiB kept share.
		{"kept stacks refused", 2000, true, 50 * time.Hour, "what the read keeps passed 16MiB"},
		// One answer past the 12 MiB in which one profile is decoded.
		{"answer refused", 6000, false, time.Hour, "decoding the answer takes more than 12MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeQuerier{calls: map[string]int{}, series: func(_ string, _, end int64) string {
				return arenaSeries(end, perType*tt.stacks, "main.T")
			}, merge: func(n int) []byte {
				prefix := "main"
				if tt.distinct {
					prefix = fmt.Sprint("main", n)
				}
				return mergedProfile(t, prefix, tt.stacks, 3, perType)
			}}
			srv := httptest.NewServer(f)
			defer srv.Close()
			c, err := NewClient(Config{URL: srv.URL, Limits: report.ParseOptions{MaxMemory: 64 << 20}})
			if err != nil {
				t.Fatal(err)
			}
			sel, _ := ParseSelector(`{service_name="shop"}`)
			end := time.Now()
			p, err := c.Read(context.Background(), Query{Selector: sel, From: end.Add(-tt.span), To: end, Labels: []string{"type"}, Stacks: true})
			if tt.want != "" {
				var le *LimitError
				if !errors.As(err, &le) || le.Flag != FlagMaxMemory || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "-max-memory 64MiB") {
					t.Fatalf("Read: %v, want a -max-memory refusal", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Sample) != tt.stacks {
				t.Fatalf("%d samples, want %d", len(p.Sample), tt.stacks)
			}
			for i, s := range p.Sample {
				if name := s.Location[0].Line[0].Function.Name; name != fmt.Sprintf("main.f%d_0", i) {
					t.Errorf("sample %d is of %s", i, name)
				}
				for _, at := range allocTypes {
					want := int64(perType)
					if at.idx >= pprofmt.NumSampleTypes {
						want = 0 // the fake's series carry no arenaprof_var label: variance sums are not read
					}
					if s.Value[at.idx] != want {
						t.Errorf("sample %d: %s = %d, want %d", i, at.suffix, s.Value[at.idx], want)
					}
				}
			}
		})
	}
}
