package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/tabfmt"
	"github.com/arenaprof/arenaprof/profiler"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden files of arenaprof top and the generated part of docs/cli.md")

// fixtureBucket is one collector bucket of the fixture profile.
type fixtureBucket struct {
	stack   []string // leaf first
	typ     string
	handler string // arena label "handler"; "" for none
	size    int64
	mean    int64
	samples int64 // raw sample events
	tail    int64 // raw sum of size-offset
	live    int64 // events whose objects are still in use
}

const (
	fnParseUser = "github.com/arenaprof/arenaprof/internal/workload.parseUser"
	fnParseOrd  = "github.com/arenaprof/arenaprof/internal/workload.parseOrder"
	fnBuffer    = "github.com/arenaprof/arenaprof/internal/workload.(*codec).growBufferForAVeryLongRecordBatch"
	fnHandle    = "github.com/arenaprof/arenaprof/internal/workload.(*server).handle"
	fnServe     = "net/http.HandlerFunc.ServeHTTP"
	fnMain      = "main.main"
	typLong     = "map[string]github.com/arenaprof/arenaprof/internal/workload.orderLineItem"
)

// fixtureBuckets is a fixed, made-up set of buckets covering several types,
// functions, stacks, labels, a second sampling mean and an unlabeled arena.
var fixtureBuckets = []fixtureBucket{
	{[]string{fnParseUser, fnHandle, fnServe}, "workload.user", "users", 96, 102400, 310, 15120, 40},
	{[]string{fnParseUser, fnHandle, fnServe}, "workload.user", "users", 96, 4096, 120, 5890, 0},
	{[]string{fnParseUser, fnHandle, fnServe}, "string", "users", 24, 102400, 57, 700, 9},
	{[]string{fnParseOrd, fnHandle, fnServe}, "workload.order", "orders", 160, 102400, 205, 16400, 31},
	{[]string{fnParseOrd, fnHandle, fnServe}, typLong, "orders", 48, 102400, 64, 1500, 12},
	{[]string{fnBuffer, fnParseOrd, fnHandle, fnServe}, "[]uint8", "orders", 1 << 20, 102400, 1024, 968900000, 3},
	{[]string{fnBuffer, fnMain}, "[]uint8", "", 65536, 102400, 18, 600000, 0},
	{[]string{fnMain}, "workload.config", "", 512, 102400, 1, 300, 1},
	{[]string{fnParseUser, fnHandle, fnServe}, "workload.user", "admin", 96, 102400, 0, 0, 0}, // empty bucket
}

// buildFixture returns the fixture as an arenaprof profile, following the
// exporter's format.
func buildFixture(t testing.TB) *profile.Profile {
	p := &profile.Profile{
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:     102400,
		SampleType: []*profile.ValueType{
			{Type: "alloc_objects", Unit: "count"},
			{Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"},
			{Type: "inuse_space", Unit: "bytes"},
			{Type: "alloc_samples", Unit: "count"},
			{Type: "alloc_tail", Unit: "bytes"},
		},
		DefaultSampleType: "alloc_space",
		Comments:          []string{"arenaprof window=end"},
		TimeNanos:         1_700_000_000_000_000_000,
		DurationNanos:     30_000_000_000,
	}
	funcs := map[string]*profile.Function{}
	locs := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l := locs[name]; l != nil {
			return l
		}
		f := &profile.Function{ID: uint64(len(funcs) + 1), Name: name, SystemName: name, Filename: "workload.go"}
		funcs[name] = f
		p.Function = append(p.Function, f)
		l := &profile.Location{ID: uint64(len(locs) + 1), Line: []profile.Line{{Function: f, Line: int64(10 * (len(locs) + 1))}}}
		locs[name] = l
		p.Location = append(p.Location, l)
		return l
	}
	for _, b := range fixtureBuckets {
		w, err := estimate.WeightedBytes(b.size, b.mean)
		if err != nil {
			t.Fatal(err)
		}
		space := int64(math.Round(float64(b.samples) * w))
		inuse := int64(math.Round(float64(b.live) * w))
		s := &profile.Sample{
			Value:    []int64{space / b.size, space, inuse / b.size, inuse, b.samples, b.tail},
			Label:    map[string][]string{"type": {b.typ}},
			NumLabel: map[string][]int64{"bytes": {b.size}, "sampling_mean": {b.mean}},
			NumUnit:  map[string][]string{"bytes": {"bytes"}, "sampling_mean": {"bytes"}},
		}
		if b.handler != "" {
			s.Label["handler"] = []string{b.handler}
		}
		for _, fn := range b.stack {
			s.Location = append(s.Location, loc(fn))
		}
		p.Sample = append(p.Sample, s)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	return p
}

func profileBytes(t testing.TB, p *profile.Profile) []byte {
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeTemp(t testing.TB, name string, data []byte) string {
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func fixturePath(t testing.TB) string {
	return writeTemp(t, "arena.pb.gz", profileBytes(t, buildFixture(t)))
}

func runTopArgs(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = runTop(args, &o, &e)
	return code, o.String(), e.String()
}

func TestTopGolden(t *testing.T) {
	path := fixturePath(t)
	tests := []struct {
		name string
		args []string
	}{
		{"type", nil},
		{"func", []string{"-by", "func"}},
		{"stack", []string{"-by", "stack"}},
		{"label", []string{"-by", "label=handler"}},
		{"inuse", []string{"-sample", "inuse"}},
		{"n2_conf99", []string{"-n", "2", "-confidence", "0.99"}},
		{"json", []string{"-json", "-by", "stack", "-n", "0"}},
		{"json_inuse", []string{"-json", "-sample", "inuse", "-by", "func"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runTopArgs(append(tt.args, path)...)
			if code != 0 {
				t.Fatalf("exit %d, stderr: %s", code, errOut)
			}
			golden := filepath.Join("testdata", "top_"+tt.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestTopGolden -update)", err)
			}
			if out != string(want) {
				t.Errorf("output differs from %s (rerun with -update if intended)\ngot:\n%s\nwant:\n%s", golden, out, want)
			}
		})
	}
}

// TestTopTableWidth: printed to a file or pipe, keys are whole (function
// names with their import path); on a terminal of 80 columns they are cut
// to fit it.
func TestTopTableWidth(t *testing.T) {
	path := fixturePath(t)
	for _, by := range []string{"type", "func", "stack", "label=handler"} {
		for _, sample := range []string{"alloc", "inuse"} {
			code, out, errOut := runTopArgs("-by", by, "-sample", sample, "-n", "0", path)
			if code != 0 {
				t.Fatalf("-by %s -sample %s: exit %d: %s", by, sample, code, errOut)
			}
			if strings.Contains(out, "…") {
				t.Errorf("-by %s -sample %s: a key was cut:\n%s", by, sample, out)
			}
			if strings.Contains(out, "NaN") || strings.Contains(out, "Inf") {
				t.Errorf("-by %s: output has a non-finite number:\n%s", by, out)
			}
			opts, err := parseTopArgs([]string{"-by", by, "-sample", sample, "-n", "0", path})
			if err != nil {
				t.Fatal(err)
			}
			opts.width = 80
			var buf bytes.Buffer
			if err := top(opts, &buf); err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(buf.String(), "\n") {
				if n := utf8.RuneCountInString(line); n > 80 {
					t.Errorf("-by %s -sample %s: line of %d columns: %q", by, sample, n, line)
				}
			}
			if by == "stack" { // the leaf function whole, the root side cut
				whole := strings.Split(out, "\n")
				for i, line := range strings.Split(buf.String(), "\n") {
					leaf, _, ok := strings.Cut(whole[i], " < ")
					if !ok {
						continue
					}
					at := strings.LastIndex(leaf, "  ") + 2
					leaf = tabfmt.ShortFuncName(leaf[at:])
					if len(leaf) < 80-at && !strings.Contains(line, "  "+leaf+" <") && !strings.HasSuffix(line, "  "+leaf+"…") {
						t.Errorf("-by stack -sample %s: leaf %q cut at 80 columns: %q", sample, leaf, line)
					}
				}
			}
		}
	}
	if code, out, _ := runTopArgs("-by", "func", path); code != 0 || !strings.Contains(out, "github.com/arenaprof/arenaprof/") {
		t.Errorf("-by func lacks full function names:\n%s", out)
	}
}

// TestTopJSONShape checks the keys and the arithmetic of the -json output.
func TestTopJSONShape(t *testing.T) {
	path := fixturePath(t)
	for _, sample := range []string{"alloc", "inuse"} {
		for _, by := range []string{"type", "func", "stack", "label=handler"} {
			code, out, errOut := runTopArgs("-json", "-n", "0", "-by", by, "-sample", sample, path)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var doc map[string]json.RawMessage
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"sample", "by", "confidence", "window", "groups", "rows", "total"} {
				if _, ok := doc[k]; !ok {
					t.Errorf("missing top-level key %q", k)
				}
			}
			var rep struct {
				Sample     string
				By         string
				Confidence float64
				Window     string
				Groups     int
				Rows       []map[string]any
				Total      map[string]any
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Sample != sample || rep.By != by || rep.Confidence != 0.95 || rep.Window != "end" || rep.Groups != len(rep.Rows) {
				t.Errorf("header: %+v", rep)
			}
			rowKeys := []string{"key", "samples", "tail", "bytes", "lo", "hi", "objects", "share"}
			var sumBytes, sumSamples, sumShare float64
			for _, r := range append(rep.Rows, rep.Total) {
				for _, k := range rowKeys {
					if _, ok := r[k]; !ok {
						t.Errorf("row %v lacks %q", r["key"], k)
					}
				}
				if sample == "inuse" {
					if r["tail"] != nil || r["tail_min"] == nil || r["tail_max"] == nil {
						t.Errorf("inuse row %v: tail %v, tail_min %v, tail_max %v", r["key"], r["tail"], r["tail_min"], r["tail_max"])
					}
				} else if r["tail"] == nil {
					t.Errorf("alloc row %v has a null tail", r["key"])
				}
				lo, hi := r["lo"].(float64), r["hi"].(float64)
				if !(0 <= lo && lo <= hi) {
					t.Errorf("row %v: interval [%v, %v]", r["key"], lo, hi)
				}
			}
			for _, r := range rep.Rows {
				sumBytes += r["bytes"].(float64)
				sumSamples += r["samples"].(float64)
				sumShare += r["share"].(float64)
			}
			if sumBytes != rep.Total["bytes"].(float64) || sumSamples != rep.Total["samples"].(float64) {
				t.Errorf("rows sum to %v bytes, %v samples; total %v, %v", sumBytes, sumSamples, rep.Total["bytes"], rep.Total["samples"])
			}
			if math.Abs(sumShare-1) > 1e-9 || rep.Total["share"].(float64) != 1 {
				t.Errorf("shares sum to %v, total share %v", sumShare, rep.Total["share"])
			}
		}
	}
}

// TestTopStackKeyFull checks that -json keeps whole stacks with full names.
func TestTopStackKeyFull(t *testing.T) {
	code, out, errOut := runTopArgs("-json", "-by", "stack", "-n", "1", fixturePath(t))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := strings.Join([]string{fnBuffer, fnParseOrd, fnHandle, fnServe}, " < ")
	if !strings.Contains(out, fmt.Sprintf("%q", want)) {
		t.Errorf("JSON lacks the full stack key %q:\n%s", want, out)
	}
}

func heapProfile(t *testing.T) []byte {
	var buf bytes.Buffer
	if err := pprof.WriteHeapProfile(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestTopBadInput(t *testing.T) {
	good := fixturePath(t)
	heap := writeTemp(t, "heap.pb.gz", heapProfile(t))
	garbage := writeTemp(t, "garbage.pb.gz", []byte("\x00\x01this is not a profile at all\xff\xfe"))
	gzGarbage := writeTemp(t, "gz.pb.gz", []byte{0x1f, 0x8b, 1, 2, 3, 4, 5})
	empty := writeTemp(t, "empty.pb.gz", nil)
	var gbuf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&gbuf, 0); err != nil {
		t.Fatal(err)
	}
	goroutines := writeTemp(t, "goroutine.pb.gz", gbuf.Bytes())
	hp, err := profile.ParseData(heapProfile(t))
	if err != nil {
		t.Fatal(err)
	}
	hp.Period = 0
	heapRate0 := writeTemp(t, "heap0.pb.gz", profileBytes(t, hp))
	var bombBuf bytes.Buffer
	zw := gzip.NewWriter(&bombBuf)
	zw.Write(make([]byte, 4<<20)) // 4 MiB of zeros in about 4 KiB
	zw.Close()
	bomb := writeTemp(t, "bomb.pb.gz", bombBuf.Bytes())

	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL + "/debug/arenaprof/profile"
	closed.Close()
	notFound := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "profiling is off: call profiler.Start first\nsecond line", http.StatusServiceUnavailable)
	}))
	defer notFound.Close()

	tests := []struct {
		name string
		args []string
		code int
		want string // substring of the one-line message
	}{
		{"heap profile by type", []string{"-by", "type", heap}, 1, "a Go heap profile records no types; group it by func, stack or size"},
		{"goroutine profile", []string{goroutines}, 1, "a goroutine profile (sample types goroutine/count) carries no sampled memory"},
		{"heap profile at rate 0", []string{heapRate0}, 1, "MemProfileRate 0, which samples nothing"},
		{"garbage", []string{garbage}, 1, "is not a pprof profile"},
		{"bad gzip", []string{gzGarbage}, 1, "is not a pprof profile"},
		{"empty file", []string{empty}, 1, "is empty"},
		{"missing file", []string{filepath.Join(t.TempDir(), "nope.pb.gz")}, 1, "no such file"},
		{"empty directory", []string{t.TempDir()}, 1, "holds no profile: no file of Config.Dir and no .pb.gz or .pb file"},
		{"unknown by", []string{"-by", "color", good}, 2, `unknown -by "color"; use type, func, stack, size or label=KEY`},
		{"empty label key", []string{"-by", "label=", good}, 2, "needs a label key"},
		{"unknown sample", []string{"-sample", "peak", good}, 2, `unknown -sample "peak"`},
		{"object sample", []string{"-sample", "alloc_objects", good}, 2, "the table gives objects beside bytes in every row; use -sample alloc"},
		{"in-use object sample", []string{"-sample", "inuse_objects", good}, 2, "use -sample inuse"},
		{"unknown label", []string{"-by", "label=nosuch", good}, 1, `no sample carries the label "nosuch"`},
		{"numeric label", []string{"-by", "label=bytes", good}, 1, "numeric label"},
		{"file above max-bytes", []string{"-max-bytes", "100", good}, 1, "larger than -max-bytes 100 bytes"},
		{"decompression bomb", []string{"-max-bytes", "1048576", bomb}, 1, "not a profile: its data is no protobuf message and starts like no legacy profile (refused at -max-bytes 1MiB"},
		{"bad max-bytes", []string{"-max-bytes", "0", good}, 2, "bad -max-bytes"},
		{"word max-bytes", []string{"-max-bytes", "lots", good}, 2, "bad -max-bytes"},
		{"word max-memory", []string{"-max-memory", "1 gallon", good}, 2, "bad -max-memory"},
		{"negative n", []string{"-n", "-1", good}, 2, "bad -n"},
		{"word n", []string{"-n", "ten", good}, 2, "bad -n"},
		{"confidence 0", []string{"-confidence", "0", good}, 2, "bad -confidence"},
		{"confidence 1", []string{"-confidence", "1", good}, 2, "bad -confidence"},
		{"confidence 95", []string{"-confidence", "95", good}, 2, "bad -confidence"},
		{"confidence NaN", []string{"-confidence", "NaN", good}, 2, "bad -confidence"},
		{"confidence word", []string{"-confidence", "high", good}, 2, "bad -confidence"},
		{"unknown flag", []string{"-sort", "bytes", good}, 2, "flag provided but not defined: -sort"},
		{"flag without value", []string{good, "-n"}, 2, "flag needs an argument"},
		{"no argument", nil, 2, "missing PROFILE"},
		{"same file twice", []string{good, good}, 2, "is given twice: its samples would count twice"},
		{"closed server", []string{closedURL}, 1, "check that the program is running"},
		{"server error", []string{notFound.URL}, 1, "503 Service Unavailable: profiling is off: call profiler.Start first"},
		{"bad url", []string{"http://"}, 1, "not a valid URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runTopArgs(tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tt.code, errOut)
			}
			if out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
			if !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr %q lacks %q", errOut, tt.want)
			}
			if strings.Count(errOut, "\n") != 1 || !strings.HasSuffix(errOut, "\n") {
				t.Errorf("stderr is not exactly one line: %q", errOut)
			}
			if strings.Contains(errOut, "second line") || strings.Contains(errOut, "goroutine 1 [") {
				t.Errorf("stderr has more than the message: %q", errOut)
			}
		})
	}
}

func TestTopHelp(t *testing.T) {
	code, out, errOut := runTopArgs("-h")
	if code != 0 || out != "" || !strings.Contains(errOut, "usage: arenaprof top") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestTopURL serves the fixture over HTTP (gzipped, as the handler does)
// and checks that the output equals the one from the file.
func TestTopURL(t *testing.T) {
	data := profileBytes(t, buildFixture(t))
	path := writeTemp(t, "arena.pb.gz", data)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(data)
	}))
	defer srv.Close()
	for _, args := range [][]string{{"-by", "func"}, {"-json", "-sample", "inuse"}} {
		c1, fromFile, e1 := runTopArgs(append(args, path)...)
		c2, fromURL, e2 := runTopArgs(append(args, srv.URL+"/debug/arenaprof/profile?seconds=0")...)
		if c1 != 0 || c2 != 0 {
			t.Fatalf("exit %d, %d: %s %s", c1, c2, e1, e2)
		}
		if fromFile != fromURL {
			t.Errorf("%v: URL output differs from file output:\n%s\n%s", args, fromURL, fromFile)
		}
	}
}

// TestTopFlagsAfterProfile checks that flags may follow PROFILE.
func TestTopFlagsAfterProfile(t *testing.T) {
	path := fixturePath(t)
	c1, before, _ := runTopArgs("-by", "func", "-n", "3", path)
	c2, after, _ := runTopArgs(path, "-by", "func", "-n", "3")
	if c1 != 0 || c2 != 0 || before != after {
		t.Errorf("exit %d, %d; outputs differ:\n%s\n%s", c1, c2, before, after)
	}
}

// TestTopEmptyProfile checks a profile without samples and without a
// window marking: no rows, a zero total whose upper bound allows for the
// unmarked (hence "both") window.
func TestTopEmptyProfile(t *testing.T) {
	p := buildFixture(t)
	p.Sample, p.Location, p.Function, p.Comments = nil, nil, nil, nil
	path := writeTemp(t, "empty.pb.gz", profileBytes(t, p))
	code, out, errOut := runTopArgs("-json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep topJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Window != "both" || rep.Groups != 0 || len(rep.Rows) != 0 || rep.Total.Bytes != 0 || rep.Total.Lo != 0 || !(rep.Total.Hi > 0) {
		t.Errorf("empty profile: %s", out)
	}
	code, out, errOut = runTopArgs(path)
	if code != 0 || !strings.Contains(out, "0 groups") || !strings.Contains(out, "window both") {
		t.Errorf("exit %d, stderr %q, table:\n%s", code, errOut, out)
	}
}

type e2eRecord struct {
	id   int64
	name [56]byte
}

//go:noinline
func allocE2ERecords(a *arena.Arena, n int) {
	for i := range n {
		r := arena.New[e2eRecord](a)
		r.id = int64(i)
	}
}

// TestTopExporterProfile reads a profile written by the exporter for a
// known workload and checks that the interval of the type covers the true
// bytes. At confidence 1-1e-7 a sound interval misses with probability at
// most 1e-7 per run.
func TestTopExporterProfile(t *testing.T) {
	const n, size = 20000, 64 // 1.28e6 bytes: about 312 events at mean 4096
	setMeanBytes(t, 4096)
	p, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	a := arena.NewArena()
	allocE2ERecords(a, n)
	a.Reset()
	p.Stop()
	var buf bytes.Buffer
	if err := export.Write(&buf, p.Snapshot()); err != nil {
		t.Fatal(err)
	}
	path := writeTemp(t, "arena.pb.gz", buf.Bytes())
	code, out, errOut := runTopArgs("-json", "-confidence", "0.9999999", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep topJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var row *topRowJSON
	for i := range rep.Rows {
		if rep.Rows[i].Key == "main.e2eRecord" {
			row = &rep.Rows[i]
		}
	}
	if row == nil {
		t.Fatalf("no row for main.e2eRecord:\n%s", out)
	}
	if row.Samples == 0 || !(row.Lo <= n*size && n*size <= row.Hi) {
		t.Errorf("true bytes %d outside [%v, %v] (%d events, estimate %d)", n*size, row.Lo, row.Hi, row.Samples, row.Bytes)
	}
	code, out, errOut = runTopArgs("-by", "func", path)
	if code != 0 || !strings.Contains(out, "arenaprof.allocE2ERecords") {
		t.Errorf("exit %d, stderr %q; -by func lacks the allocating function:\n%s", code, errOut, out)
	}
}

// checkTopRun fails the test if a run of top panicked in spirit: an exit
// status other than 0, 1, 2, an error message of other than one line, or a
// non-finite number in the output.
func checkTopRun(t *testing.T, code int, out, errOut string) {
	t.Helper()
	switch code {
	case 0:
		if strings.Contains(out, "NaN") || strings.Contains(out, "Inf") {
			t.Fatalf("non-finite number in output:\n%s", out)
		}
	case 1, 2:
		if strings.Count(errOut, "\n") != 1 {
			t.Fatalf("exit %d with a message of other than one line: %q", code, errOut)
		}
	default:
		t.Fatalf("exit status %d", code)
	}
}

func FuzzTopFlags(f *testing.F) {
	f.Add("type", "alloc", "10", "0.95", "1073741824", false, false)
	f.Add("func", "inuse", "0", "0.5", "100", true, false)
	f.Add("stack", "alloc_space", "1", "0.999999", "9223372036854775807", false, true)
	f.Add("label=handler", "inuse_space", "3", "1e-9", "1", true, true)
	f.Add("size", "alloc_objects", "2", "0.9", "0", false, false)
	f.Add("label=", "x", "-1", "NaN", "-5", false, false)
	f.Add("type", "alloc", "99999999999999999999", "+Inf", "1e9", false, false)
	path := fixturePath(f)
	f.Fuzz(func(t *testing.T, by, sample, n, conf, maxBytes string, js, full bool) {
		args := []string{"-by=" + by, "-sample=" + sample, "-n=" + n, "-confidence=" + conf, "-max-bytes=" + maxBytes}
		if js {
			args = append(args, "-json")
		}
		if full {
			args = append(args, "-full")
		}
		code, out, errOut := runTopArgs(append(args, path)...)
		checkTopRun(t, code, out, errOut)
	})
}

func FuzzTopProfile(f *testing.F) {
	good := profileBytes(f, buildFixture(f))
	f.Add(good)
	raw := buildFixture(f)
	var buf bytes.Buffer
	if err := raw.WriteUncompressed(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte{})
	f.Add([]byte{0x1f, 0x8b})
	f.Add([]byte("heap profile: 1: 2 [3: 4] @ heap/1048576\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ap, err := decodeArenaProfile("fuzz.pb", data, pprofmt.DefaultMaxBytes)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error: %q", err)
			}
			return
		}
		for _, sample := range []string{"alloc", "inuse"} {
			var out bytes.Buffer
			opts := topOptions{commonOptions: commonOptions{by: "stack", sample: sample, n: 5, confidence: 0.95}, src: "fuzz.pb"}
			if err := topReport(ap, opts, &out); err != nil {
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("multi-line error: %q", err)
				}
				continue
			}
			if s := out.String(); strings.Contains(s, "NaN") || strings.Contains(s, "Inf") {
				t.Fatalf("non-finite number in output:\n%s", s)
			}
		}
	})
}

// TestParseAnywhere: flags before, between or after the positional
// arguments, values that look like flags, "-" for standard input, and
// "--" ending the flags.
func TestParseAnywhere(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		n       string
		json    bool
		focus   string
		pos     []string
		wantErr string
	}{
		{args: []string{"prof.pb.gz", "-n", "5"}, n: "5", pos: []string{"prof.pb.gz"}},
		{args: []string{"-n", "5", "prof.pb.gz"}, n: "5", pos: []string{"prof.pb.gz"}},
		{args: []string{"a", "-json", "b", "-n=3"}, n: "3", json: true, pos: []string{"a", "b"}},
		{args: []string{"a", "--n", "7", "b"}, n: "7", pos: []string{"a", "b"}},
		{args: []string{"-focus", "-n", "a"}, n: "10", focus: "-n", pos: []string{"a"}},
		{args: []string{"-", "-json"}, n: "10", json: true, pos: []string{"-"}},
		{args: []string{"a", "--", "-n", "5"}, n: "10", pos: []string{"a", "-n", "5"}},
		{args: []string{"-focus", "--", "a", "--", "-json"}, n: "10", focus: "--", pos: []string{"a", "-json"}},
		{args: []string{"a", "-json=false", "-n", "2"}, n: "2", pos: []string{"a"}},
		{args: []string{"a", "-nope"}, wantErr: "flag provided but not defined: -nope"},
		{args: []string{"a", "-n"}, wantErr: "flag needs an argument: -n"},
	} {
		fs := flag.NewFlagSet("arenaprof top", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		n := fs.String("n", "10", "")
		js := fs.Bool("json", false, "")
		focus := fs.String("focus", "", "")
		pos, err := parseAnywhere(fs, tc.args)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if *n != tc.n || *js != tc.json || *focus != tc.focus || !slices.Equal(pos, tc.pos) {
			t.Errorf("%q: -n %q -json %v -focus %q, positional %q; want %q %v %q %q", tc.args, *n, *js, *focus, pos, tc.n, tc.json, tc.focus, tc.pos)
		}
	}
	// Through a command: top's -n after the profile is honoured.
	path := fixturePath(t)
	code, out, errOut := runTopArgs(path, "-n", "1", "-by", "func")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "showing 1 of") {
		t.Errorf("-n 1 after the profile not honoured:\n%s", out)
	}
}

// FuzzParseAnywhere: any arguments (NUL-separated here) parse or fail
// with an error, never a panic; the positional arguments come back in
// their order, none lost to the flags but the flags' values.
func FuzzParseAnywhere(f *testing.F) {
	f.Add("prof.pb.gz\x00-n\x005")
	f.Add("-focus\x00--\x00a\x00--\x00-json")
	f.Add("-\x00-n=3\x00--n\x00")
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		fs := flag.NewFlagSet("arenaprof top", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.String("n", "10", "")
		fs.Bool("json", false, "")
		pos, err := parseAnywhere(fs, args)
		if err != nil {
			return
		}
		i := 0 // pos is a subsequence of args
		for _, a := range args {
			if i < len(pos) && a == pos[i] {
				i++
			}
		}
		if i != len(pos) {
			t.Errorf("parseAnywhere(%q) = %q: not in order", args, pos)
		}
	})
}
