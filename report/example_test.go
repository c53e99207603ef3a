package report_test

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/testkit/exampleprof"
	"github.com/arenaprof/arenaprof/report"
)

// A test comparing two versions of code: the new one allocates twice as
// much, and Diff says so with confidence 0.99.
func ExampleDiff() {
	base := exampleprof.Run(1, 100000) // about 1560 sample events
	next := exampleprof.Run(2, 200000)
	res, err := report.Diff(base, next, report.DiffOptions{Confidence: 0.99})
	if err != nil {
		panic(err)
	}
	for _, r := range res.Rows {
		fmt.Printf("%s: significant %v, grew by at least 50%%: %v\n", r.Key, r.Significant, r.RatioLo > 1.5)
	}
	// Output:
	// [64]uint8: significant true, grew by at least 50%: true
}

// Estimates with intervals, by type: the arena allocated 100000 objects of
// 64 bytes, and the interval of the true bytes covers them.
func ExampleTable() {
	prof := exampleprof.Run(3, 100000)
	res, err := report.Table(prof, report.TableOptions{By: "type", Confidence: 0.99})
	if err != nil {
		panic(err)
	}
	const truth = 100000 * 64
	for _, r := range res.Rows {
		near := math.Abs(float64(r.Bytes)-truth) < 0.1*truth
		fmt.Printf("%s: estimate within 10%% of the truth: %v, interval covers it: %v\n", r.Key, near, r.Lo <= truth && truth <= r.Hi)
	}
	// Output:
	// [64]uint8: estimate within 10% of the truth: true, interval covers it: true
}

// A Go heap profile from runtime/pprof names no Go release: the table
// assumes the sampler of Go 1.24 and later and says so; GoVersion names an
// older runtime, whose sampler needs runtime/pprof's own weights.
func ExampleTableOptions_goVersion() {
	for range 16 { // 64 MiB: sampled at any MemProfileRate up to the default
		exampleSink = make([]byte, 4<<20)
	}
	runtime.GC()
	var buf bytes.Buffer
	if err := pprof.Lookup("allocs").WriteTo(&buf, 0); err != nil {
		panic(err)
	}
	prof, err := report.Parse(&buf, report.ParseOptions{})
	if err != nil {
		panic(err)
	}
	for _, v := range []string{"", "go1.23"} {
		res, err := report.Table(prof, report.TableOptions{By: "func", GoVersion: v})
		if err != nil {
			panic(err)
		}
		fmt.Printf("GoVersion %q: the %s rule\n", v, res.HeapSampler)
	}
	// Output:
	// GoVersion "": the go1.24 rule
	// GoVersion "go1.23": the go1.23 rule
}

var exampleSink []byte

// exampleInFlight holds the buffers of the last four requests of
// exampleHandle.
var exampleInFlight [4]*[64 << 10]byte

// exampleHandle serves one request: a 64 KiB buffer that lives until four
// requests later.
//
//go:noinline
func exampleHandle(i int) { exampleInFlight[i%4] = new([64 << 10]byte) }

// Two heap profiles of this process, taken right after a GC around 2000
// requests: Advise finds the request's buffer short-lived enough for an
// arena, and predicts that moving it saves most GC cycles.
func ExampleAdvise() {
	heapProfile := func() *profile.Profile {
		runtime.GC() // the runtime publishes its counts at the end of a cycle
		var buf bytes.Buffer
		if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
			panic(err)
		}
		p, err := report.Parse(&buf, report.ParseOptions{})
		if err != nil {
			panic(err)
		}
		return p
	}
	earlier := heapProfile()
	for i := range 2000 { // 125 MiB
		exampleHandle(i)
	}
	later := heapProfile()
	res, err := report.Advise(earlier, later, report.AdviseOptions{Lifetime: 100 * time.Millisecond})
	if err != nil {
		panic(err)
	}
	for _, r := range res.Rows {
		if strings.HasSuffix(r.Key, ".exampleHandle") {
			fmt.Printf("%s: candidate %v, objects of %d bytes\n", r.Display, r.Candidate, r.Sizes[0].Size)
		}
	}
	// The saving covers every allocation of the process in the window
	// (the profile writer's own among them), so its bound is loose here.
	fmt.Printf("GC cycles saved: more than half: %v\n", res.GCSavingLo > 0.5)
	// Output:
	// report_test.exampleHandle: candidate true, objects of 65536 bytes
	// GC cycles saved: more than half: true
}
