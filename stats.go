package arenaprof

import (
	"encoding/json"
	"net/http"

	"github.com/arenaprof/arenaprof/export/agent"
)

// Stats returns the counters of the session's uploads: profiles collected,
// uploaded (and their bytes), retried, dropped, failed and unconfirmed,
// and the last upload error (without credentials) with its time, in total
// and per destination. It is the zero value when the session uploads
// nothing (no PyroscopeURL, Pyroscope, OTLPURL, OTLP or Dir). After Stop
// the counters are final.
func (s *Session) Stats() agent.Stats {
	if s == nil || s.agent == nil {
		return agent.Stats{}
	}
	return s.agent.Stats()
}

// statsHandler serves [Session.Stats] as JSON at /debug/arenaprof/stats of
// Config.Mux. It answers GET and HEAD; other methods get 405. Without a
// Mux, publish the stats with expvar:
//
//	expvar.Publish("arenaprof", expvar.Func(func() any { return s.Stats() }))
func (s *Session) statsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		b, err := json.MarshalIndent(s.Stats(), "", "  ")
		if err != nil {
			http.Error(w, "encoding stats: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if r.Method == http.MethodHead {
			return
		}
		w.Write(append(b, '\n'))
	})
}
