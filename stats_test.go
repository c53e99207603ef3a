package arenaprof_test

import (
	"context"
	"encoding/json"
	"expvar"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof"
	"github.com/arenaprof/arenaprof/export/agent"
)

// TestStats: Stats, its handler on Config.Mux and its expvar.Var show the same counters:
// zero without an agent, uploads to a directory, and the failures and last
// error of a destination that refuses connections.
func TestStats(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://user:pa55-w0rd-xyz@" + l.Addr().String()
	l.Close()
	tests := []struct {
		name  string
		cfg   arenaprof.Config
		ready func(agent.Stats) bool
	}{
		{"no agent", arenaprof.Config{}, func(s agent.Stats) bool { return reflect.DeepEqual(s, agent.Stats{}) }},
		{"directory", arenaprof.Config{AppName: "shop", Dir: t.TempDir()}, func(s agent.Stats) bool {
			return s.Uploaded >= 2 && s.BytesUploaded > 0 && s.Failed == 0 && len(s.Destinations) == 1
		}},
		{"refused", arenaprof.Config{AppName: "shop", PyroscopeURL: refused}, func(s agent.Stats) bool {
			return s.Retried >= 1 && s.Uploaded == 0 && strings.Contains(s.LastError, "refused") && !s.LastErrorTime.IsZero()
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Interval = 10 * time.Millisecond
			cfg.Profiles = arenaProfiles
			cfg.Logger = slog.New(slog.DiscardHandler)
			mux := http.NewServeMux()
			cfg.Mux = mux // serves the stats at /debug/arenaprof/stats
			s, err := arenaprof.Start(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				// Within a second: the refused destination would be
				// retried for the whole default drain timeout.
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				s.Stop(ctx)
			}()
			deadline := time.Now().Add(10 * time.Second)
			for !tt.ready(s.Stats()) {
				if time.Now().After(deadline) {
					t.Fatalf("stats %+v", s.Stats())
				}
				time.Sleep(5 * time.Millisecond)
			}
			srv := httptest.NewServer(mux)
			defer srv.Close()
			resp, err := http.Get(srv.URL + "/debug/arenaprof/stats")
			if err != nil {
				t.Fatal(err)
			}
			var got agent.Stats
			err = json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			if err != nil || resp.Header.Get("Content-Type") != "application/json" || !tt.ready(got) {
				t.Errorf("handler: %+v, %v, %s", got, err, resp.Header.Get("Content-Type"))
			}
			resp, err = http.Post(srv.URL+"/debug/arenaprof/stats", "text/plain", strings.NewReader("x"))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("POST: %s", resp.Status)
			}
			name := fmt.Sprintf("arenaprof_test_%d", i)
			expvar.Publish(name, expvar.Func(func() any { return s.Stats() }))
			if v := expvar.Get(name).String(); strings.Contains(v, "pa55-w0rd-xyz") {
				t.Errorf("password in the stats: %s", v)
			}
			var fromVar agent.Stats
			if err := json.Unmarshal([]byte(expvar.Get(name).String()), &fromVar); err != nil || !tt.ready(fromVar) {
				t.Errorf("expvar: %+v, %v", fromVar, err)
			}
		})
	}
}

// TestStatsFinalAfterStop: once Stop returns, Stats no longer changes,
// and every profile collected has its final count (uploaded, or dropped
// where the synced writes fell 20 profiles behind the 5 ms collections,
// as on a loaded machine).
func TestStatsFinalAfterStop(t *testing.T) {
	s, err := arenaprof.Start(arenaprof.Config{AppName: "shop", Dir: t.TempDir(), Interval: 5 * time.Millisecond, Profiles: arenaProfiles})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := s.Stats()
	time.Sleep(20 * time.Millisecond)
	if after := s.Stats(); !reflect.DeepEqual(before, after) || before.Uploaded == 0 || before.Uploaded+before.Dropped+before.Failed+before.Unconfirmed != before.Collected {
		t.Fatalf("stats %+v then %+v", before, after)
	}
}
