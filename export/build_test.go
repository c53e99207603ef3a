package export_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/profiler"
)

const pkgPath = "github.com/arenaprof/arenaprof/export_test."

// roundTrip writes p and parses it back.
func roundTrip(t *testing.T, p *profile.Profile) *profile.Profile {
	t.Helper()
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	q, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.CheckValid(); err != nil {
		t.Fatal(err)
	}
	return q
}

func leafFunc(s *profile.Sample) string {
	if len(s.Location) == 0 || len(s.Location[0].Line) == 0 {
		return ""
	}
	return s.Location[0].Line[0].Function.Name
}

// frames flattens a sample's stack into function names, leaf first.
func frames(s *profile.Sample) []string {
	var out []string
	for _, l := range s.Location {
		for _, ln := range l.Line {
			out = append(out, ln.Function.Name)
		}
	}
	return out
}

// With mean 1 every object is sampled at offset 0 and weighs its size, so
// every value of the profile is exact.
func TestBuildFormat(t *testing.T) {
	setMeanBytes(t, 1)
	p := startProfiler(t)
	a := newTestArena(t, 1, hooks.NewLabels("handler", "/api", "type", "clash"))
	allocSmall(a, 100)
	allocBig(a, 3)
	b := newTestArena(t, 2, hooks.Labels{})
	allocSmall(b, 10)
	b.Reset()

	built, err := export.Build(p.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	q := roundTrip(t, built)

	if q.PeriodType.Type != "space" || q.PeriodType.Unit != "bytes" || q.Period != 1 {
		t.Errorf("period %v %d", q.PeriodType, q.Period)
	}
	var types []string
	for _, st := range q.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	want := []string{"alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes", "alloc_samples/count", "alloc_tail/bytes"}
	if !slices.Equal(types, want) || q.DefaultSampleType != "alloc_space" {
		t.Errorf("sample types %v default %q", types, q.DefaultSampleType)
	}
	if !slices.Contains(q.Comments, "arenaprof window=end") || pprofmt.WindowOf(q) != estimate.WindowEnd {
		t.Errorf("comments %q", q.Comments)
	}
	if q.TimeNanos != p.Snapshot().Start.UnixNano() || q.DurationNanos <= 0 {
		t.Errorf("time %d duration %d", q.TimeNanos, q.DurationNanos)
	}
	if len(q.Sample) != 3 {
		t.Fatalf("%d samples, want 3", len(q.Sample))
	}
	for _, s := range q.Sample {
		typ := s.Label["type"]
		size := s.NumLabel["bytes"]
		if len(typ) != 1 || len(size) != 1 || !slices.Equal(s.NumUnit["bytes"], []string{"bytes"}) ||
			!slices.Equal(s.NumLabel["sampling_mean"], []int64{1}) || !slices.Equal(s.NumUnit["sampling_mean"], []string{"bytes"}) {
			t.Errorf("labels %v %v %v", s.Label, s.NumLabel, s.NumUnit)
			continue
		}
		var wantV []int64
		switch {
		case typ[0] == "main.big":
			wantV = []int64{3, 3 * 4096, 3, 3 * 4096, 3, 3 * 4096}
		case s.Label["handler"] != nil:
			wantV = []int64{100, 1600, 100, 1600, 100, 1600}
		default: // arena b, reset
			wantV = []int64{10, 160, 0, 0, 10, 160}
		}
		if !slices.Equal(s.Value, wantV) {
			t.Errorf("%s %v: values %v, want %v", typ[0], s.Label, s.Value, wantV)
		}
		if s.Label["handler"] != nil && (!slices.Equal(s.Label["arena_type"], []string{"clash"}) || !slices.Equal(s.Label["handler"], []string{"/api"})) {
			t.Errorf("arena labels %v", s.Label)
		}
		wantLeaf := pkgPath + "allocSmall"
		if typ[0] == "main.big" {
			wantLeaf = pkgPath + "allocBig"
		}
		if leafFunc(s) != wantLeaf {
			t.Errorf("leaf %q, want %q (stack %v)", leafFunc(s), wantLeaf, frames(s))
		}
		if f := frames(s); len(f) < 2 || f[1] != pkgPath+"TestBuildFormat" || slices.Contains(f, "runtime.goexit") {
			t.Errorf("stack %v", f)
		}
	}
	if len(q.Mapping) != 1 || !q.Mapping[0].HasFunctions || !q.Mapping[0].HasInlineFrames {
		t.Errorf("mapping %+v", q.Mapping)
	}
}

func TestBuildInlinedFrames(t *testing.T) {
	setMeanBytes(t, 1)
	p := startProfiler(t)
	a := newTestArena(t, 3, hooks.Labels{})
	callsInlined(a, 5)
	q := roundTrip(t, must(export.Build(p.Snapshot())))
	if len(q.Sample) != 1 {
		t.Fatalf("%d samples", len(q.Sample))
	}
	s := q.Sample[0]
	f := frames(s)
	if len(f) < 3 || f[0] != pkgPath+"inlinedSite" || f[1] != pkgPath+"callsInlined" || f[2] != pkgPath+"TestBuildInlinedFrames" {
		t.Fatalf("stack %v", f)
	}
	// When the compiler inlined inlinedSite (the normal case, not under
	// -gcflags=-l), both calls share one location, innermost line first.
	if l := s.Location[0]; len(l.Line) == 2 {
		if l.Line[0].Function.Name != pkgPath+"inlinedSite" || l.Line[1].Function.Name != pkgPath+"callsInlined" {
			t.Errorf("inlined location lines %+v", l.Line)
		}
	} else {
		t.Logf("inlinedSite was not inlined (%d lines)", len(l.Line))
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestBucketBoundInProfile(t *testing.T) {
	setMeanBytes(t, 1)
	p := startProfiler(t, profiler.WithMaxBuckets(1))
	a := newTestArena(t, 4, hooks.Labels{})
	allocSmall(a, 10)
	allocBig(a, 2)
	q := roundTrip(t, must(export.Build(p.Snapshot())))
	var over *profile.Sample
	var total int64
	for _, s := range q.Sample {
		total += s.Value[pprofmt.IndexAllocSpace]
		if leafFunc(s) == pprofmt.OverflowFunction {
			over = s
		}
	}
	if over == nil || over.NumLabel["bytes"] != nil || !slices.Equal(over.Value, []int64{2, 8192, 2, 8192, 2, 8192}) {
		t.Fatalf("overflow sample %+v", over)
	}
	if total != 160+8192 {
		t.Errorf("total %d", total)
	}
	found := false
	for _, c := range q.Comments {
		found = found || strings.Contains(c, "2 events past the bound of 1 buckets")
	}
	if !found {
		t.Errorf("comments %q", q.Comments)
	}
}

func TestWrite(t *testing.T) {
	setMeanBytes(t, 1)
	p := startProfiler(t)
	a := newTestArena(t, 5, hooks.Labels{})
	allocSmall(a, 7)
	var buf bytes.Buffer
	if err := export.Write(&buf, p.Snapshot()); err != nil {
		t.Fatal(err)
	}
	q, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Sample) != 1 || q.Sample[0].Value[pprofmt.IndexAllocSamples] != 7 {
		t.Errorf("samples %v", q.Sample)
	}
	if err := export.Write(&buf, nil); err == nil {
		t.Error("nil snapshot: no error")
	}
}

func TestWindowMarking(t *testing.T) {
	for _, tc := range []struct {
		comments []string
		want     estimate.Window
	}{
		{nil, estimate.WindowBoth},
		{[]string{"other"}, estimate.WindowBoth},
		{[]string{"arenaprof window=aligned"}, estimate.WindowAligned},
		{[]string{"arenaprof window=start"}, estimate.WindowStart},
		{[]string{"arenaprof window=end"}, estimate.WindowEnd},
		{[]string{"arenaprof window=both"}, estimate.WindowBoth},
		{[]string{"arenaprof window=start", "x", "arenaprof window=end"}, estimate.WindowBoth},
		{[]string{"arenaprof window=aligned", "arenaprof window=end"}, estimate.WindowEnd},
		{[]string{"arenaprof window=bogus", "arenaprof window=aligned"}, estimate.WindowBoth},
		{nil, estimate.WindowBoth},
		{[]string{"something else"}, estimate.WindowBoth},
		{[]string{"arenaprof window="}, estimate.WindowBoth},
		{[]string{"arenaprof window=END"}, estimate.WindowBoth},
		{[]string{"arenaprof window=start", "arenaprof window=end"}, estimate.WindowBoth},
	} {
		if got := pprofmt.WindowOf(&profile.Profile{Comments: tc.comments}); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.comments, got, tc.want)
		}
	}
	for _, w := range []estimate.Window{estimate.WindowAligned, estimate.WindowStart, estimate.WindowEnd, estimate.WindowBoth} {
		if got := pprofmt.WindowOf(&profile.Profile{Comments: []string{pprofmt.WindowComment(w)}}); got != w {
			t.Errorf("round trip of %v: %v", w, got)
		}
	}
}

// The real go tool pprof reads an exported profile.
func TestGoToolPprof(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	setMeanBytes(t, 1)
	p := startProfiler(t)
	a := newTestArena(t, 6, hooks.Labels{})
	allocSmall(a, 1000)
	allocBig(a, 10)
	// Types and a label for the README's -tagfocus and -tagleaf commands.
	b := newTestArena(t, 7, hooks.NewLabels("endpoint", "/orders"))
	for range 50 {
		b.Alloc(64, "[]*main.big")
		b.Alloc(32, "[]uint8")
	}
	path := filepath.Join(t.TempDir(), "arenas.pb.gz")
	writeFile(t, path, p)
	pprof, run := toolPprof(t, goBin, path)
	top := run("-top", "-sample_index=alloc_space")
	for _, want := range []string{"allocBig", "allocSmall", "40kB", "15.62kB", "alloc_space"} {
		if !strings.Contains(top, want) {
			t.Errorf("-top output lacks %q:\n%s", want, top)
		}
	}
	raw := run("-raw")
	for _, want := range []string{"alloc_objects/count alloc_space/bytes[dflt] inuse_objects/count inuse_space/bytes alloc_samples/count alloc_tail/bytes",
		"main.big", "main.small", "sampling_mean", "allocBig", "arenaprof window=end"} {
		if !strings.Contains(raw, want) {
			t.Errorf("-raw output lacks %q:\n%s", want, raw)
		}
	}
	focus := run("-top", "-sample_index=alloc_space", "-tagfocus=type=main.big")
	if !strings.Contains(focus, "allocBig") || strings.Contains(focus, "allocSmall") {
		t.Errorf("-tagfocus=type=main.big output:\n%s", focus)
	}

	// The README's "Viewing a profile" commands. -tagfocus is a regular
	// expression matched anywhere: unanchored, main.big keeps []*main.big.
	tags := func(focus string) string { return run("-tags", "-tagfocus="+focus) }
	for _, tc := range []struct {
		focus       string
		want, avoid []string
	}{
		{"type=main.big", []string{"main.big", "[]*main.big"}, nil},
		{`type=^main\.big$`, []string{"main.big"}, []string{"[]*main.big", "main.small"}},
		{`type=^\[\]uint8$`, []string{"[]uint8"}, []string{"main.big", "main.small"}},
		{"endpoint=^/orders$", []string{"[]uint8", "[]*main.big"}, []string{"main.small"}},
	} {
		out := tags(tc.focus)
		for _, w := range tc.want {
			if !strings.Contains(out, ": "+w+"\n") {
				t.Errorf("-tags -tagfocus=%s lacks type %q:\n%s", tc.focus, w, out)
			}
		}
		for _, w := range tc.avoid {
			if strings.Contains(out, ": "+w+"\n") {
				t.Errorf("-tags -tagfocus=%s keeps type %q:\n%s", tc.focus, w, out)
			}
		}
	}
	if out, err := pprof("-top", "-tagfocus=type=[]uint8"); err == nil || !strings.Contains(out, "missing closing ]") {
		t.Errorf("-tagfocus=type=[]uint8 parsed (%v):\n%s", err, out)
	}
	leaf := run("-top", "-tagleaf=type")
	for _, w := range []string{" main.big\n", " main.small\n", " []uint8\n"} {
		if !strings.Contains(leaf, w) {
			t.Errorf("-top -tagleaf=type lacks the type node %q:\n%s", strings.TrimSpace(w), leaf)
		}
	}
}

// writeFile writes the profile of p to the file path.
func writeFile(t *testing.T, path string, p *profiler.Profiler) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := export.Write(f, p.Snapshot()); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
