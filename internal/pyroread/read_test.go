package pyroread

import (
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

	"github.com/arenaprof/arenaprof/internal/pprofmt"
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
