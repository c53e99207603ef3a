package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/report"
)

// heapSnapshot is one synthetic runtime/pprof heap profile: in-use bytes
// per function (objects of size bytes, sampled at rate), taken at at.
type heapSnapshot struct {
	at     time.Time
	inuse  map[string]int64 // function -> in-use bytes
	size   int64
	rate   int64
	allocs int64 // the cumulative alloc_space of the whole profile
	kind   string
}

// write writes s as runtime/pprof writes a heap profile (or, with kind
// "allocs", an allocs profile: default sample type alloc_space).
func (s heapSnapshot) write(t testing.TB, path string) {
	t.Helper()
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:     s.rate,
		TimeNanos:  s.at.UnixNano(),
	}
	if s.kind == "allocs" {
		p.DefaultSampleType = "alloc_space"
	}
	id := uint64(1)
	first := true
	for fn, b := range s.inuse {
		f := &profile.Function{ID: id, Name: fn, SystemName: fn, Filename: "main.go"}
		loc := &profile.Location{ID: id, Address: 0x1000 + id, Line: []profile.Line{{Function: f, Line: 1}}}
		p.Function = append(p.Function, f)
		p.Location = append(p.Location, loc)
		id++
		alloc := int64(0)
		if first {
			alloc, first = s.allocs, false
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc},
			Value:    []int64{alloc / s.size, alloc, b / s.size, b},
			NumLabel: map[string][]int64{"bytes": {s.size}}, NumUnit: map[string][]string{"bytes": {"bytes"}}})
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeSeries writes n heap snapshots, one a second from t0, to dir
// (heap-000.pb.gz, ...): main.leak grows by leak bytes a second, the
// others stay; a restart at restartAt (> 0) makes the cumulative
// allocations fall there.
func writeSeries(t testing.TB, dir string, n int, leak int64, restartAt int) {
	t.Helper()
	t0 := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	for i := range n {
		allocs := int64(1+i) << 20
		if restartAt > 0 && i >= restartAt {
			allocs = int64(1+i-restartAt) << 10
		}
		heapSnapshot{at: t0.Add(time.Duration(i) * time.Second), size: 1024, rate: 1, allocs: allocs,
			inuse: map[string]int64{"main.leak": 1024 * (10 + int64(i)*leak/1024), "main.cache": 1 << 20}}.write(t, filepath.Join(dir, fmt.Sprintf("heap-%03d.pb.gz", i)))
	}
}

// TestLeaksExactSeries: exact bytes (MemProfileRate 1) of a leak of
// 10 KiB/s beside a flat cache: the leak's rate exactly, flagged, the
// cache at 0 and not; -json holds the documented fields; -fail exits 3, and
// -min-rate above the leak's rate unflags it.
func TestLeaksExactSeries(t *testing.T) {
	dir := t.TempDir()
	writeSeries(t, dir, 20, 10<<10, 0)
	code, out, errOut := runCLI("leaks", "-json", dir+"/*.pb.gz")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		WindowS    float64          `json:"window_s"`
		Snapshots  int              `json:"snapshots"`
		Rows       []map[string]any `json:"rows"`
		Goroutines []any            `json:"goroutines"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.WindowS != 19 || got.Snapshots != 20 || got.Goroutines == nil || len(got.Rows) != 2 {
		t.Fatalf("got %s", out)
	}
	for _, r := range got.Rows {
		if len(r) != 8 {
			t.Errorf("row %v: want the 8 fields key, kind, rate, lo, hi, flagged, inuse_first, inuse_last", r)
		}
		want := map[string]float64{"main.leak": 10 << 10, "main.cache": 0}[r["key"].(string)]
		if r["kind"] != "heap" || math.Abs(r["rate"].(float64)-want) > 1e-6 || r["flagged"] != (want > 0) {
			t.Errorf("row %v: want kind heap, rate %v, flagged %v", r, want, want > 0)
		}
	}
	if code, _, _ := runCLI("leaks", "-fail", dir); code != 3 {
		t.Errorf("-fail with a leak flagged: exit %d, want 3", code)
	}
	if code, out, _ := runCLI("leaks", "-fail", "-min-rate", "11KiB/s", "-limit", "1GiB", dir); code != 0 || !strings.Contains(out, "0 of 2 groups") {
		t.Errorf("-min-rate above the leak: exit %d\n%s", code, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI("leaks", "-limit", "1GiB", dir); code != 0 || !strings.Contains(out, "LEAK") || !strings.Contains(out, "TO LIMIT") || !strings.Contains(out, "main.leak") || !strings.Contains(out, "note: not read: "+filepath.Join(dir, "notes.txt")) {
		t.Errorf("table: exit %d\n%s", code, out)
	}
}

// TestLeaksBadInput: a restart is split at and said; too few snapshots
// are refused with the number needed; an allocs profile is refused,
// naming its sample type.
func TestLeaksBadInput(t *testing.T) {
	split := t.TempDir()
	writeSeries(t, split, 14, 10<<10, 4)
	code, out, errOut := runCLI("leaks", split)
	if code != 0 || !strings.Contains(out, "restart between") || !strings.Contains(out, "cumulative allocations fell") || !strings.Contains(out, "10 snapshots") || !strings.Contains(out, "14 read in all") {
		t.Errorf("restart: exit %d\n%s%s", code, out, errOut)
	}
	short := t.TempDir()
	writeSeries(t, short, 10, 10<<10, 4)
	if code, _, errOut := runCLI("leaks", short); code != 1 || !strings.Contains(errOut, "6 snapshots after the last restart: at least 8 are needed") || !strings.Contains(errOut, "give 2 more") {
		t.Errorf("6 after a restart: exit %d: %s", code, errOut)
	}
	few := t.TempDir()
	writeSeries(t, few, 5, 10<<10, 0)
	if code, _, errOut := runCLI("leaks", few); code != 1 || !strings.Contains(errOut, "5 snapshots: at least 8 are needed") {
		t.Errorf("5 snapshots: exit %d: %s", code, errOut)
	}
	allocs := t.TempDir()
	writeSeries(t, allocs, 8, 10<<10, 0)
	heapSnapshot{at: time.Now(), size: 8, rate: 1, allocs: 8, kind: "allocs", inuse: map[string]int64{"main.f": 8}}.write(t, filepath.Join(allocs, "heap-zzz.pb.gz"))
	if code, _, errOut := runCLI("leaks", allocs); code != 1 || !strings.Contains(errOut, "cumulative allocation profile (its sample type is alloc_space") {
		t.Errorf("allocs profile: exit %d: %s", code, errOut)
	}
	pods := t.TempDir()
	for i := range 8 {
		at := time.Date(2026, 11, 27, 6, 0, i, 0, time.UTC)
		for _, pod := range []string{"pod=a", "pod=b"} {
			heapSnapshot{at: at, size: 8, rate: 1, allocs: 8, inuse: map[string]int64{"main.f": 8}}.write(t, filepath.Join(pods, at.Format(dirTimeLayout)+"-shop-"+pod+"-heap.pb.gz"))
		}
	}
	if code, _, errOut := runCLI("leaks", pods); code != 1 || !strings.Contains(errOut, "2 applications or label sets (shop-pod=a, shop-pod=b)") {
		t.Errorf("two pods in one directory: exit %d: %s", code, errOut)
	}
	same := t.TempDir()
	for i := range 8 {
		at := time.Date(2026, 11, 27, 6, 0, i, 0, time.UTC)
		heapSnapshot{at: at, size: 8, rate: 1, allocs: 8, inuse: map[string]int64{"main.f": 8}}.write(t, filepath.Join(same, at.Format(dirTimeLayout)+"-shop-heap.pb.gz"))
	}
	last := time.Date(2026, 11, 27, 6, 0, 7, 0, time.UTC).Format(dirTimeLayout)
	heapSnapshot{at: time.Date(2026, 11, 27, 6, 0, 7, 0, time.UTC), size: 8, rate: 1, allocs: 8, inuse: map[string]int64{"main.f": 8}}.write(t, filepath.Join(same, last+"-shop-heap-2.pb.gz"))
	if code, out, errOut := runCLI("leaks", same); code != 0 || !strings.Contains(out, "8 snapshots") || !strings.Contains(out, "is a heap snapshot of the same millisecond as") || !strings.Contains(out, "-shop-heap-2.pb.gz") {
		t.Errorf("a second upload in one millisecond: exit %d\n%s%s", code, out, errOut)
	}
	for _, args := range [][]string{
		{"leaks"}, {"leaks", "http://127.0.0.1:1/debug/pprof/heap"}, {"leaks", "-"}, {"leaks", "-min-rate", "fast", split}, {"leaks", "-limit", "0", split}, {"leaks", "-confidence", "1", split},
		{"leaks", "-by", "label=", split}, {"leaks", "-n", "-1", split},
	} {
		if code, _, errOut := runCLI(args...); code != 2 || errOut == "" {
			t.Errorf("%q: exit %d, want 2 with a message: %s", args, code, errOut)
		}
	}
}

// FuzzParseRate: -min-rate is 0 or a positive whole number of bytes per
// second, never an error without a message.
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"0", "16KiB", "16KiB/s", "1.5 MiB/s", "-1", "1e400", "/s", "0B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseRate(s)
		if err != nil {
			if err.Error() == "" {
				t.Error("empty error")
			}
			return
		}
		if r < 0 || math.IsInf(r, 0) || math.IsNaN(r) || r != math.Trunc(r) {
			t.Errorf("parseRate(%q) = %v", s, r)
		}
	})
}

// FuzzLeakSnapshot: whatever a file holds, reading it as a snapshot of a
// series returns values or an error with a message, never a panic, and
// never a negative or non-finite value.
func FuzzLeakSnapshot(f *testing.F) {
	dir := f.TempDir()
	writeSeries(f, dir, 1, 1024, 0)
	seed, err := os.ReadFile(filepath.Join(dir, "heap-000.pb.gz"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed, "func")
	f.Add([]byte("not a profile"), "stack")
	f.Fuzz(func(t *testing.T, data []byte, by string) {
		path := filepath.Join(t.TempDir(), "snap.pb.gz")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		sn := readLeakSnapshot(path, by, withDefaults(report.ParseOptions{MaxMemory: 64 << 20}))
		if sn.err != nil {
			if sn.err.Error() == "" {
				t.Error("empty error")
			}
			return
		}
		for _, v := range sn.values {
			if !(v.y >= 0 && v.v >= 0) || math.IsInf(v.y+v.v, 0) {
				t.Errorf("%q: y %v, v %v", v.id, v.y, v.v)
			}
		}
	})
}

// TestLeaksRestart: what makes a snapshot start a new series.
func TestLeaksRestart(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	delta := func(src string, from, to float64) leakFile {
		return leakFile{src: src, start: at(from), at: at(to), cumulative: -1}
	}
	cum := func(src string, to, allocs float64) leakFile {
		return leakFile{src: src, at: at(to), cumulative: allocs}
	}
	for _, tc := range []struct {
		name            string
		last, same, new leakFile
		want            string
	}{
		{"consecutive windows", delta("a", 0, 15), delta("a", 0, 15), delta("b", 15, 30), ""},
		{"first of its kind", delta("a", 0, 15), leakFile{}, delta("b", 15, 30), ""},
		{"a gap", delta("a", 0, 15), delta("a", 0, 15), delta("b", 60, 75), "starts 45s after the last one ended"},
		{"an overlap", delta("a", 0, 15), delta("a", 0, 15), delta("b", 5, 20), "starts 10s before the last one ended: another process"},
		{"time back", delta("a", 0, 15), delta("a", 0, 15), delta("b", -30, -15), "time goes back"},
		{"allocations grew", cum("a", 1, 100), cum("a", 1, 100), cum("b", 2, 200), ""},
		{"allocations fell", cum("a", 1, 100), cum("a", 1, 100), cum("b", 2, 50), "the cumulative allocations fell"},
	} {
		if got := restart(tc.last, tc.same, tc.new); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
