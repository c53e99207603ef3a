package report

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/arenaprof/arenaprof/internal/testkit/fixture"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/goheap"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// adviseRec is one record of a simulated Go heap profile: raw counts of
// sampled objects of one size at one function, allocated and in use.
type adviseRec struct {
	fn           string
	size         int64
	alloc, inuse int64
}

// adviseProfile returns a Go heap profile as runtime/pprof writes it (Go
// 1.23's sampler, which it names) for raw counts recs at rate, written at
// time at.
func adviseProfile(rate int64, at time.Time, recs []adviseRec) *profile.Profile {
	p := &profile.Profile{
		Comments: []string{pprofmt.GoVersionComment("go1.23")},
		SampleType: []*profile.ValueType{
			{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"},
		},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:     rate,
		TimeNanos:  at.UnixNano(),
		Mapping:    []*profile.Mapping{{ID: 1, File: "/bin/service", BuildID: "abc"}},
	}
	locs := map[string]*profile.Location{}
	for _, r := range recs {
		loc := locs[r.fn]
		if loc == nil {
			f := &profile.Function{ID: uint64(len(locs) + 1), Name: r.fn}
			loc = &profile.Location{ID: f.ID, Address: 0x1000 + f.ID, Mapping: p.Mapping[0], Line: []profile.Line{{Function: f, Line: 1}}}
			locs[r.fn] = loc
			p.Function = append(p.Function, f)
			p.Location = append(p.Location, loc)
		}
		scale := 1 / -math.Expm1(-float64(r.size)/float64(rate))
		p.Sample = append(p.Sample, &profile.Sample{
			Location: []*profile.Location{loc},
			Value: []int64{int64(float64(r.alloc) * scale), int64(float64(r.alloc*r.size) * scale),
				int64(float64(r.inuse) * scale), int64(float64(r.inuse*r.size) * scale)},
			NumLabel: map[string][]int64{"bytes": {r.size}},
		})
	}
	return p
}

var adviseT0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// advisePair is a request-scoped site, a cache and a leak, 10 s apart at
// MemProfileRate 4096.
func advisePair() (earlier, later *profile.Profile) {
	earlier = adviseProfile(4096, adviseT0, []adviseRec{
		{"main.handle", 4096, 1000, 3},
		{"main.cache", 512, 100, 900},
		{"main.leak", 1024, 50, 50},
	})
	later = adviseProfile(4096, adviseT0.Add(10*time.Second), []adviseRec{
		{"main.handle", 4096, 11000, 2},
		{"main.handle", 64, 400, 0},
		{"main.cache", 512, 200, 1000},
		{"main.leak", 1024, 100, 100},
	})
	return earlier, later
}

func TestAdvise(t *testing.T) {
	earlier, later := advisePair()
	res, err := Advise(earlier, later, AdviseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Window != 10*time.Second || res.Groups != 3 || res.Candidates != 1 || res.HeapRate != 4096 {
		t.Fatalf("window %v, %d groups, %d candidates, rate %d", res.Window, res.Groups, res.Candidates, res.HeapRate)
	}
	w := func(size int64) float64 { return goheap.Exact.Weight(size, 4096) }
	want := []struct {
		key         string
		alloc, live float64
		candidate   bool
	}{
		{"main.handle", 10000*w(4096) + 400*w(64), 2 * w(4096), true},
		{"main.cache", 100 * w(512), 1000 * w(512), false},
		{"main.leak", 50 * w(1024), 100 * w(1024), false},
	}
	for i, x := range want {
		r := res.Rows[i]
		if r.Key != x.key || r.Candidate != x.candidate {
			t.Errorf("row %d: %s candidate %v, want %s %v", i, r.Key, r.Candidate, x.key, x.candidate)
			continue
		}
		if math.Abs(r.Alloc-x.alloc) > 2 || math.Abs(r.Live-x.live) > 2 {
			t.Errorf("%s: alloc %.0f live %.0f, want %.0f %.0f", r.Key, r.Alloc, r.Live, x.alloc, x.live)
		}
		life := time.Duration(x.live / x.alloc * 10 * 1e9)
		if d := float64(r.Lifetime-life) / float64(life); math.Abs(d) > 1e-3 { // the profile's values are truncated
			t.Errorf("%s: lifetime %v, want %v", r.Key, r.Lifetime, life)
		}
		if !(r.AllocLo <= r.Alloc && r.Alloc <= r.AllocHi && r.LiveLo <= r.Live && r.Live <= r.LiveHi &&
			r.LifetimeLo <= r.Lifetime && r.Lifetime <= r.LifetimeHi) {
			t.Errorf("%s: an estimate outside its interval: %+v", r.Key, r)
		}
	}
	if h := res.Rows[0]; len(h.Sizes) != 2 || h.Sizes[0].Size != 4096 || math.Abs(h.Sizes[0].Objects-10000*w(4096)/4096) > 1e-6 {
		t.Errorf("sizes of main.handle: %+v", h.Sizes)
	}
	share := res.Rows[0].Alloc / res.Total.Alloc
	if math.Abs(res.GCSaving-share) > 1e-6 || !(res.GCSavingLo < share && share < res.GCSavingHi && res.GCSavingHi <= 1) {
		t.Errorf("saving %v in [%v, %v], want %v inside", res.GCSaving, res.GCSavingLo, res.GCSavingHi, share)
	}
	if res.Total.Key != "total" || math.Abs(res.Total.Alloc-(want[0].alloc+want[1].alloc+want[2].alloc)) > 5 {
		t.Errorf("total %+v", res.Total)
	}

	// A record the runtime had not published at EARLIER (zero values, no
	// size) is no record; -any-order widens the groups' intervals.
	fresh := adviseProfile(4096, adviseT0, []adviseRec{{"main.fresh", 64, 1, 0}}).Sample[0]
	fresh.Value, fresh.NumLabel = []int64{0, 0, 0, 0}, nil
	e2 := earlier.Copy()
	e2.Sample = append(e2.Sample, fresh)
	wide, err := Advise(e2, later, AdviseOptions{AnyOrder: true})
	if err != nil {
		t.Fatal(err)
	}
	if !wide.AnyOrder || wide.Groups != 3 || wide.Rows[0].AllocHi < res.Rows[0].AllocHi {
		t.Errorf("-any-order: %+v", wide)
	}

	// -lifetime long enough for the leak's and the cache's objects.
	res, err = Advise(earlier, later, AdviseOptions{Lifetime: time.Hour, N: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Candidates != 3 || len(res.Rows) != 1 || res.GCSaving != 1 || res.GCSavingHi != 1 {
		t.Errorf("-lifetime 1h: %d candidates, %d rows, saving %v [%v, %v]", res.Candidates, len(res.Rows), res.GCSaving, res.GCSavingLo, res.GCSavingHi)
	}
}

func TestAdviseBadInput(t *testing.T) {
	pair := func(f func(e, l *profile.Profile)) func() (*profile.Profile, *profile.Profile) {
		return func() (*profile.Profile, *profile.Profile) {
			e, l := advisePair()
			f(e, l)
			return e, l
		}
	}
	arenaProf := &profile.Profile{SampleType: pprofmt.SampleTypes(), Period: 4096, TimeNanos: 1}
	cpu := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}, TimeNanos: 1}
	for _, tc := range []struct {
		name  string
		pair  func() (*profile.Profile, *profile.Profile)
		opts  AdviseOptions
		error string
	}{
		{"swapped", func() (*profile.Profile, *profile.Profile) { e, l := advisePair(); return l, e }, AdviseOptions{}, "is not later than EARLIER (2026-11-25T12:00:10Z); give the older profile first"},
		{"same time", pair(func(e, l *profile.Profile) { l.TimeNanos = e.TimeNanos }), AdviseOptions{}, "LATER (2026-11-25T12:00:00Z) is not later than EARLIER"},
		{"older", pair(func(e, l *profile.Profile) { l.TimeNanos = e.TimeNanos - 1 }), AdviseOptions{}, "is not later than EARLIER"},
		{"no time", pair(func(e, l *profile.Profile) { e.TimeNanos = 0 }), AdviseOptions{}, "EARLIER records no time"},
		{"restart", pair(func(e, l *profile.Profile) { l.Sample[2].Value[0], l.Sample[2].Value[1] = 10, 5120 }), AdviseOptions{}, "LATER counts fewer allocations than EARLIER at main.cache (512-byte objects)"},
		{"record gone", pair(func(e, l *profile.Profile) { l.Sample = l.Sample[:3] }), AdviseOptions{}, "EARLIER has allocations at main.leak (1024-byte objects) that LATER lacks"},
		{"rate", pair(func(e, l *profile.Profile) { l.Period = 8192 }), AdviseOptions{}, "MemProfileRate changed from 4096 (EARLIER) to 8192 (LATER)"},
		{"rate 0", pair(func(e, l *profile.Profile) { e.Period = 0 }), AdviseOptions{}, "EARLIER was written with MemProfileRate 0"},
		{"binaries", pair(func(e, l *profile.Profile) { l.Mapping[0].BuildID = "def" }), AdviseOptions{}, "two binaries (build IDs abc and def)"},
		{"merged", func() (*profile.Profile, *profile.Profile) {
			e, l := advisePair()
			m, err := Merge(l, l)
			if err != nil {
				t.Fatal(err)
			}
			return e, m
		}, AdviseOptions{}, "LATER is a merge of several Go heap profiles"},
		{"arena", func() (*profile.Profile, *profile.Profile) { _, l := advisePair(); return arenaProf, l }, AdviseOptions{}, "EARLIER is an arenaprof profile"},
		{"cpu", func() (*profile.Profile, *profile.Profile) { e, _ := advisePair(); return e, cpu }, AdviseOptions{}, "LATER is not a Go heap profile (sample types samples, cpu)"},
		{"unsymbolized", pair(func(e, l *profile.Profile) {
			for _, loc := range l.Location {
				loc.Line = nil
			}
		}), AdviseOptions{}, "LATER: "},
		{"nil", func() (*profile.Profile, *profile.Profile) { e, _ := advisePair(); return e, nil }, AdviseOptions{}, "nil profile"},
		{"by type", advisePair, AdviseOptions{By: "type"}, `groups by site, func, stack or label=KEY, not "type"`},
		{"label", advisePair, AdviseOptions{By: "label=endpoint"}, `no sample carries the label "endpoint"`},
		{"confidence", advisePair, AdviseOptions{Confidence: 1}, "confidence 1 is not strictly between 0 and 1"},
		{"lifetime", advisePair, AdviseOptions{Lifetime: -time.Second}, "negative lifetime"},
		{"n", advisePair, AdviseOptions{N: -1}, "negative number of rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, l := tc.pair()
			res, err := Advise(e, l, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.error) {
				t.Fatalf("got %v, %v; want an error with %q", res, err, tc.error)
			}
			if res != nil {
				t.Errorf("a result beside the error: %+v", res)
			}
		})
	}
}

// bigAdvisePair returns two Go heap profiles of n records each (distinct
// stacks of 16 frames under funcs leaf functions), a minute apart.
func bigAdvisePair(n, funcs int) (earlier, later *profile.Profile) {
	later = fixture.BigHeap(n, 16)
	later.TimeNanos = adviseT0.Add(time.Minute).UnixNano()
	// Leaf functions: funcs of them, shared by the stacks.
	leaves := make([]*profile.Location, funcs)
	for i := range leaves {
		id := uint64(len(later.Location) + 1)
		f := &profile.Function{ID: id, Name: fmt.Sprintf("main.site%d", i), Filename: "main.go"}
		leaves[i] = &profile.Location{ID: id, Address: 0x100000 + id*16, Line: []profile.Line{{Function: f, Line: 7}}}
		later.Function = append(later.Function, f)
		later.Location = append(later.Location, leaves[i])
	}
	for i, s := range later.Sample {
		s.Location = append([]*profile.Location{leaves[i%funcs]}, s.Location...)
	}
	earlier = later.Copy()
	earlier.TimeNanos = adviseT0.UnixNano()
	for _, s := range earlier.Sample {
		s.Value[0], s.Value[1] = s.Value[0]/3, s.Value[1]/3 // one raw count of three, as scaled
	}
	return earlier, later
}

func TestAdviseBig(t *testing.T) {
	earlier, later := bigAdvisePair(2000, 100)
	res, err := Advise(earlier, later, AdviseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Groups != 100 || res.Total.AllocSamples != 4000 || res.Total.LiveSamples != 2000 {
		t.Fatalf("%d groups, %d alloc samples, %d live", res.Groups, res.Total.AllocSamples, res.Total.LiveSamples)
	}
}

// BenchmarkAdvise advises on two Go heap profiles of 100,000 records
// each (stacks of 17 frames, 2,000 leaf functions): parsed already
// ("parsed"), and from their encoded bytes as the command reads them
// ("encoded"). The budget is 1 s and 256 MiB: inputs-MiB is the
// heap before the runs (both profiles, parsed and encoded), peak-heap-MiB
// the largest heap during them, polled every millisecond (the inputs and
// garbage not yet collected included: the GC lets the heap grow to twice
// what is live). The command's own figure is its maximum resident set
// (BENCHMARKS.md).
func BenchmarkAdvise(b *testing.B) {
	earlier, later := bigAdvisePair(100000, 2000)
	var eb, lb bytes.Buffer
	if err := earlier.Write(&eb); err != nil {
		b.Fatal(err)
	}
	if err := later.Write(&lb); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		run  func() error
	}{
		{"parsed", func() error {
			_, err := Advise(earlier, later, AdviseOptions{})
			return err
		}},
		{"encoded", func() error {
			e, err := Parse(bytes.NewReader(eb.Bytes()), ParseOptions{})
			if err != nil {
				return err
			}
			l, err := Parse(bytes.NewReader(lb.Bytes()), ParseOptions{})
			if err != nil {
				return err
			}
			_, err = Advise(e, l, AdviseOptions{})
			return err
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak := pollHeap()
			for b.Loop() {
				if err := bc.run(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "inputs-MiB")
		})
	}
}

// pollHeap polls the bytes of heap objects every millisecond until the
// returned function is called, which returns the largest seen.
func pollHeap() func() uint64 {
	done := make(chan struct{})
	res := make(chan uint64)
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				res <- peak
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-res }
}

func TestFormatAdvise(t *testing.T) {
	earlier, later := advisePair()
	res, err := Advise(earlier, later, AdviseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := FormatAdvise(&b, res, FormatOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	t.Log("\n" + out)
	for _, want := range []string{
		"Go heap by site over a window of 10s, MemProfileRate 4096, 95% intervals",
		"sites: the first frame outside the standard library and the runtime (yours: main's or a module's), then via the leaf that allocated\n",
		"at most 100ms",
		"3 groups, 1 candidate\n",
		"predicted GC saving: 99.0% of GC cycles, 95% interval [",
		"GOMEMLIMIT",
		"ARENA", "LIFETIME",
		"4096 B x 15.8k, 64 B x 25.8k  main.handle",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(strings.TrimSpace(lines[len(lines)-4]), "yes") || !strings.HasSuffix(lines[len(lines)-1], "total") {
		t.Errorf("rows out of order:\n%s", out)
	}
}

func TestLifetimeString(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"}, {500, "500ns"}, {1950217, "1.95ms"}, {100 * time.Millisecond, "100ms"},
		{12345 * time.Millisecond, "12.3s"}, {90 * time.Minute, "1.5h"}, {time.Duration(math.MaxInt64), "inf"},
	} {
		if got := lifetimeString(tc.d); got != tc.want {
			t.Errorf("lifetimeString(%d) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// TestFormatAdviseWidth: on a terminal of 80 or 120 columns no line is
// wider, and the keys stay whole: on lines of their own when the numbers
// leave them too little room.
func TestFormatAdviseWidth(t *testing.T) {
	const key = "github.com/acme/shop/internal/orders.(*Handler).decodeOrder"
	recs := func(n int64) []adviseRec {
		return []adviseRec{{key, 4096, 1000 * n, 3}, {key, 64, 400 * n, 0}, {key, 48, 300 * n, 0}, {"main.cache", 512, 100 * n, 900}}
	}
	earlier := adviseProfile(4096, adviseT0, recs(1))
	later := adviseProfile(4096, adviseT0.Add(10*time.Second), recs(11))
	res, err := Advise(earlier, later, AdviseOptions{By: "func"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		width                      int
		keyLines, sizesApart, full bool
	}{
		{0, false, false, true},
		{80, true, true, true},
		{120, true, false, true},
		{400, false, false, true},
	} {
		var b strings.Builder
		if err := FormatAdvise(&b, res, FormatOptions{Width: tc.width}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for line := range strings.SplitSeq(out, "\n") {
			if n := utf8.RuneCountInString(line); tc.width > 0 && n > tc.width {
				t.Errorf("width %d: a line of %d runes: %q", tc.width, n, line)
			}
		}
		if got := strings.Contains(out, "\n"+keyIndent+key+"\n"); got != tc.keyLines {
			t.Errorf("width %d: key on a line of its own %v, want %v:\n%s", tc.width, got, tc.keyLines, out)
		}
		if got := strings.Contains(out, keyIndent+"sizes 4096 B x"); got != tc.sizesApart {
			t.Errorf("width %d: sizes on a line of their own %v, want %v:\n%s", tc.width, got, tc.sizesApart, out)
		}
		if !strings.Contains(out, key) {
			t.Errorf("width %d: key not whole:\n%s", tc.width, out)
		}
	}
}

// TestAdviseUndecided: at the default MemProfileRate a request-scoped
// site too slow to be told apart is undecided ("?"), and the heading
// says why and which rate to set.
func TestAdviseUndecided(t *testing.T) {
	// 2 MB/s of 4 KiB buffers at 512 KiB, never seen in use: below the
	// 21.9MiB/s a site needs at 100ms.
	earlier := adviseProfile(512*1024, adviseT0, []adviseRec{{"main.handle", 4096, 0, 0}})
	later := adviseProfile(512*1024, adviseT0.Add(10*time.Second), []adviseRec{{"main.handle", 4096, 40, 0}})
	res, err := Advise(earlier, later, AdviseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Candidates != 0 || res.Undecided != 1 || !res.Rows[0].Undecided || math.Abs(res.MinAllocRate-22.97e6) > 0.01e6 {
		t.Fatalf("candidates %d, undecided %d, min rate %.4g", res.Candidates, res.Undecided, res.MinAllocRate)
	}
	var b strings.Builder
	if err := FormatAdvise(&b, res, FormatOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"no candidate, but 1 group may live under 100ms, undecided: at MemProfileRate 524288 a site never seen in use must allocate at least 21.9MiB/s to be advised",
		"GODEBUG=memprofilerate=4096", "runtime.MemProfileRate = 4096",
		"\n      ?  ",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}
