package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arenaprof/arenaprof/internal/testkit/fixture"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

func TestTableGrouping(t *testing.T) {
	p := fixture.Arena(t)
	tests := []struct {
		by       string
		inuse    bool
		keys     []string // in order
		displays []string
		samples  []int64
	}{
		{"type", false, []string{"[]uint8", "svc.user", "svc.order"}, nil, []int64{1024, 430, 205}},
		{"func", false, []string{fixture.ParseOrder, fixture.ParseUser}, []string{"svc.parseOrder", "svc.parseUser"}, []int64{1229, 430}},
		{"stack", false, []string{fixture.ParseOrder, fixture.ParseUser + stackSep + fixture.Handle, fixture.ParseOrder + stackSep + fixture.Handle},
			[]string{"svc.parseOrder", "svc.parseUser < svc.(*server).handle", "svc.parseOrder < svc.(*server).handle"}, []int64{1024, 430, 205}},
		{"label=handler", false, []string{noneKey, "users", "orders"}, nil, []int64{1024, 430, 205}},
		{"type", true, []string{"svc.user", "svc.order", "[]uint8"}, nil, []int64{40, 31, 3}},
	}
	for _, tt := range tests {
		r, err := Table(p, TableOptions{By: tt.by, InUse: tt.inuse})
		if err != nil {
			t.Fatalf("%s: %v", tt.by, err)
		}
		if r.Groups != len(tt.keys) || len(r.Rows) != len(tt.keys) || r.Confidence != 0.95 || r.Window != "end" {
			t.Fatalf("%s inuse=%v: %+v", tt.by, tt.inuse, r)
		}
		var sumBytes, sumSamples int64
		var sumShare float64
		for i, row := range r.Rows {
			want := tt.keys[i]
			wantDisplay := want
			if tt.displays != nil {
				wantDisplay = tt.displays[i]
			}
			if row.Key != want || row.Display != wantDisplay || row.Samples != tt.samples[i] {
				t.Errorf("%s inuse=%v row %d: key %q display %q samples %d; want %q %q %d", tt.by, tt.inuse, i, row.Key, row.Display, row.Samples, want, wantDisplay, tt.samples[i])
			}
			if !(0 <= row.Lo && row.Lo <= float64(row.Bytes) && float64(row.Bytes) <= row.Hi) {
				t.Errorf("%s row %q: estimate %d outside [%v, %v]", tt.by, row.Key, row.Bytes, row.Lo, row.Hi)
			}
			if tt.inuse && row.TailMax != row.Tail*int64(map[string]int{"[]uint8": 1 << 20, "svc.order": 160, "svc.user": 96}[row.Key]) {
				t.Errorf("in-use row %q: tail bounds [%d, %d]", row.Key, row.Tail, row.TailMax)
			}
			sumBytes += row.Bytes
			sumSamples += row.Samples
			sumShare += row.Share
		}
		if r.Total.Key != "total" || r.Total.Bytes != sumBytes || r.Total.Samples != sumSamples || math.Abs(sumShare-1) > 1e-9 || r.Total.Share != 1 {
			t.Errorf("%s: total %+v; rows sum to %d bytes, %d samples, share %v", tt.by, r.Total, sumBytes, sumSamples, sumShare)
		}
	}
}

// TestTableN checks that N keeps the largest rows and the total keeps all.
func TestTableN(t *testing.T) {
	p := fixture.Arena(t)
	all, err := Table(p, TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	one, err := Table(p, TableOptions{N: 1, Confidence: 0.99})
	if err != nil {
		t.Fatal(err)
	}
	if one.Groups != all.Groups || len(one.Rows) != 1 || one.Rows[0].Key != all.Rows[0].Key || one.Total.Bytes != all.Total.Bytes {
		t.Errorf("N=1: %+v", one)
	}
	// A higher confidence widens the interval.
	if !(one.Total.Lo < all.Total.Lo && one.Total.Hi > all.Total.Hi) {
		t.Errorf("99%% total [%v, %v] not wider than 95%% [%v, %v]", one.Total.Lo, one.Total.Hi, all.Total.Lo, all.Total.Hi)
	}
}

func TestTableErrors(t *testing.T) {
	heap := &profile.Profile{SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}}}
	neg := fixture.Arena(t)
	neg.Sample[0].Value[1] = -5 // reversed order: index 1 is alloc_samples
	badMean := fixture.Arena(t)
	badMean.Sample[0].NumLabel[pprofmt.LabelMean] = []int64{0}
	relabelled := fixture.Arena(t)
	relabelled.Sample[0].NumLabel[pprofmt.LabelMean] = []int64{2 * relabelled.Sample[0].NumLabel[pprofmt.LabelMean][0]}
	badTail := fixture.Arena(t)
	badTail.Sample[0].Value[0] = 0 // reversed order: index 0 is alloc_tail
	short := fixture.Arena(t)
	short.Sample[0].Value = short.Sample[0].Value[:3]
	tests := []struct {
		name string
		p    *profile.Profile
		opts TableOptions
		want string
	}{
		{"nil", nil, TableOptions{}, "nil profile"},
		{"heap profile", heap, TableOptions{}, "lacks the sample types inuse_objects/count"},
		{"negative", neg, TableOptions{}, "negative values"},
		{"bad mean", badMean, TableOptions{}, "the label sampling_mean=0"},
		{"mean contradicts values", relabelled, TableOptions{}, "contradicts its sampling mean"},
		{"mean contradicts values, in use", relabelled, TableOptions{InUse: true}, "contradicts its sampling mean"},
		{"tail outside", badTail, TableOptions{}, "tail 0 is outside"},
		{"short values", short, TableOptions{}, "3 values for 6 sample types"},
		{"confidence 1", fixture.Arena(t), TableOptions{Confidence: 1}, "confidence"},
		{"confidence NaN", fixture.Arena(t), TableOptions{Confidence: math.NaN()}, "confidence"},
		{"negative N", fixture.Arena(t), TableOptions{N: -1}, "negative number of rows"},
		{"unknown kind", fixture.Arena(t), TableOptions{By: "color"}, "unknown grouping"},
		{"label without key", fixture.Arena(t), TableOptions{By: "label="}, "label key"},
	}
	for _, tt := range tests {
		_, err := Table(tt.p, tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", tt.name, err, tt.want)
		}
	}
}

func TestGroupingCheck(t *testing.T) {
	tests := []struct {
		in   string
		want groupBy
		err  string
	}{
		{"type", groupBy("type"), ""},
		{"func", groupBy("func"), ""},
		{"stack", groupBy("stack"), ""},
		{"size", groupBy("size"), ""},
		{"label=endpoint", groupBy("label=" + "endpoint"), ""},
		{"label=a=b", groupBy("label=" + "a=b"), ""},
		{"label=", "", "needs a label key"},
		{"label", "", "unknown grouping"},
		{"TYPE", "", "unknown grouping"},
		{"", "type", ""},
	}
	for _, tt := range tests {
		g := groupBy(tt.in)
		err := g.check()
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("groupBy(%q).check(): error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || g.normal() != tt.want {
			t.Errorf("groupBy(%q): %q, %v; want %q", tt.in, g.normal(), err, tt.want)
		}
	}
}

// TestFormatTableExtra checks extra and hidden columns and the width.
func TestFormatTableExtra(t *testing.T) {
	r, err := Table(fixture.Arena(t), TableOptions{By: "stack"})
	if err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{0, 60, 80, 120} {
		var buf bytes.Buffer
		err := FormatTable(&buf, r, FormatOptions{Width: width, HideObjects: true, Extra: []TableColumn{
			{Head: "TRUE", Cell: func(row *TableRow, total bool) string {
				if total {
					return "all"
				}
				return "x\ty" // a tab must not break the layout
			}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if strings.Contains(out, "OBJECTS") || !strings.Contains(out, "SHARE") || !strings.Contains(out, "TRUE") || !strings.Contains(out, "x?y") {
			t.Errorf("width %d: columns wrong:\n%s", width, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); width > 0 && n > max(width, 70) {
				t.Errorf("width %d: line of %d columns: %q", width, n, line)
			}
			if strings.HasSuffix(line, " ") {
				t.Errorf("trailing space: %q", line)
			}
		}
		if !strings.Contains(out, "all") || !strings.Contains(out, "total") {
			t.Errorf("no total row:\n%s", out)
		}
	}
}

// TestInuseRawSums checks that the event count of a bucket is recovered
// exactly from its rounded in-use bytes.
func TestInuseRawSums(t *testing.T) {
	sizes := []int64{1, 2, 7, 24, 96, 4095, 4096, 102399, 102400, 1 << 20, 1 << 30}
	means := []int64{1, 2, 512, 4096, 102400, 1 << 20, 1 << 40}
	counts := []int64{0, 1, 2, 3, 17, 1000, 123457}
	for _, size := range sizes {
		for _, mean := range means {
			w, err := estimate.WeightedBytes(size, mean)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range counts {
				s := &profile.Sample{NumLabel: map[string][]int64{pprofmt.LabelBytes: {size}}}
				got, gotHi, lo, hi, err := inuseRawSums(s, int64(math.Round(float64(c)*w)), mean)
				if err != nil || got != c || gotHi != c || lo != c || hi != c*size {
					t.Errorf("size %d mean %d count %d: got %d [%d, %d], %v", size, mean, c, got, lo, hi, err)
				}
			}
		}
	}
}

// FuzzTable runs Table and FormatTable on any grouping, row count and
// confidence: an error is one line, a result has finite, ordered bounds.
func FuzzTable(f *testing.F) {
	f.Add("type", 0, 0.95, false)
	f.Add("label=handler", 2, 0.5, true)
	f.Add("stack", -1, 1.0, false)
	f.Add("label=", 1, math.NaN(), true)
	f.Add("func", 1<<30, 1e-300, false)
	p := fixture.Arena(f)
	f.Fuzz(func(t *testing.T, by string, n int, conf float64, inuse bool) {
		r, err := Table(p, TableOptions{By: by, N: n, Confidence: conf, InUse: inuse})
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		for _, row := range append(r.Rows, r.Total) {
			if math.IsNaN(row.Lo) || math.IsInf(row.Hi, 0) || row.Lo < 0 || row.Lo > row.Hi {
				t.Fatalf("row %q: [%v, %v]", row.Key, row.Lo, row.Hi)
			}
		}
		var buf bytes.Buffer
		if err := FormatTable(&buf, r, FormatOptions{}); err != nil {
			t.Fatal(err)
		}
		if s := buf.String(); strings.Contains(s, "NaN") || strings.Contains(s, "Inf") {
			t.Fatalf("non-finite number:\n%s", s)
		}
	})
}
