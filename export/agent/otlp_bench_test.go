package agent

import (
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/internal/testkit/benchsnap"
)

// BenchmarkUploadBody measures the CPU an upload costs the agent, from
// the collected profile to the request body, for the typical profile
// (160 sites, see typicalProfile) and one of 100,000 buckets (1,000 real
// stacks times 100 sizes), and reports the body's size as bytes/upload:
//
//   - pprof: the Pyroscope destination's path (gzipped pprof, multipart
//     form with the sample type config);
//   - otlp: the OTLP destination's path in the agent (the same gzipped
//     pprof, which every upload carries, then the OTLP request built from
//     the profile the agent hands over, gzipped);
//   - otlp-encode: the OTLP request alone, from the parsed profile;
//   - otlp-from-data: an OTLP upload of an Upload built elsewhere (its
//     gzipped pprof parsed first).
func BenchmarkUploadBody(b *testing.B) {
	big, err := export.Build(benchsnap.Snapshot(1000, 10))
	if err != nil {
		b.Fatal(err)
	}
	o, err := newOTLP(OTLPConfig{URL: "http://127.0.0.1:1"})
	if err != nil {
		b.Fatal(err)
	}
	for _, prof := range []struct {
		name string
		p    *profile.Profile
	}{{"typical", typicalProfile(b)}, {"100k", big}} {
		a := &Agent{cfg: Config{AppName: "shop", Labels: map[string]string{"env": "prod"}}}
		from, until := time.Unix(0, 0), time.Unix(15, 0)
		b.Run(prof.name+"/pprof", func(b *testing.B) {
			var n int
			for b.Loop() {
				u, err := a.newUploadOf("arena", profileEncodable{prof.p}, from, until)
				if err != nil {
					b.Fatal(err)
				}
				body, _, err := multipartBody(u, pyroscopeData(u, true))
				if err != nil {
					b.Fatal(err)
				}
				n = len(body)
			}
			b.ReportMetric(float64(n), "bytes/upload")
		})
		b.Run(prof.name+"/otlp", func(b *testing.B) {
			a := &Agent{cfg: a.cfg, parsed: true}
			var n int
			for b.Loop() {
				u, err := a.newUploadOf("arena", profileEncodable{prof.p}, from, until)
				if err != nil {
					b.Fatal(err)
				}
				n = len(o.encode(u.parsed, u))
			}
			b.ReportMetric(float64(n), "bytes/upload")
		})
		u, err := a.newUploadOf("arena", profileEncodable{prof.p}, from, until)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(prof.name+"/otlp-encode", func(b *testing.B) {
			var n int
			for b.Loop() {
				n = len(o.encode(prof.p, u))
			}
			b.ReportMetric(float64(n), "bytes/upload")
		})
		b.Run(prof.name+"/otlp-from-data", func(b *testing.B) {
			for b.Loop() {
				p, err := profile.ParseData(u.Data)
				if err != nil {
					b.Fatal(err)
				}
				o.encode(p, u)
			}
		})
	}
}
