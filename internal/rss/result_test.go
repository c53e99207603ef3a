package rss

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// selfProfile is the resident-memory profile of this process.
func selfProfile(t testing.TB) *profile.Profile {
	t.Helper()
	r := Read()
	p, err := Profile(r, Classify(r))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseSelf(t *testing.T) {
	p := selfProfile(t)
	for _, by := range []string{"func", "stack"} {
		res, err := Parse(p, by, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, c := range res.Classes {
			sum += c.Bytes
			if c.Lo != c.Bytes || c.Hi != c.Bytes {
				t.Errorf("class %s: [%d, %d] around %d: classes are exact", c.Class, c.Lo, c.Hi, c.Bytes)
			}
		}
		if sum != res.RSSBytes || len(res.Classes) != len(Classes) {
			t.Errorf("by %s: %d classes summing to %d, RSS %d", by, len(res.Classes), sum, res.RSSBytes)
		}
		for _, r := range res.Rows {
			if r.Lo > r.Bytes || r.Hi < r.Bytes {
				t.Errorf("row %s %s: %d outside [%d, %d]", r.Class, r.Key, r.Bytes, r.Lo, r.Hi)
			}
			if by == "stack" && r.Class == GoHeapLive && !strings.Contains(r.Key, stackSep) {
				t.Errorf("a stack key of one frame: %q", r.Key)
			}
		}
	}
}

// TestParseLegacyOrder reads a profile as releases before heap_samples
// came first wrote it (resident/bytes first, then heap_samples/count,
// each sample's values in that order): the same result as the profile
// of today's order.
func TestParseLegacyOrder(t *testing.T) {
	p := selfProfile(t).Copy()
	if got := p.SampleType; len(got) != 2 || got[0].Type != "heap_samples" || got[1].Type != SampleResident || p.DefaultSampleType != SampleResident {
		t.Fatalf("sample types %v, default %q: want heap_samples then resident, the default", got, p.DefaultSampleType)
	}
	old := p.Copy()
	old.SampleType[0], old.SampleType[1] = old.SampleType[1], old.SampleType[0]
	for _, s := range old.Sample {
		s.Value[0], s.Value[1] = s.Value[1], s.Value[0]
	}
	// Through its encoding, as a saved file is read.
	var buf bytes.Buffer
	if err := old.Write(&buf); err != nil {
		t.Fatal(err)
	}
	saved, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !pprofmt.IsRSS(saved) {
		t.Fatal("a resident-memory profile of the earlier order is not recognized")
	}
	for _, by := range []string{"func", "stack"} {
		want, err := Parse(p, by, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(saved, by, 0.95)
		if err != nil {
			t.Fatalf("by %s: the earlier order: %v", by, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("by %s: the earlier order reads\n%+v\nthe current one\n%+v", by, got, want)
		}
	}
}

// TestParseRefuses gives Parse profiles of other kinds and bad input: each
// is refused, naming what it is.
func TestParseRefuses(t *testing.T) {
	heap := &profile.Profile{SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}, {Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}}, Period: 524288, PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"}}
	arenas := &profile.Profile{SampleType: pprofmt.HoldingTypes()}
	arenaP := &profile.Profile{SampleType: pprofmt.SampleTypes(), Period: 102400}
	cpu := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}, PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}}
	for _, c := range []struct {
		name string
		p    *profile.Profile
		want string
	}{
		{"heap", heap, "a Go heap or allocs profile"},
		{"arenas", arenas, "a live-arenas profile"},
		{"arena", arenaP, "an arenaprof arena profile"},
		{"cpu", cpu, "a CPU profile"},
	} {
		_, err := Parse(c.p, "func", 0.95)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "not a resident-memory profile") {
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.want)
		}
	}
	p := selfProfile(t)
	if _, err := Parse(p, "type", 0.95); err == nil {
		t.Error("-by type accepted")
	}
	if _, err := Parse(p, "func", 1); err == nil {
		t.Error("confidence 1 accepted")
	}
	iv, _, _ := pprofmt.RSSIndex(p)
	p.Sample[0].Value[iv]++
	if _, err := Parse(p, "func", 0.95); err == nil || !strings.Contains(err.Error(), "sum to") {
		t.Errorf("samples not summing to the RSS: error %v", err)
	}
}

// FuzzParse reads any profile as a resident-memory profile: an error or a
// result, never a panic, and a result's figures are ones a process can
// have: the RSS and every class from 0 to MaxBytes, the classes summing
// to at most MaxBytes, every row's bytes from 0 within its interval.
func FuzzParse(f *testing.F) {
	var buf bytes.Buffer
	if err := selfProfile(f).Write(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	for _, p := range []*profile.Profile{
		fakeRSS(30<<20, []fakeSample{{class: GoHeapLive, v: 28 << 20, site: "main.alloc", count: 10, size: 8, rate: 512 << 10}, {class: NonGo, v: 2 << 20}}),
		fakeRSS(1<<47, []fakeSample{{class: Binary, v: 1 << 46}, {class: Files, v: 1 << 46}}),
	} {
		buf.Reset()
		if err := p.Write(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := profile.ParseData(data)
		if err != nil {
			return
		}
		res, err := Parse(p, "stack", 0.95)
		if err != nil {
			return
		}
		if res.RSSBytes < 0 || res.RSSBytes > MaxBytes {
			t.Fatalf("RSS %d", res.RSSBytes)
		}
		var sum int64
		for _, c := range res.Classes {
			if c.Bytes < 0 || c.Bytes > MaxBytes {
				t.Fatalf("class %s of %d bytes", c.Class, c.Bytes)
			}
			sum += c.Bytes
		}
		if sum > MaxBytes {
			t.Fatalf("classes summing to %d", sum)
		}
		for _, r := range res.Rows {
			if r.Bytes < 0 || r.Lo < 0 || r.Lo > r.Bytes || r.Hi < r.Bytes {
				t.Fatalf("row %s %s: %d in [%d, %d]", r.Class, r.Key, r.Bytes, r.Lo, r.Hi)
			}
		}
	})
}
