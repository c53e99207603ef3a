package report_test

import (
	"math"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/goheap"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/report"
)

// samplerProfile is a Go heap profile of one function that sampled count
// objects of size bytes at rate, as runtime/pprof writes it, with the
// given comments.
func samplerProfile(count, size, rate int64, comments ...string) *profile.Profile {
	f := &profile.Function{ID: 1, Name: "main.alloc"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: f}}}
	scale := 1 / -math.Expm1(-float64(size)/float64(rate))
	return &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"},
		},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:     rate,
		Comments:   comments,
		Function:   []*profile.Function{f},
		Location:   []*profile.Location{loc},
		Sample: []*profile.Sample{{
			Location: []*profile.Location{loc},
			Value:    []int64{int64(float64(count) * scale), int64(float64(count*size) * scale), 0, 0},
			NumLabel: map[string][]int64{"bytes": {size}},
		}},
	}
}

// TestHeapSamplerRule: which rule a table uses and what it changes: the
// estimate (runtime/pprof's values under go1.23, count·w' under go1.24),
// the total's any-order widening, the heading fields, and the errors for
// a bad or mixed version.
func TestHeapSamplerRule(t *testing.T) {
	const count, size, rate = 10000, 16, 512
	pprofBytes := samplerProfile(count, size, rate).Sample[0].Value[1]
	short := int64(math.Round(count * goheap.Short.Weight(size, rate)))
	for _, tc := range []struct {
		name      string
		comments  []string
		goVersion string
		anyOrder  bool
		bytes     int64
		sampler   string
		version   string
		err       string
	}{
		{name: "runtime profile: go1.24 assumed", bytes: short, sampler: "go1.24"},
		{name: "-go-version go1.23", goVersion: "go1.23", bytes: pprofBytes, sampler: "go1.23", version: "go1.23"},
		{name: "-go-version go1.25.1", goVersion: "go1.25.1", bytes: short, sampler: "go1.24", version: "go1.25.1"},
		{name: "the profile's comment wins", comments: []string{pprofmt.GoVersionComment("go1.23.4")}, goVersion: "go1.26.8", bytes: pprofBytes, sampler: "go1.23", version: "go1.23.4"},
		{name: "merged, one rule", comments: []string{pprofmt.GoVersionComment("go1.26.8"), pprofmt.GoVersionComment("go1.27.1")}, bytes: short, sampler: "go1.24", version: "go1.26.8,go1.27.1"},
		{name: "any order", anyOrder: true, bytes: short, sampler: "go1.24"},
		{name: "merged, two rules", comments: []string{pprofmt.GoVersionComment("go1.23.1"), pprofmt.GoVersionComment("go1.26.8")}, err: "whose heap samplers differ"},
		{name: "bad comment", comments: []string{pprofmt.GoVersionComment("gox")}, err: "not a Go release"},
		{name: "bad option", goVersion: "1.23", err: "not a Go release"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := samplerProfile(count, size, rate, tc.comments...)
			res, err := report.Table(p, report.TableOptions{By: "func", GoVersion: tc.goVersion, AnyOrder: tc.anyOrder})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			row, tot := res.Rows[0], res.Total
			if row.Bytes != tc.bytes || tot.Bytes != tc.bytes || res.HeapSampler != tc.sampler || res.HeapGoVersion != tc.version || res.AnyOrder != tc.anyOrder {
				t.Fatalf("bytes %d (total %d), sampler %q of %q, any order %v; want %d, %q of %q, %v",
					row.Bytes, tot.Bytes, res.HeapSampler, res.HeapGoVersion, res.AnyOrder, tc.bytes, tc.sampler, tc.version, tc.anyOrder)
			}
			if !(row.Lo < float64(row.Bytes) && float64(row.Bytes) < row.Hi) {
				t.Errorf("the row's interval [%.0f, %.0f] misses its estimate %d", row.Lo, row.Hi, row.Bytes)
			}
			switch {
			case tc.sampler == "go1.23":
				if tot.Lo != row.Lo || tot.Hi != row.Hi {
					t.Errorf("go1.23: the total [%.0f, %.0f] differs from its one row [%.0f, %.0f]", tot.Lo, tot.Hi, row.Lo, row.Hi)
				}
			case tc.anyOrder:
				// The row: lower bound at pprof's weights, upper at the
				// weight of an object after a sample (about 16/15 of w).
				if !(row.Hi > tot.Hi && math.Abs(row.Lo-tot.Lo) < 1e-3*tot.Lo) {
					t.Errorf("any order: the row [%.0f, %.0f] is not wider above than the total [%.0f, %.0f]", row.Lo, row.Hi, tot.Lo, tot.Hi)
				}
			default:
				// The total: lower by the extra weight (about one byte a
				// sample), upper by εmax-ε(16), 0.016 a sample, plus the
				// 256-P allowance.
				down := row.Lo - tot.Lo
				if !(down > 0.9*count && down < 1.1*count && tot.Hi > row.Hi && tot.Hi < row.Hi+500) {
					t.Errorf("go1.24: the total [%.0f, %.0f] against the row [%.0f, %.0f]: want about %d lower and at most 500 higher", tot.Lo, tot.Hi, row.Lo, row.Hi, count)
				}
			}
		})
	}
}
