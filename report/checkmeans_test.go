package report

import (
	"strings"
	"testing"

	"github.com/arenaprof/arenaprof/internal/testkit/fixture"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// goHeapFixture is a small Go heap profile of MemProfileRate rate.
func goHeapFixture(rate int64) *profile.Profile {
	fn := &profile.Function{ID: 1, Name: "main.alloc"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	return &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}, {Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:     rate,
		Sample:     []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{10, 10240, 0, 0}}},
		Location:   []*profile.Location{loc},
		Function:   []*profile.Function{fn},
	}
}

// goHeapLabeled is goHeapFixture(512 KiB) whose sample has the numeric
// labels num, and its values (withValues) or none, as the legacy text
// parser writes a record without allocations (with the label bytes=0).
func goHeapLabeled(num map[string][]int64, withValues bool) *profile.Profile {
	p := goHeapFixture(512 << 10)
	p.Sample[0].NumLabel = num
	if !withValues {
		p.Sample[0].Value = []int64{0, 0, 0, 0}
	}
	return p
}

// TestCheckMeans: every field a sampling mean is read from is refused at
// 0, negative, past 2^40 or missing, by an error that names it, and so
// is a sample label that makes no sense on any kind of sample (a
// sampling_mean, a memprofilerate or an object size below 1, the last on
// a sample with values); Table refuses such a profile too.
func TestCheckMeans(t *testing.T) {
	arena := func(f func(p *profile.Profile)) *profile.Profile {
		p := fixture.Arena(t)
		f(p)
		return p
	}
	eachSample := func(f func(s *profile.Sample)) func(p *profile.Profile) {
		return func(p *profile.Profile) {
			for _, s := range p.Sample {
				f(s)
			}
		}
	}
	heapUpload := func(f func(s *profile.Sample)) *profile.Profile {
		return arena(eachSample(func(s *profile.Sample) {
			s.Label[pprofmt.LabelMemory] = []string{pprofmt.MemoryHeap}
			s.NumLabel[pprofmt.LabelHeapRate] = []int64{4096}
			f(s)
		}))
	}
	tests := []struct {
		name string
		p    *profile.Profile
		want string // "" for none
	}{
		{"arena", fixture.Arena(t), ""},
		{"sampling_mean 0", arena(eachSample(func(s *profile.Sample) { s.NumLabel[pprofmt.LabelMean] = []int64{0} })), "the label sampling_mean=0"},
		{"sampling_mean negative", arena(eachSample(func(s *profile.Sample) { s.NumLabel[pprofmt.LabelMean] = []int64{-4096} })), "the label sampling_mean=-4096"},
		{"sampling_mean too large", arena(eachSample(func(s *profile.Sample) { s.NumLabel[pprofmt.LabelMean] = []int64{1 << 41} })), "sampling_mean=2199023255552"},
		{"no label, period ok", arena(eachSample(func(s *profile.Sample) { delete(s.NumLabel, pprofmt.LabelMean) })), ""},
		{"no label, period 0", arena(func(p *profile.Profile) {
			eachSample(func(s *profile.Sample) { delete(s.NumLabel, pprofmt.LabelMean) })(p)
			p.Period = 0
		}), "no sampling_mean label and the profile's period (the sampling mean of such samples) is 0"},
		{"no label, period negative", arena(func(p *profile.Profile) {
			eachSample(func(s *profile.Sample) { delete(s.NumLabel, pprofmt.LabelMean) })(p)
			p.Period = -1
		}), "period (the sampling mean of such samples) is -1"},
		{"means comment 0", arena(func(p *profile.Profile) { p.Comments = append(p.Comments, "arenaprof means=0,4096") }), `"0" is not a sampling mean`},
		{"means comment empty", arena(func(p *profile.Profile) { p.Comments = append(p.Comments, "arenaprof means=") }), `"" is not a sampling mean`},
		{"inuse means negative", arena(func(p *profile.Profile) { p.Comments = append(p.Comments, "arenaprof inuse_means=-5") }), `"-5" is not a sampling mean`},
		{"heap upload", heapUpload(func(*profile.Sample) {}), ""},
		{"heap upload without memprofilerate", heapUpload(func(s *profile.Sample) { delete(s.NumLabel, pprofmt.LabelHeapRate) }), "has no memprofilerate label"},
		{"heap upload memprofilerate 0", heapUpload(func(s *profile.Sample) { s.NumLabel[pprofmt.LabelHeapRate] = []int64{0} }), "the label memprofilerate=0"},
		{"heap upload sampling_mean 0", heapUpload(func(s *profile.Sample) { s.NumLabel[pprofmt.LabelMean] = []int64{0} }), "the label sampling_mean=0"},
		{"heap upload bytes 0", heapUpload(func(s *profile.Sample) { s.NumLabel[pprofmt.LabelBytes] = []int64{0} }), "the label bytes=0: an object size is at least 1 byte"},
		{"arena bytes 0", arena(eachSample(func(s *profile.Sample) { s.NumLabel[pprofmt.LabelBytes] = []int64{0} })), "the label bytes=0"},
		{"arena bytes negative", arena(eachSample(func(s *profile.Sample) { s.NumLabel[pprofmt.LabelBytes] = []int64{-8} })), "the label bytes=-8"},
		{"Go heap", goHeapFixture(512 << 10), ""},
		{"Go heap sampling_mean 0", goHeapLabeled(map[string][]int64{pprofmt.LabelMean: {0}, pprofmt.LabelBytes: {1024}}, true), "the label sampling_mean=0"},
		{"Go heap bytes 0", goHeapLabeled(map[string][]int64{pprofmt.LabelBytes: {0}}, true), "the label bytes=0"},
		{"Go heap memprofilerate 0", goHeapLabeled(map[string][]int64{pprofmt.LabelHeapRate: {0}, pprofmt.LabelBytes: {1024}}, true), "the label memprofilerate=0"},
		{"Go heap record without values, bytes 0", goHeapLabeled(map[string][]int64{pprofmt.LabelBytes: {0}}, false), ""},
		{"Go heap period 0", goHeapFixture(0), "the period of a Go heap profile (its MemProfileRate) is 0"},
		{"Go heap period negative", goHeapFixture(-7), "(its MemProfileRate) is -7"},
		{"Go heap period type", func() *profile.Profile {
			p := goHeapFixture(512 << 10)
			p.PeriodType = &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}
			return p
		}(), "the period type cpu/nanoseconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := pprofmt.CheckMeans(tt.p)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if tt.name == "Go heap period type" {
				return // the model reads the period whatever its type
			}
			by := "type"
			if pprofmt.IsGoHeap(tt.p) {
				by = "func"
			}
			inuse := strings.Contains(tt.name, "inuse") // alloc values do not read inuse_means
			if _, err := Table(tt.p, TableOptions{By: by, InUse: inuse}); err == nil {
				t.Errorf("Table read what CheckMeans refuses")
			}
		})
	}
}

// FuzzCheckMeans: for any period, sampling_mean, memprofilerate and means
// comment, CheckMeans never panics, refuses every mean outside [1, 2^40]
// (and a Go heap sample's rate of 0 or less), and what it refuses
// Table and Diff refuse too: no profile with an unusable mean is read
// without a word.
func FuzzCheckMeans(f *testing.F) {
	f.Add(int64(102400), int64(4096), true, int64(0), false, "")
	f.Add(int64(0), int64(0), false, int64(0), false, "0")
	f.Add(int64(-1), int64(-1), true, int64(-3), true, "5,")
	f.Add(int64(1<<41), int64(1<<40), true, int64(1), true, "1099511627776")
	f.Fuzz(func(t *testing.T, period, mean int64, labeled bool, rate int64, heap bool, means string) {
		p := fixture.Arena(t)
		p.Period = period
		p.Comments = append(p.Comments, pprofmt.MeansCommentPrefix+means)
		for i, s := range p.Sample {
			if labeled {
				s.NumLabel[pprofmt.LabelMean] = []int64{mean}
			} else {
				delete(s.NumLabel, pprofmt.LabelMean)
			}
			if heap && i == 0 {
				s.Label[pprofmt.LabelMemory] = []string{pprofmt.MemoryHeap}
				s.NumLabel[pprofmt.LabelHeapRate] = []int64{rate}
			}
		}
		err := pprofmt.CheckMeans(p)
		bad := func(m int64) bool { return m < 1 || m > 1<<40 }
		arenaMean := period
		if labeled {
			arenaMean = mean
		}
		_, _, meansErr := pprofmt.MeansOf(p, pprofmt.MeansCommentPrefix)
		// The Go heap sample is read at its rate, but a sampling_mean
		// label on it must make sense too.
		wantErr := meansErr != nil || bad(arenaMean) && (len(p.Sample) > 1 || !heap || labeled) || heap && rate <= 0
		if (err != nil) != wantErr {
			t.Fatalf("CheckMeans: %v, want an error: %v", err, wantErr)
		}
		if err == nil {
			return
		}
		if _, terr := Table(p, TableOptions{By: "type"}); terr == nil {
			t.Fatalf("Table read a profile CheckMeans refuses (%v)", err)
		}
		if _, derr := Diff(fixture.Arena(t), p, DiffOptions{By: "type"}); derr == nil {
			t.Fatalf("Diff read a profile CheckMeans refuses (%v)", err)
		}
	})
}
