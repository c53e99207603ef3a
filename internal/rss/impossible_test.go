package rss

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// fakeSample is one sample of a hand-made resident-memory profile: its
// class, resident bytes, and for a go/heap/live row its site, raw count of
// sampled objects, object size and MemProfileRate.
type fakeSample struct {
	class             string
	v                 int64
	site              string
	count, size, rate int64
}

// fakeRSS is a resident-memory profile stating rss (no RSS comment when
// rss < 0) holding samples.
func fakeRSS(rss int64, samples []fakeSample) *profile.Profile {
	p := &profile.Profile{SampleType: pprofmt.RSSSampleTypes(), DefaultSampleType: SampleResident}
	if rss >= 0 {
		p.Comments = []string{commentRSS + strconv.FormatInt(rss, 10)}
	}
	id := uint64(0)
	loc := func(name string) *profile.Location {
		id++
		f := &profile.Function{ID: id, Name: name}
		p.Function = append(p.Function, f)
		l := &profile.Location{ID: id, Line: []profile.Line{{Function: f}}}
		p.Location = append(p.Location, l)
		return l
	}
	for _, fs := range samples {
		s := &profile.Sample{Value: []int64{fs.count, fs.v}, Label: map[string][]string{pprofmt.LabelClass: {fs.class}}}
		if fs.site != "" {
			s.Location = append(s.Location, loc(fs.site))
		}
		for _, part := range strings.Split(fs.class, "/") {
			s.Location = append(s.Location, loc(part))
		}
		if fs.count != 0 {
			s.NumLabel = map[string][]int64{pprofmt.LabelBytes: {fs.size}, pprofmt.LabelHeapRate: {fs.rate}}
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

// TestParseImpossibleValues: a resident-memory profile whose figures no
// process has (negative bytes, bytes past 128 TiB, sums that overflow
// int64, counts that overflow a stratum, a row of petabytes under a class
// of megabytes) is refused naming the value; a row estimated above its
// class beyond its interval, under 128 TiB, gets a note.
func TestParseImpossibleValues(t *testing.T) {
	const mib = 1 << 20
	live := func(count int64) fakeSample {
		return fakeSample{class: GoHeapLive, v: 28 * mib, site: "main.alloc", count: count, size: 8, rate: 512 << 10}
	}
	for _, c := range []struct {
		name    string
		rss     int64
		samples []fakeSample
		want    string // in the error; "" for none
		note    string // in a note
	}{
		{"genuine", 30 * mib, []fakeSample{live(10), {class: NonGo, v: 2 * mib}}, "", ""},
		{"nongo -1 TiB, binary +1 TiB", 30 * mib, []fakeSample{live(10), {class: NonGo, v: 2*mib - 1<<40}, {class: Binary, v: 1 << 40}},
			"a sample of class nongo has " + strconv.FormatInt(2*mib-1<<40, 10) + " bytes", ""},
		{"classes overflowing int64, wrapping to the RSS", 30 * mib, []fakeSample{live(10), {class: NonGo, v: 2 * mib}, {class: Binary, v: 1 << 62}, {class: Files, v: 1 << 62}, {class: Unattributed, v: -(1 << 63)}},
			"a sample of class binary has 4611686018427387904 bytes", ""},
		{"each class below the bound, their sum above", 1 << 47, []fakeSample{{class: Binary, v: 1 << 46}, {class: Files, v: 1 << 46}, {class: NonGo, v: 1}},
			"its samples sum to more than any process has", ""},
		{"RSS 8 EiB", 1<<63 - 1, []fakeSample{{class: NonGo, v: 1<<63 - 1}}, "an RSS of 9223372036854775807 bytes", ""},
		{"a row of 1.25 PiB under a 28 MiB class", 28 * mib, []fakeSample{live(5 << 29)},
			"estimated bytes, more than any process has", ""},
		{"a stratum overflowing int64", 56 * mib, []fakeSample{live(1 << 62), live(1 << 62)},
			"of 4611686018427387904 sampled objects of 8 bytes", ""},
		{"a negative count", 28 * mib, []fakeSample{live(-294)}, "of -294 sampled objects", ""},
		{"a row above its class beyond its interval", 28 * mib, []fakeSample{live(100_000)}, "",
			"1 go/heap/live rows are estimated above the whole class"},
	} {
		p := fakeRSS(c.rss, c.samples)
		// Through its encoding, as a saved file is read.
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			t.Fatal(err)
		}
		saved, err := profile.Parse(&buf)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Parse(saved, "func", 0.95)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.want)
		case c.want == "" && c.note != "" && !strings.Contains(strings.Join(res.Notes, "\n"), c.note):
			t.Errorf("%s: notes %q, want %q", c.name, res.Notes, c.note)
		case c.want == "" && c.note == "" && len(res.Notes) > 0:
			t.Errorf("%s: notes %q", c.name, res.Notes)
		}
	}
}
