package agent

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkPush measures handing a profile to a full destination queue
// (drop the oldest, append): the only work collection does per destination.
func BenchmarkPush(b *testing.B) {
	d := &dest{cap: DefaultQueueSize, notify: make(chan struct{}, 1)}
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
		if _, err := a.newUpload("arena", p, time.Time{}, time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDirUpload measures writing one small profile file (temporary
// file, fsync, rename, retention scan of up to 100 files).
func BenchmarkDirUpload(b *testing.B) {
	d, err := NewDir(DirConfig{Path: b.TempDir(), MaxFiles: 100})
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
	py, err := NewPyroscope(PyroscopeConfig{URL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	defer py.Close()
	a := &Agent{cfg: Config{AppName: "shop", Labels: map[string]string{"env": "prod"}}}
	u, err := a.newUpload("arena", arenaLikeProfile(100, 100000, 5000), time.Unix(0, 0), time.Unix(15, 0))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := py.Upload(context.Background(), u); err != nil {
			b.Fatal(err)
		}
	}
}
