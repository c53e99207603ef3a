package pyroread

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// TestReadVarianceSums: a range holding uploads with the variance sums
// (label arenaprof_var="1") and older ones of the same mean without them
// reads as two samples: the new one with its alloc_var and alloc_wbound,
// the old one with zeros and without the label, so that the report reads
// it conservatively.
func TestReadVarianceSums(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ProfileTypeID string `json:"profileTypeID"`
			End           int64  `json:"end"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/LabelValues"):
			json.NewEncoder(w).Encode(map[string]any{"names": []string{typeID("memory", allocTypes[0].suffix)}})
		case strings.HasSuffix(r.URL.Path, "/SelectSeries"):
			_, suffix, _ := strings.Cut(req.ProfileTypeID, ":")
			i := slices.IndexFunc(allocTypes, func(t allocType) bool { return t.suffix == suffix })
			series := `{"labels":[{"name":"memory","value":"arena"},{"name":"sampling_mean","value":"4096"},{"name":"arenaprof_var","value":"1"}],"points":[{"value":%d,"timestamp":"%d"}]}`
			old := `,{"labels":[{"name":"memory","value":"arena"},{"name":"sampling_mean","value":"4096"}],"points":[{"value":%d,"timestamp":"%d"}]}`
			if allocTypes[i].idx >= pprofmt.NumSampleTypes {
				old = "" // old uploads have no variance sums
			} else {
				old = fmt.Sprintf(old, 7+i, req.End)
			}
			fmt.Fprintf(w, `{"series":[`+series+old+`]}`, 100+i, req.End)
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
	p, err := c.Read(context.Background(), Query{Selector: sel, From: end.Add(-time.Hour), To: end})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SampleType) != pprofmt.NumVarSampleTypes || len(p.Sample) != 2 {
		t.Fatalf("%d sample types, %d samples", len(p.SampleType), len(p.Sample))
	}
	for _, s := range p.Sample {
		marked := len(s.Label[pprofmt.LabelVarFormat]) == 1
		for i, at := range allocTypes {
			want := int64(100 + i)
			if !marked {
				want = int64(7 + i)
				if at.idx >= pprofmt.NumSampleTypes {
					want = 0
				}
			}
			if s.Value[at.idx] != want {
				t.Errorf("marked %v: %s = %d, want %d", marked, at.suffix, s.Value[at.idx], want)
			}
		}
	}
}
