package export_test

import (
	"bytes"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenaprof/arenaprof/internal/testkit/livearenas"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// sampleRow is a sample of a live-arenas profile, by leaf function.
type sampleRow struct {
	arenas, reserved, used int64
	age                    string
}

// rowsOf sums the samples of prof labelled test=label, or idle, by the
// function nearest the leaf.
func rowsOf(prof *profile.Profile, label string) map[string]sampleRow {
	rows := map[string]sampleRow{}
	for _, s := range prof.Sample {
		idle := len(s.Label[pprofmt.LabelPoolIdle]) > 0
		if !idle && (len(s.Label["test"]) == 0 || s.Label["test"][0] != label) {
			continue
		}
		fn := ""
		if len(s.Location) > 0 && len(s.Location[0].Line) > 0 {
			fn = s.Location[0].Line[0].Function.Name
			fn = fn[strings.LastIndex(fn, ".")+1:]
		}
		if idle {
			fn = "idle:" + fn
		}
		r := rows[fn]
		r.arenas += s.Value[pprofmt.IndexArenas]
		r.reserved += s.Value[pprofmt.IndexReserved]
		r.used += s.Value[pprofmt.IndexUsed]
		if a := s.Label[pprofmt.LabelAge]; len(a) > 0 {
			r.age = a[0]
		}
		rows[fn] = r
	}
	return rows
}

func TestBuildArenasExact(t *testing.T) {
	livearenas.Hold(t, "exact")
	prof, err := export.BuildArenas()
	if err != nil {
		t.Fatal(err)
	}
	const chunk = 4096 + 8 // a byte chunk has 8 bytes of slack
	rows := rowsOf(prof, "exact")
	for fn, want := range map[string]sampleRow{
		"holdSmall":           {2, 2 * chunk, 2000, "<1s"},
		"holdLarge":           {1, 2 * chunk, 6000, "<1s"},
		"takeForRequest":      {1, chunk, 504, "<1s"},
		"idle:takeForRequest": {2, 2 * chunk, 0, ""},
	} {
		if got := rows[fn]; got != want {
			t.Errorf("%s: %+v, want %+v", fn, got, want)
		}
	}
	if len(rows) != 4 {
		t.Errorf("rows %v, want 4", rows)
	}
	if prof.DefaultSampleType != "reserved_space" {
		t.Errorf("default sample type %q", prof.DefaultSampleType)
	}
}

func TestArenasHandler(t *testing.T) {
	livearenas.Hold(t, "handler")
	h := export.ArenasHandler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/arenaprof/arenas", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Disposition") != `attachment; filename="arenas.pb.gz"` {
		t.Fatalf("%d %v", rec.Code, rec.Header())
	}
	prof, err := profile.Parse(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if got := rowsOf(prof, "handler")["holdSmall"]; got.arenas != 2 {
		t.Errorf("holdSmall: %+v", got)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/arenaprof/arenas?seconds=5", nil))
	if rec.Code != 400 || rec.Header().Get("X-Go-Pprof") != "1" {
		t.Errorf("?seconds=5: %d %q", rec.Code, rec.Body)
	}
}

// TestArenasGoToolPprof reads the live-arenas profile with the real go
// tool pprof: by count and by bytes, and focused on an age.
func TestArenasGoToolPprof(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	livearenas.Hold(t, "pprof")
	var buf bytes.Buffer
	prof, err := export.BuildArenas()
	if err != nil {
		t.Fatal(err)
	}
	if err := prof.Write(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "arenas.pb.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, run := toolPprof(t, goBin, path)
	byCount := run("-top", "-nodefraction=0", "-sample_index=arenas", "-tagfocus=test=pprof")
	if !strings.Contains(byCount, "holdSmall") || !strings.Contains(byCount, "Type: arenas") {
		t.Errorf("-sample_index=arenas:\n%s", byCount)
	}
	byBytes := run("-top", "-nodefraction=0", "-sample_index=reserved_space", "-tagfocus=test=pprof")
	if !strings.Contains(byBytes, "holdLarge") || !strings.Contains(byBytes, "Type: reserved_space") {
		t.Errorf("-sample_index=reserved_space:\n%s", byBytes)
	}
	young := run("-top", "-nodefraction=0", "-tagfocus=age=<1s")
	old := run("-top", "-nodefraction=0", "-tagfocus=age=>1h")
	if !strings.Contains(young, "holdSmall") || strings.Contains(old, "holdSmall") {
		t.Errorf("-tagfocus=age=<1s:\n%s\n-tagfocus=age=>1h:\n%s", young, old)
	}
	raw := run("-raw")
	for _, want := range []string{"reserved_space/bytes[dflt] used_space/bytes arenas/count", "pool_idle", "exact counts"} {
		if !strings.Contains(raw, want) {
			t.Errorf("-raw lacks %q:\n%s", want, raw)
		}
	}
}
