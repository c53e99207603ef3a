package rss

import (
	"bytes"
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
	p.Sample[0].Value[0]++
	if _, err := Parse(p, "func", 0.95); err == nil || !strings.Contains(err.Error(), "sum to") {
		t.Errorf("samples not summing to the RSS: error %v", err)
	}
}

// FuzzParse reads any profile as a resident-memory profile: an error or a
// result, never a panic.
func FuzzParse(f *testing.F) {
	var buf bytes.Buffer
	if err := selfProfile(f).Write(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := profile.ParseData(data)
		if err != nil {
			return
		}
		Parse(p, "stack", 0.95)
	})
}
