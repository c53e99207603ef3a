package pyroread

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/export/agent"
)

// TestReadRangeEndToEnd checks the reader's time range against a real
// Pyroscope server: ten uploads 10 s apart, one sample event each; a
// range read holds exactly the uploads stamped inside it, ends included,
// and none from before it (the server's SelectSeries reads a step before
// the range's start). It needs ARENAPROF_E2E=1 and a server at
// $ARENAPROF_PYROSCOPE_URL (.ci/run runs it against v1.19.3 and v2.2.1).
func TestReadRangeEndToEnd(t *testing.T) {
	base := os.Getenv("ARENAPROF_PYROSCOPE_URL")
	if os.Getenv("ARENAPROF_E2E") != "1" || base == "" {
		t.Skip("needs ARENAPROF_E2E=1 and a Pyroscope server at $ARENAPROF_PYROSCOPE_URL (.ci/run starts one)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	py, err := agent.NewPyroscope(agent.PyroscopeConfig{URL: base})
	if err != nil {
		t.Fatal(err)
	}
	defer py.(io.Closer).Close()
	app := fmt.Sprintf("fleet_range_%d", time.Now().UnixNano())
	t0 := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	for k := range 10 {
		var buf bytes.Buffer
		if err := oneEventProfile().Write(&buf); err != nil {
			t.Fatal(err)
		}
		from := t0.Add(time.Duration(k) * 10 * time.Second)
		u := &agent.Upload{AppName: app, Profile: "arena", From: from, Until: from.Add(10 * time.Second), Data: buf.Bytes()}
		if err := py.Upload(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	c, err := NewClient(Config{URL: base})
	if err != nil {
		t.Fatal(err)
	}
	sel, _ := ParseSelector(fmt.Sprintf(`{service_name=%q}`, app))
	for _, tt := range []struct {
		from, to time.Duration // from t0
		want     int64
		stacks   bool
	}{
		{-time.Minute, 2 * time.Minute, 10, false},
		{20 * time.Second, 50 * time.Second, 4, false},
		{20 * time.Second, 50 * time.Second, 4, true},
		{25 * time.Second, 26 * time.Second, 0, false},
		{90 * time.Second, 5 * time.Minute, 1, false},
	} {
		q := Query{Selector: sel, From: t0.Add(tt.from), To: t0.Add(tt.to), Stacks: tt.stacks}
		what := fmt.Sprintf("[t0%+v, t0%+v] holds %d uploads", tt.from, tt.to, tt.want)
		for {
			p, err := c.Read(ctx, q)
			var got int64
			if err == nil {
				for _, s := range p.Sample {
					got += s.Value[4] // alloc_samples
				}
			} else if tt.want == 0 && errors.Is(err, ErrNoData) {
				err = nil
			}
			if err == nil && got != tt.want {
				err = fmt.Errorf("%d sample events", got)
			}
			if err == nil {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s: %v", what, err)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// oneEventProfile returns an arenaprof arena profile of one sample: one
// event of an 8-byte object under the default mean, in one stack.
func oneEventProfile() *profile.Profile {
	p := &profile.Profile{
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            102400,
		DefaultSampleType: "alloc_space",
		Comments:          []string{"arenaprof window=both"},
	}
	for _, st := range [][2]string{{"alloc_objects", "count"}, {"alloc_space", "bytes"}, {"inuse_objects", "count"}, {"inuse_space", "bytes"}, {"alloc_samples", "count"}, {"alloc_tail", "bytes"}} {
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: st[0], Unit: st[1]})
	}
	f := &profile.Function{ID: 1, Name: "main.site0", SystemName: "main.site0", Filename: "/src/app/main.go"}
	l := &profile.Location{ID: 1, Address: 0x1000, Line: []profile.Line{{Function: f, Line: 42}}}
	p.Function, p.Location = []*profile.Function{f}, []*profile.Location{l}
	p.Sample = []*profile.Sample{{
		Location: []*profile.Location{l},
		Value:    []int64{102400 / 16, 102400, 0, 0, 1, 8},
		Label:    map[string][]string{"type": {"main.T"}},
		NumLabel: map[string][]int64{"bytes": {16}, "sampling_mean": {102400}},
		NumUnit:  map[string][]string{"bytes": {"bytes"}, "sampling_mean": {"bytes"}},
	}}
	return p
}
