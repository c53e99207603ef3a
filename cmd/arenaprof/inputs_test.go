package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/export/agent"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/testkit/fixture"
	"github.com/arenaprof/arenaprof/profiler"
	"github.com/arenaprof/arenaprof/report"
)

// runDirAgent runs the agent with a Config.Dir destination (arena, Go heap
// and wall-clock sources, 20 ms intervals) while rounds rounds of perRound
// e2eRecords are allocated, and returns the directory it wrote, every
// profile collected in it. (The queue holds them all: each file is
// synced, and on a loaded machine the writes fall behind the 20 ms
// collections; the default queue of 20 then drops the oldest profiles,
// and the directory holds only part of the allocations.)
func runDirAgent(t *testing.T, seed uint64, rounds, perRound int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "profiles")
	p, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	up, err := agent.NewDir(agent.DirConfig{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.Start(agent.Config{
		AppName: "shop", Labels: map[string]string{"env": "test"}, Interval: 20 * time.Millisecond,
		Sources:   []agent.Source{agent.ProfilerSource(p), agent.HeapSource(), agent.WallSource()},
		Uploaders: []agent.Uploader{up}, Logger: slog.New(slog.DiscardHandler),
		QueueSize: 10000,
	})
	if err != nil {
		t.Fatal(err)
	}
	ar := arena.NewArena(arena.WithSeed(seed, 7))
	for range rounds {
		allocE2ERecords(ar, perRound)
		time.Sleep(25 * time.Millisecond)
	}
	ar.Reset()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if st := a.Stats(); st.Dropped != 0 || st.Failed != 0 || st.Unconfirmed != 0 || st.Uploaded != st.Collected {
		t.Fatalf("the directory lacks profiles: %+v", st)
	}
	return dir
}

// dirFiles counts the files of dir by profile name, and writes a partial
// temporary file and a hidden file there, as Config.Dir may leave.
func dirFiles(t *testing.T, dir string) map[string]int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, e := range ents {
		if k, ok := dirFileKind(e.Name()); ok {
			kinds[k]++
		}
	}
	for _, name := range []string{".arenaprof-123.tmp", ".hidden.pb.gz"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return kinds
}

// topRow returns the row of key in top's -json output.
func topRow(t *testing.T, out, key string) (topJSON, *topRowJSON) {
	t.Helper()
	var rep topJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	for i := range rep.Rows {
		if rep.Rows[i].Key == key {
			return rep, &rep.Rows[i]
		}
	}
	t.Fatalf("no row %s:\n%s", key, out)
	return rep, nil
}

// top DIR reads the arena and heap uploads of a real Config.Dir (a
// combined memory profile: arena and Go heap samples), skips its
// wall-clock profiles and its temporary and hidden files, and covers the
// true bytes of the arena type allocated over all intervals. At confidence
// 1-1e-7 a sound interval misses with probability at most 1e-7 per run.
// The merged estimate is the sum of the files' estimates, read one by one.
func TestTopDirAgent(t *testing.T) {
	const rounds, perRound, size = 5, 4000, 64 // 1.28e6 bytes: about 1250 events at mean 1024
	setMeanBytes(t, 1024)
	dir := runDirAgent(t, 3, rounds, perRound)
	kinds := dirFiles(t, dir)
	if kinds["arena"] < 2 || kinds["heap"] < 1 || kinds["wall"] < 1 {
		t.Fatalf("files by profile: %v", kinds)
	}
	code, out, errOut := runTopArgs("-json", "-by", "type", "-confidence", "0.9999999", "-n", "0", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rep, row := topRow(t, out, "main.e2eRecord")
	const truth = rounds * perRound * size
	if !(row.Lo <= truth && truth <= row.Hi) {
		t.Errorf("true bytes %d outside [%v, %v] (%d events)", truth, row.Lo, row.Hi, row.Samples)
	}
	if rep.Inputs == nil || rep.Inputs.Profiles != kinds["arena"]+kinds["heap"] || rep.Inputs.From == nil || !rep.Inputs.To.After(*rep.Inputs.From) {
		t.Errorf("inputs %+v, want %d profiles with a span", rep.Inputs, kinds["arena"]+kinds["heap"])
	}
	if rep.Inputs != nil && (len(rep.Inputs.Skipped) != 2 || !strings.HasSuffix(rep.Inputs.Skipped[0], " wall profiles") || rep.Inputs.Skipped[1] != "2 hidden files") {
		t.Errorf("skipped %v, want the wall profiles and 2 hidden files", rep.Inputs.Skipped)
	}
	var sum int64
	files, _ := filepath.Glob(filepath.Join(dir, "*-arena.pb.gz"))
	for _, f := range files {
		code, out, errOut := runTopArgs("-json", "-by", "type", "-n", "0", f)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", f, code, errOut)
		}
		var one topJSON
		if err := json.Unmarshal([]byte(out), &one); err != nil {
			t.Fatal(err)
		}
		for _, r := range one.Rows {
			if r.Key == "main.e2eRecord" {
				sum += r.Bytes
			}
		}
	}
	if sum != row.Bytes {
		t.Errorf("merged estimate %d, the files' estimates add to %d", row.Bytes, sum)
	}
	// The table's heading says what was merged.
	code, out, errOut = runTopArgs("-by", "type", dir)
	if code != 0 || !strings.Contains(out, "profiles merged, ") || !strings.Contains(out, "UTC (") || !strings.Contains(out, " wall profiles") {
		t.Errorf("exit %d, stderr %q; heading lacks the merge:\n%s", code, errOut, out)
	}
	// A glob of the arena files reads them alone: an arena profile.
	code, out, errOut = runTopArgs("-json", filepath.Join(dir, "*-arena.pb.gz"))
	if code != 0 {
		t.Fatalf("glob: exit %d: %s", code, errOut)
	}
	if rep, _ := topRow(t, out, "main.e2eRecord"); rep.By != "type" || rep.Inputs.Profiles != len(files) {
		t.Errorf("glob: by %s, inputs %+v, want by type over %d files", rep.By, rep.Inputs, len(files))
	}
}

// diff DIR_BEFORE DIR_AFTER on two real Config.Dir runs, the second
// allocating twice the bytes: the ratio's interval at confidence 1-1e-7
// holds 2 and excludes 1, each failing with probability at most 1e-7
// (about 1000 and 2000 events at mean 1024).
func TestDiffDirAgent(t *testing.T) {
	setMeanBytes(t, 1024)
	before := runDirAgent(t, 5, 4, 4000)
	after := runDirAgent(t, 6, 8, 4000)
	code, out, errOut := runDiffArgs("-json", "-by", "type", "-confidence", "0.9999999", before, after)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep diffJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.BaseInputs == nil || rep.NewInputs == nil || rep.BaseInputs.Profiles < 2 {
		t.Fatalf("inputs %+v %+v", rep.BaseInputs, rep.NewInputs)
	}
	found := false
	for _, r := range rep.Rows {
		if r.Key != "main.e2eRecord" {
			continue
		}
		found = true
		if r.RatioLo == nil || r.RatioHi == nil || !(*r.RatioLo <= 2 && 2 <= *r.RatioHi) || !(*r.RatioLo > 1) {
			t.Errorf("ratio %v [%v, %v], want 2 inside and 1 outside:\n%s", deref(r.Ratio), deref(r.RatioLo), deref(r.RatioHi), out)
		}
	}
	if !found {
		t.Fatalf("no row main.e2eRecord:\n%s", out)
	}
	// The same with -base listing BASE's files and NEW's as arguments.
	bases, _ := filepath.Glob(filepath.Join(before, "*-arena.pb.gz"))
	news, _ := filepath.Glob(filepath.Join(after, "*-arena.pb.gz"))
	args := []string{"-by", "type"}
	for _, b := range bases {
		args = append(args, "-base", b)
	}
	code, out, errOut = runDiffArgs(append(args, news...)...)
	if code != 0 || !strings.Contains(out, "main.e2eRecord") || !strings.Contains(out, "BASE inputs: ") || !strings.Contains(out, "NEW inputs: ") {
		t.Errorf("-base: exit %d, stderr %q:\n%s", code, errOut, out)
	}
}

// arenaFile profiles n e2eRecords allocated at mean, and writes the
// profile to dir/name; strip drops the samples' sampling_mean labels (the
// mean is then the profile's period).
func arenaFile(t *testing.T, dir, name string, mean int64, seed uint64, n int, strip bool) string {
	t.Helper()
	setMeanBytes(t, mean)
	p, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	a := arena.NewArena(arena.WithSeed(seed, 9))
	allocE2ERecords(a, n)
	a.Reset()
	p.Stop()
	prof, err := export.Build(p.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if strip {
		for _, s := range prof.Sample {
			delete(s.NumLabel, pprofmt.LabelMean)
			delete(s.NumUnit, pprofmt.LabelMean)
		}
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, profileBytes(t, prof), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Profiles under different sampling means merge: each sample keeps its
// own mean (a label, or its profile's period, which the merge turns into
// a label), so the merged estimate is the sum of the parts'.
func TestMergeMeans(t *testing.T) {
	dir := t.TempDir()
	for _, strip := range []bool{false, true} {
		a := arenaFile(t, dir, "a.pb.gz", 1024, 1, 8000, strip)
		b := arenaFile(t, dir, "b.pb.gz", 8192, 2, 8000, strip)
		var sum int64
		for _, f := range []string{a, b} {
			code, out, errOut := runTopArgs("-json", f)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			_, row := topRow(t, out, "main.e2eRecord")
			sum += row.Bytes
		}
		code, out, errOut := runTopArgs("-json", a, b)
		if code != 0 {
			t.Fatalf("strip %v: exit %d: %s", strip, code, errOut)
		}
		rep, row := topRow(t, out, "main.e2eRecord")
		if row.Bytes != sum || rep.Inputs == nil || rep.Inputs.Profiles != 2 {
			t.Errorf("strip %v: merged %d bytes, parts %d; inputs %+v", strip, row.Bytes, sum, rep.Inputs)
		}
	}
}

// rewrite parses the profile at src, applies f and writes it to dir/name.
func rewrite(t *testing.T, src, dir, name string, f func(p *profile.Profile)) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	f(p)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, profileBytes(t, p), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// What cannot be merged is refused with a message naming the files; so
// are arguments that name no profile.
func TestMergeRefused(t *testing.T) {
	dir := t.TempDir()
	arenaA := arenaFile(t, dir, "a.pb.gz", 1024, 1, 2000, false)
	arenaB := arenaFile(t, dir, "b.pb.gz", 1024, 2, 2000, false)
	goHeap := writeTemp(t, "goheap.pb.gz", heapProfile(t))
	goHeap2 := rewrite(t, goHeap, dir, "goheap2.pb.gz", func(p *profile.Profile) { p.Period *= 2 })
	heapUp := func(name string, rate int64) string {
		return rewrite(t, arenaA, dir, name, func(p *profile.Profile) {
			for _, s := range p.Sample {
				s.Label[pprofmt.LabelMemory] = []string{pprofmt.MemoryHeap}
				s.NumLabel[pprofmt.LabelHeapRate] = []int64{rate}
			}
		})
	}
	heap1, heap2 := heapUp("heap1.pb.gz", 4096), heapUp("heap2.pb.gz", 8192)
	live, err := export.BuildArenas()
	if err != nil {
		t.Fatal(err)
	}
	holdings := filepath.Join(dir, "arenas.pb.gz")
	if err := os.WriteFile(holdings, profileBytes(t, live), 0o644); err != nil {
		t.Fatal(err)
	}
	wallOnly := t.TempDir()
	for _, n := range []string{"20261125T190000.000Z-shop-wall.pb.gz", "20261125T190000.000Z-shop-cpu.pb.gz"} {
		if err := os.WriteFile(filepath.Join(wallOnly, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"arena with runtime heap", []string{arenaA, goHeap}, 1, []string{arenaA + " (arenaprof profile) and " + goHeap + " (Go runtime heap profile) cannot be merged"}},
		{"runtime heaps of two rates", []string{goHeap, goHeap2}, 1, []string{goHeap, goHeap2, "different rates"}},
		{"heap uploads of two rates", []string{heap1, heap2}, 1, []string{heap1 + " holds Go heap samples drawn at MemProfileRate 4096 and " + heap2 + " at 8192"}},
		{"live arenas", []string{arenaA, holdings}, 1, []string{holdings + " is a live-arenas profile, a state of one moment"}},
		{"same file twice", []string{arenaA, filepath.Join(dir, ".", "a.pb.gz")}, 2, []string{"is given twice"}},
		{"glob without match", []string{filepath.Join(dir, "*.none")}, 1, []string{"no file matches " + filepath.Join(dir, "*.none")}},
		{"bad glob", []string{filepath.Join(dir, "[")}, 2, []string{"bad pattern"}},
		{"directory without memory profiles", []string{wallOnly}, 1, []string{"holds no arena or heap profile of Config.Dir (it holds 1 cpu profile, 1 wall profile: "}},
		{"stdin twice", []string{"-", "-"}, 2, []string{"- is given twice"}},
		{"one side merged ok", []string{arenaA, arenaB}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runTopArgs(tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s", code, tt.code, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
	// diff: too many arguments without -base says how to merge.
	code, _, errOut := runDiffArgs(arenaA, arenaB, arenaA)
	if code != 2 || !strings.Contains(errOut, "-base") {
		t.Errorf("diff with 3 arguments: exit %d: %s", code, errOut)
	}
	code, _, errOut = runDiffArgs("-base", arenaA)
	if code != 2 || !strings.Contains(errOut, "missing NEW") {
		t.Errorf("diff -base without NEW: exit %d: %s", code, errOut)
	}
}

// copiesDir writes n copies of the profile data to a new directory (hard
// links of one file where the file system has them), and returns it.
func copiesDir(t *testing.T, data []byte, n int) string {
	t.Helper()
	dir := t.TempDir()
	src := writeTemp(t, "src.pb.gz", data)
	for i := range n {
		name := filepath.Join(dir, fmt.Sprintf("h%05d.pb.gz", i))
		if os.Link(src, name) == nil {
			continue
		}
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tinyHeap is a Go heap profile of four records at MemProfileRate 4096,
// scaled as runtime/pprof scales: the smallest input of a 10,000-input
// merge.
func tinyHeap(t *testing.T) []byte {
	p := fixture.BigHeap(4, 2)
	p.Period = 4096
	for _, s := range p.Sample {
		size := s.NumLabel["bytes"][0]
		scale := 1 / (1 - math.Exp(-float64(size)/float64(p.Period)))
		s.Value = []int64{int64(7 * scale), int64(float64(7*size) * scale), int64(2 * scale), int64(float64(2*size) * scale)}
	}
	return profileBytes(t, p)
}

// A directory of 1, 99, 100, 1,000 and 10,000 copies of one Go heap
// profile (runtime/pprof's own, and for 10,000 a small one) reads within
// the default -max-memory, and under Go 1.23's rule, whose estimate is the
// sum of the values, every row's estimate and event count, allocated and
// in use, are N times one copy's. (Under Go 1.24's rule the raw counts
// are N times one copy's too, and the estimates and intervals are those of
// one profile of N times its raw counts: report's TestMergeHeapCopies.)
func TestMergeManyInputs(t *testing.T) {
	genuine, tiny := heapProfile(t), tinyHeap(t)
	table := func(ap *arenaProfile, inuse bool) *report.TableResult {
		t.Helper()
		res, err := report.Table(ap.prof, report.TableOptions{By: "stack", InUse: inuse, GoVersion: "go1.23.0"})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, tc := range []struct {
		n    int
		data []byte
	}{{1, genuine}, {99, genuine}, {100, genuine}, {1000, genuine}, {10000, tiny}} {
		one, err := loadInputs([]string{writeTemp(t, "one.pb.gz", tc.data)}, report.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		merged, err := loadInputs([]string{copiesDir(t, tc.data, tc.n)}, report.ParseOptions{})
		if err != nil {
			t.Fatalf("%d copies: %v", tc.n, err)
		}
		if merged.merged == nil || merged.merged.n != tc.n {
			t.Fatalf("%d copies: inputs %+v", tc.n, merged.merged)
		}
		n := int64(tc.n)
		for _, inuse := range []bool{false, true} {
			single, got := table(one, inuse), table(merged, inuse)
			if got.Groups != single.Groups || len(got.Rows) != len(single.Rows) {
				t.Fatalf("%d copies, inuse %v: %d groups, one copy %d", tc.n, inuse, got.Groups, single.Groups)
			}
			for i, r := range append(got.Rows, got.Total) {
				want := append(single.Rows, single.Total)[i]
				if r.Key != want.Key || r.Samples != n*want.Samples || r.Bytes != n*want.Bytes {
					t.Errorf("%d copies, inuse %v: row %s: %d bytes of %d samples; one copy %s: %d of %d", tc.n, inuse, r.Key, r.Bytes, r.Samples, want.Key, want.Bytes, want.Samples)
				}
			}
		}
	}
}

// -max-memory bounds the merged set by what the merged profile keeps:
// 1,000 copies of one profile, whose merge keeps what one does, read
// within a bound that admits a few of it; inputs whose samples differ
// (here by a label) and pass the bound together are refused, naming the
// input at fault and the count, not the list, and suggesting a bound that
// then reads them (measured over every input, from the first refused on),
// also when the first input is the one refused.
func TestMergeMemoryLimit(t *testing.T) {
	dir := t.TempDir()
	first := arenaFile(t, dir, "a.pb.gz", 1024, 1, 20000, false)
	ap, err := loadArenaProfile(first, report.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	limit := formatByteSize(4 * ap.cost) // one file reads, and a merge of it with others like it
	if code, _, errOut := runTopArgs("-max-memory", limit, copiesDir(t, data, 1000)); code != 0 {
		t.Fatalf("1000 copies at -max-memory %s: exit %d: %s", limit, code, errOut)
	}
	files := []string{first}
	for i := 1; i < 20; i++ {
		files = append(files, rewrite(t, first, dir, fmt.Sprintf("p%02d.pb.gz", i), func(p *profile.Profile) {
			for _, s := range p.Sample {
				s.Label["part"] = []string{fmt.Sprint(i)}
			}
		}))
	}
	code, _, errOut := runTopArgs(append([]string{"-max-memory", limit}, files...)...)
	if code != 1 || !strings.Contains(errOut, "the 20 inputs together take at most ") || !strings.Contains(errOut, "of memory, more than -max-memory "+limit) {
		t.Fatalf("six files at -max-memory %s: exit %d: %s", limit, code, errOut)
	}
	if !strings.HasPrefix(errOut, "arenaprof top: cannot read "+filepath.Join(dir, "")) || strings.Count(errOut, dir) != 1 {
		t.Errorf("the message names more than the input at fault: %s", errOut)
	}
	_, suggested, ok := strings.Cut(errOut, "(e.g. -max-memory ")
	suggested, _, _ = strings.Cut(suggested, ")")
	if !ok {
		t.Fatalf("no suggestion: %s", errOut)
	}
	if code, _, errOut := runTopArgs(append([]string{"-max-memory", suggested}, files...)...); code != 0 {
		t.Errorf("at the suggested -max-memory %s: exit %d: %s", suggested, code, errOut)
	}
	// The same from a directory, refused at its first file.
	n, _ := parseByteSize(limit)
	code, _, errOut = runTopArgs("-max-memory", formatByteSize(n/4), dir)
	if code != 1 || !strings.Contains(errOut, "the 20 inputs together take at most ") || !strings.Contains(errOut, "(the merged profile of the 0 read before it keeps ") {
		t.Fatalf("directory at -max-memory %s: exit %d: %s", formatByteSize(n/4), code, errOut)
	}
	_, suggested, _ = strings.Cut(errOut, "(e.g. -max-memory ")
	suggested, _, _ = strings.Cut(suggested, ")")
	if code, _, errOut := runTopArgs("-max-memory", suggested, dir); code != 0 {
		t.Errorf("directory at the suggested -max-memory %s: exit %d: %s", suggested, code, errOut)
	}
}

// A profile whose sampling mean is 0, negative, too large or missing is
// refused when read, alone or among others, by a message that names the
// file and the field.
func TestMeanRefusedNamesFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.pb.gz")
	if err := os.WriteFile(good, profileBytes(t, buildFixture(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(p *profile.Profile)
		want string
	}{
		{"sampling_mean 0", func(p *profile.Profile) { p.Sample[0].NumLabel["sampling_mean"] = []int64{0} }, "the label sampling_mean=0"},
		{"sampling_mean missing, period 0", func(p *profile.Profile) {
			delete(p.Sample[1].NumLabel, "sampling_mean")
			p.Period = 0
		}, "no sampling_mean label and the profile's period (the sampling mean of such samples) is 0"},
		{"means comment negative", func(p *profile.Profile) { p.Comments = append(p.Comments, "arenaprof means=-1024") }, `"-1024" is not a sampling mean`},
		{"memprofilerate missing", func(p *profile.Profile) { p.Sample[0].Label["memory"] = []string{"heap"} }, "has no memprofilerate label"},
		{"Go heap samples with sampling_mean 0 and bytes 0", func(p *profile.Profile) {
			for _, s := range p.Sample {
				s.Label["memory"] = []string{"heap"}
				s.NumLabel["memprofilerate"] = []int64{4096}
				s.NumLabel["sampling_mean"] = []int64{0}
				s.NumLabel["bytes"] = []int64{0}
			}
		}, "the label sampling_mean=0"},
		{"bytes 0", func(p *profile.Profile) { p.Sample[1].NumLabel["bytes"] = []int64{0} }, "the label bytes=0: an object size is at least 1 byte"},
	}
	for _, tt := range tests {
		bad := rewrite(t, good, dir, "bad.pb.gz", tt.edit)
		for _, args := range [][]string{{bad}, {good, bad}, {dir}} {
			code, _, errOut := runTopArgs(args...)
			if code != 1 || !strings.Contains(errOut, bad+": ") || !strings.Contains(errOut, tt.want) {
				t.Errorf("%s, top %v: exit %d: %s", tt.name, args, code, errOut)
			}
		}
	}
}

// FuzzMergedMeans merges two profiles whose period and sampling_mean
// labels are fuzzed: the merge is refused exactly when a part's mean is
// unusable, naming that part, and otherwise reads.
func FuzzMergedMeans(f *testing.F) {
	f.Add(int64(102400), int64(4096), true, int64(102400), int64(0), false)
	f.Add(int64(0), int64(0), true, int64(1), int64(-1), true)
	f.Add(int64(1<<40), int64(1<<41), false, int64(-5), int64(7), true)
	f.Fuzz(func(t *testing.T, period1, mean1 int64, labeled1 bool, period2, mean2 int64, labeled2 bool) {
		dir := t.TempDir()
		write := func(name string, period, mean int64, labeled bool) (string, bool) {
			p := buildFixture(t)
			p.Period = period
			for _, s := range p.Sample {
				if labeled {
					s.NumLabel["sampling_mean"] = []int64{mean}
				} else {
					delete(s.NumLabel, "sampling_mean")
				}
			}
			m := period
			if labeled {
				m = mean
			}
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, profileBytes(t, p), 0o644); err != nil {
				t.Fatal(err)
			}
			return path, m < 1 || m > 1<<40
		}
		a, badA := write("a.pb.gz", period1, mean1, labeled1)
		b, badB := write("b.pb.gz", period2, mean2, labeled2)
		ap, err := loadInputs([]string{a, b}, report.ParseOptions{})
		if (err != nil) != (badA || badB) {
			t.Fatalf("error %v; bad means: %v, %v", err, badA, badB)
		}
		if err != nil {
			first := a
			if !badA {
				first = b
			}
			if !strings.Contains(err.Error(), first+": ") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q does not name %s on one line", err, first)
			}
			return
		}
		for _, s := range ap.prof.Sample {
			if m := s.NumLabel["sampling_mean"]; len(m) == 0 || m[0] < 1 {
				t.Fatalf("merged sample without a usable mean: %v", s.NumLabel)
			}
		}
	})
}

// FuzzDirFileKind: any file name is read as one of Config.Dir's or not,
// without a panic; a name read as one starts with its time, ends with
// .pb.gz and gives a profile name of one component.
func FuzzDirFileKind(f *testing.F) {
	for _, n := range []string{"20261125T190000.000Z-shop-env=test,region=eu-1-arena.pb.gz", "20261125T190000.000Z-shop-heap-2.pb.gz", "20261125T190000.000Z-x.pb.gz", ".arenaprof-1.tmp", "20261125T190000.000Z--.pb.gz", "a.pb.gz"} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, name string) {
		kind, ok := dirFileKind(name)
		if !ok {
			return
		}
		if !strings.HasSuffix(name, ".pb.gz") || strings.Contains(kind, "-") {
			t.Fatalf("%q read as a file of Config.Dir, profile %q", name, kind)
		}
		if _, err := time.Parse(dirTimeLayout, name[:len(dirTimeLayout)]); err != nil {
			t.Fatalf("%q read as a file of Config.Dir without its time: %v", name, err)
		}
	})
}

// FuzzInputArgs: top's inputs, any mix of files, directories, globs and
// names of nothing (NUL-separated, each taken inside a directory of the
// test's), never panic and fail on one line with status 1 or 2, or read.
func FuzzInputArgs(f *testing.F) {
	dir := f.TempDir()
	good := filepath.Join(dir, "20261125T190000.000Z-shop-arena.pb.gz")
	if err := os.WriteFile(good, profileBytes(f, buildFixture(f)), 0o644); err != nil {
		f.Fatal(err)
	}
	name := filepath.Base(good)
	f.Add(name)
	f.Add(".")
	f.Add("*.pb.gz\x00" + name)
	f.Add("[\x00-")
	f.Add(".\x00" + name)
	f.Add("-\x00-")
	f.Fuzz(func(t *testing.T, args string) {
		list := strings.Split(args, "\x00")
		for i, a := range list {
			if a == "" || strings.HasPrefix(a, "-") && a != "-" || strings.Contains(a, "..") {
				return // flags are other fuzz targets' part; stay inside dir
			}
			if a != "-" {
				list[i] = filepath.Join(dir, a)
			}
		}
		stdin = strings.NewReader("")
		defer func() { stdin = os.Stdin }()
		code, out, errOut := runTopArgs(append([]string{"-by", "type"}, list...)...)
		checkTopRun(t, code, out, errOut)
	})
}

// Messages about thousands of inputs stay short: a refusal at
// -max-memory names the input at fault and the count, and an error of the
// merged profile names the inputs by their count, the first and the last,
// never the list (3,000 paths were 51,137 bytes).
func TestMergedErrorsShort(t *testing.T) {
	dir := copiesDir(t, tinyHeap(t), 3000)
	files, err := filepath.Glob(filepath.Join(dir, "*.pb.gz"))
	if err != nil || len(files) != 3000 {
		t.Fatalf("%d files, %v", len(files), err)
	}
	tests := []struct {
		name string
		run  func() (int, string, string)
		want string
	}{
		{"-max-memory", func() (int, string, string) { return runTopArgs(append([]string{"-max-memory", "1KiB"}, files...)...) },
			"cannot read " + files[0] + ": the 3000 inputs together take "},
		{"table error", func() (int, string, string) { return runTopArgs(append([]string{"-by", "type"}, files...)...) },
			"3000 inputs (" + files[0] + " ... " + files[2999] + "): a Go heap profile records no types"},
		{"diff", func() (int, string, string) {
			args := []string{"-by", "type"}
			for _, f := range files[:1500] {
				args = append(args, "-base", f)
			}
			return runDiffArgs(append(args, files[1500:]...)...)
		}, "1500 inputs (" + files[0] + " ... " + files[1499] + ") vs 1500 inputs (" + files[1500] + " ... " + files[2999] + "): "},
	}
	for _, tt := range tests {
		code, _, errOut := tt.run()
		if code != 1 || !strings.Contains(errOut, tt.want) || len(errOut) > 500 {
			t.Errorf("%s: exit %d, %d bytes: %.1000s", tt.name, code, len(errOut), errOut)
		}
	}
}

// What a directory or a glob does not read is said, in the heading and in
// -json: the other profiles of Config.Dir and the hidden files counted,
// every other entry named with why (a symbolic link loop, a broken link,
// a link to a file of the same directory, a directory, a file that is not
// a profile by its name), at most maxNamedSkips of them and the count of
// the rest. A link to a file elsewhere is read.
func TestDirSkipsNamed(t *testing.T) {
	fixture := profileBytes(t, buildFixture(t))
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	write("20261125T190000.000Z-shop-arena.pb.gz", fixture)
	write("20261125T190015.000Z-shop-wall.pb.gz", []byte("x"))
	write(".arenaprof-1.tmp", []byte("partial"))
	write("old.pb.gz", fixture)
	write("notes.txt", []byte("x"))
	elsewhere := writeTemp(t, "elsewhere.pb.gz", fixture)
	link(elsewhere, "20261125T190030.000Z-shop-arena.pb.gz")
	link("20261125T190000.000Z-shop-arena.pb.gz", "20261125T190045.000Z-shop-arena.pb.gz")
	link("loop-b.pb.gz", "loop-a.pb.gz")
	link("loop-a.pb.gz", "loop-b.pb.gz")
	link("gone.pb.gz", "broken.pb.gz")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runTopArgs("-json", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep topJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	want := []string{
		"1 wall profile", "1 hidden file",
		p("20261125T190045.000Z-shop-arena.pb.gz") + " (a symbolic link to 20261125T190000.000Z-shop-arena.pb.gz of the same directory, read once)",
		p("broken.pb.gz") + " (a broken symbolic link)",
		p("loop-a.pb.gz") + " (a symbolic link loop)",
		p("loop-b.pb.gz") + " (a symbolic link loop)",
		p("sub") + " (a directory: directories are not read inside one)",
		p("old.pb.gz") + " (not named as Config.Dir names its files, beside files of Config.Dir)",
		p("notes.txt") + " (not a profile by its name: no .pb.gz or .pb)",
	}
	if rep.Inputs == nil || rep.Inputs.Profiles != 2 || !slices.Equal(rep.Inputs.Skipped, want) {
		t.Errorf("inputs %+v, want 2 profiles and skipped:\n%s", rep.Inputs, strings.Join(want, "\n"))
	}
	code, out, _ = runTopArgs(dir)
	if code != 0 || !strings.Contains(out, "inputs: 2 profiles merged, ") || !strings.Contains(out, "; skipped: "+strings.Join(want, ", ")+"\n") {
		t.Errorf("heading lacks what was skipped:\n%s", out)
	}
	// A glob names the matches it does not read.
	code, out, errOut = runTopArgs("-json", filepath.Join(dir, "[lo]*"))
	if code != 0 {
		t.Fatalf("glob: exit %d: %s", code, errOut)
	}
	rep = topJSON{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	want = []string{p("loop-a.pb.gz") + " (a symbolic link loop)", p("loop-b.pb.gz") + " (a symbolic link loop)"}
	if rep.Inputs == nil || rep.Inputs.Profiles != 1 || !slices.Equal(rep.Inputs.Skipped, want) {
		t.Errorf("glob: inputs %+v, want 1 profile and the loops skipped", rep.Inputs)
	}
	// Past maxNamedSkips entries, the rest are counted.
	for i := range 15 {
		if err := os.Mkdir(filepath.Join(dir, fmt.Sprintf("sub%02d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, out, _ = runTopArgs("-json", dir)
	rep = topJSON{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if n := len(rep.Inputs.Skipped); n != 2+maxNamedSkips+1 || rep.Inputs.Skipped[n-1] != "12 more entries not read" {
		t.Errorf("%d entries skipped, the last %q", n, rep.Inputs.Skipped[n-1])
	}
}

// deref returns *p, or nil for nil, for messages.
func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
