package agent

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/profiler"
)

// BenchmarkPush measures handing a profile to a full destination queue
// (drop the oldest, append): the only work collection does per destination.
func BenchmarkPush(b *testing.B) {
	d := &dest{cap: defaultQueueSize, notify: make(chan struct{}, 1)}
	u := &Upload{}
	for b.Loop() {
		d.push(u)
	}
}

// BenchmarkEncode measures turning a collected profile into an Upload
// (pprof encoding with gzip, sample type config).
func BenchmarkEncode(b *testing.B) {
	a := &Agent{cfg: Config{AppName: "shop"}}
	p := arenaLikeProfile(100, 100000, 5000)
	for b.Loop() {
		if _, err := a.newUploadOf("arena", profileEncodable{p}, time.Time{}, time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDirUpload measures writing one small profile file (temporary
// file, fsync, rename, retention scan of up to 100 files).
func BenchmarkDirUpload(b *testing.B) {
	d, err := newDir(DirConfig{Path: b.TempDir(), MaxFiles: 100})
	if err != nil {
		b.Fatal(err)
	}
	u := &Upload{AppName: "shop", Profile: "arena", Data: make([]byte, 2048)}
	i := 0
	for b.Loop() {
		i++
		u.Until = time.Unix(int64(i), 0)
		if err := d.Upload(context.Background(), u); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPyroscopeUpload measures one multipart upload to a local server.
func BenchmarkPyroscopeUpload(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	py, err := newPyroscope(PyroscopeConfig{URL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	defer py.Close()
	a := &Agent{cfg: Config{AppName: "shop", Labels: map[string]string{"env": "prod"}}}
	u, err := a.newUploadOf("arena", profileEncodable{arenaLikeProfile(100, 100000, 5000)}, time.Unix(0, 0), time.Unix(15, 0))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := py.Upload(context.Background(), u); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPyroscopeData measures what a memory upload to Pyroscope costs
// the client on top of the upload: decoding the typical arena profile,
// adding the string labels and (frames) the type frames, encoding it again.
func BenchmarkPyroscopeData(b *testing.B) {
	a := &Agent{cfg: Config{AppName: "shop"}}
	u, err := a.newUploadOf("arena", profileEncodable{typicalProfile(b)}, time.Unix(0, 0), time.Unix(15, 0))
	if err != nil {
		b.Fatal(err)
	}
	for _, frames := range []bool{false, true} {
		b.Run(fmt.Sprintf("frames=%v", frames), func(b *testing.B) {
			var n int
			for b.Loop() {
				n = len(pyroscopeData(u, frames))
			}
			b.ReportMetric(float64(n), "bytes/upload")
			b.ReportMetric(float64(len(u.Data)), "bytes-before/upload")
		})
	}
}

// BenchmarkPyroscopeUploadReal measures one upload of a typical arena
// profile (see typicalProfile) to a real Pyroscope server, from request to the server's 200: the latency an
// upload adds to the agent's queue. It reports the request body size as
// bytes/upload. It needs a server: set ARENAPROF_PYROSCOPE_URL.
func BenchmarkPyroscopeUploadReal(b *testing.B) {
	base := os.Getenv("ARENAPROF_PYROSCOPE_URL")
	if base == "" {
		b.Skip("ARENAPROF_PYROSCOPE_URL is not set: no Pyroscope server to measure against")
	}
	py, err := newPyroscope(PyroscopeConfig{URL: base})
	if err != nil {
		b.Fatal(err)
	}
	defer py.Close()
	a := &Agent{cfg: Config{AppName: fmt.Sprintf("arenaprof_bench_%d", time.Now().UnixNano()), Labels: map[string]string{"env": "bench"}}}
	p := typicalProfile(b)
	u, err := a.newUploadOf("arena", profileEncodable{p}, time.Unix(0, 0), time.Unix(15, 0))
	if err != nil {
		b.Fatal(err)
	}
	body, _, err := multipartBody(u, pyroscopeData(u, true))
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		// Each upload is its own interval, as the agent sends them.
		i++
		u.Until = time.Now().Add(time.Duration(i) * time.Millisecond)
		u.From = u.Until.Add(-15 * time.Second)
		if err := py.Upload(context.Background(), u); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(body)), "bytes/upload")
	b.ReportMetric(float64(len(u.Data)), "pprof-bytes/upload")
	b.ReportMetric(float64(len(p.Sample)), "samples/upload")
}

// multipartBody returns the multipart form of an upload of data (see
// multipartParts) in one piece.
func multipartBody(u *Upload, data []byte) ([]byte, string, error) {
	parts, contentType, err := multipartParts(u, data)
	if err != nil {
		return nil, "", err
	}
	return bytes.Join(parts, nil), contentType, nil
}

// Types of the typical profile.
type (
	typ16  [2]uint64
	typ32  [4]uint64
	typ64  [8]uint64
	typ128 [16]uint64
	typ256 [32]uint64
	typ512 [64]uint64
	typPtr struct {
		next *typPtr
		v    [3]uint64
	}
	typStr struct{ s, t string }
)

// typicalSites is the number of allocation sites (distinct stacks, each
// with its own type) of the typical profile.
const typicalSites = 8 * 20

// typicalProfile returns the profile of one agent interval of a service
// with typicalSites allocation sites: eight types, each allocated from
// stacks of 20 depths (8 to 27 frames), every site sampled, built by the
// real profiler and export.Build as ProfilerSource does.
func typicalProfile(tb testing.TB) *profile.Profile {
	setMeanBytes(tb, 4096)
	p, err := profiler.Start()
	if err != nil {
		tb.Fatal(err)
	}
	defer p.Stop()
	prev := p.Snapshot()
	ar := arena.NewArena(arena.WithSeed(9, 10))
	for typ := range 8 {
		for depth := range 20 {
			allocAt(ar, depth+5, typ, 64<<10)
		}
	}
	d, err := profiler.Delta(prev, p.Snapshot())
	if err != nil {
		tb.Fatal(err)
	}
	prof, err := export.Build(d)
	if err != nil {
		tb.Fatal(err)
	}
	if len(prof.Sample) < typicalSites {
		tb.Fatalf("%d samples, want one per site (%d)", len(prof.Sample), typicalSites)
	}
	return prof
}

// allocAt recurses depth times, then allocates about bytes of type typ.
//
//go:noinline
func allocAt(a *arena.Arena, depth, typ int, bytes int) {
	if depth > 0 {
		allocAt(a, depth-1, typ, bytes)
		return
	}
	switch typ {
	case 0:
		allocN[typ16](a, bytes/16)
	case 1:
		allocN[typ32](a, bytes/32)
	case 2:
		allocN[typ64](a, bytes/64)
	case 3:
		allocN[typ128](a, bytes/128)
	case 4:
		allocN[typ256](a, bytes/256)
	case 5:
		allocN[typ512](a, bytes/512)
	case 6:
		allocN[typPtr](a, bytes/32)
	default:
		allocN[typStr](a, bytes/32)
	}
}

//go:noinline
func allocN[T any](a *arena.Arena, n int) {
	for range n {
		arena.New[T](a)
	}
}
