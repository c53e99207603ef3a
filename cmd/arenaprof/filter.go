package main

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/google/pprof/profile"
)

// The sample filters of top and diff: -focus and -ignore on frames,
// -tagfocus and -tagignore on labels, with go tool pprof's syntax and
// meaning (its internal/driver applyFocus and compileTagFilter), so that a
// filter picks the same samples in both tools.

const filterUsage = `  -focus RE
        keep only the samples with a frame whose function name (with its
        import path) or file name matches the regular expression RE, as
        go tool pprof -focus does
  -ignore RE
        drop the samples with a frame that matches RE (as pprof's -ignore)
  -tagfocus [KEY=]VALUE
        keep only the samples with a label that matches, as go tool pprof
        -tagfocus: for a string label, VALUE is a regular expression (or
        several, comma-separated, any of which may match), unanchored:
        type=main.record also keeps []*main.record; anchor with ^...$.
        For a numeric label, VALUE is a value or a range with a unit:
        bytes=64b (exactly), bytes=1kb: (1 KiB or more), bytes=:512b (at
        most), bytes=32b:64b (both included); units b, kb, mb, gb, ... are
        powers of 1024 as in pprof, and a number without a unit matches no
        label that has one (bytes=64 matches nothing, as in pprof). Without
        KEY=, a regular expression must match "key:value" of some string
        label, and a range any numeric label of its unit
  -tagignore [KEY=]VALUE
        drop the samples with a label that matches (as pprof's -tagignore)
`

// sampleFilter selects the samples of a profile before they are grouped.
type sampleFilter struct {
	focus, ignore         *regexp.Regexp
	tagFocus, tagIgnore   string // as given
	tagFocusF, tagIgnoreF func(p *profile.Profile) profile.TagMatch
}

// on reports whether some filter is set.
func (f sampleFilter) on() bool {
	return f.focus != nil || f.ignore != nil || f.tagFocusF != nil || f.tagIgnoreF != nil
}

// parseFilters compiles the four filter flags.
func parseFilters(focus, ignore, tagFocus, tagIgnore string) (f sampleFilter, err error) {
	for _, c := range []struct {
		name, v string
		re      **regexp.Regexp
	}{{"focus", focus, &f.focus}, {"ignore", ignore, &f.ignore}} {
		if c.v == "" {
			continue
		}
		if *c.re, err = regexp.Compile(c.v); err != nil {
			return f, topUsageErr("bad -%s %q: %v", c.name, c.v, err)
		}
	}
	for _, c := range []struct {
		name, v string
		m       *func(*profile.Profile) profile.TagMatch
	}{{"tagfocus", tagFocus, &f.tagFocusF}, {"tagignore", tagIgnore, &f.tagIgnoreF}} {
		if c.v == "" {
			continue
		}
		if *c.m, err = compileTagFilter(c.v); err != nil {
			return f, topUsageErr("bad -%s %q: %v", c.name, c.v, err)
		}
	}
	f.tagFocus, f.tagIgnore = tagFocus, tagIgnore
	return f, nil
}

// apply drops the samples of ap the filters reject and derives its facts
// again. A -focus or -tagfocus that matches no sample is an error: the
// table would be empty.
func (f sampleFilter) apply(src string, ap *arenaProfile) error {
	if !f.on() {
		return nil
	}
	p := ap.prof
	defer func() { ap.facts, _ = pprofmt.Describe(p) }() // the samples changed
	fm, _, _, _ := p.FilterSamplesByName(f.focus, f.ignore, nil, nil)
	if f.focus != nil && !fm {
		return topInputErr("%s: -focus %q matches no frame of the profile", src, f.focus)
	}
	var focus, ignore profile.TagMatch
	if f.tagFocusF != nil {
		focus = f.tagFocusF(p)
	}
	if f.tagIgnoreF != nil {
		ignore = f.tagIgnoreF(p)
	}
	if focus != nil || ignore != nil {
		tfm, _ := p.FilterSamplesByTag(focus, ignore)
		if focus != nil && !tfm {
			return topInputErr("%s: -tagfocus %q matches no sample", src, f.tagFocus)
		}
	}
	return nil
}

// describe is a line for the heading naming the filters, "" when none.
func (f sampleFilter) describe() string {
	var parts []string
	if f.focus != nil {
		parts = append(parts, "-focus="+f.focus.String())
	}
	if f.ignore != nil {
		parts = append(parts, "-ignore="+f.ignore.String())
	}
	if f.tagFocus != "" {
		parts = append(parts, "-tagfocus="+f.tagFocus)
	}
	if f.tagIgnore != "" {
		parts = append(parts, "-tagignore="+f.tagIgnore)
	}
	if len(parts) == 0 {
		return ""
	}
	return "samples kept by " + strings.Join(parts, " ") + "; the total covers those only"
}

// compileTagFilter compiles a -tagfocus or -tagignore value as go tool
// pprof does: KEY=VALUE or VALUE, where VALUE is a numeric range (see
// parseTagRange) or comma-separated regular expressions. The match needs
// the profile for the units of its numeric labels.
func compileTagFilter(value string) (func(*profile.Profile) profile.TagMatch, error) {
	var wantKey string
	if k, v, ok := strings.Cut(value, "="); ok {
		wantKey, value = k, v
	}
	if num := parseTagRange(value); num != nil {
		return func(p *profile.Profile) profile.TagMatch {
			units, _ := p.NumLabelUnits()
			match := func(key string, vals []int64) bool {
				return slices.ContainsFunc(vals, func(v int64) bool { return num(v, units[key]) })
			}
			if wantKey == "" {
				return func(s *profile.Sample) bool {
					for k, vals := range s.NumLabel {
						if match(k, vals) {
							return true
						}
					}
					return false
				}
			}
			return func(s *profile.Sample) bool {
				vals, ok := s.NumLabel[wantKey]
				return ok && match(wantKey, vals)
			}
		}, nil
	}
	var rxs []*regexp.Regexp
	for _, v := range strings.Split(value, ",") {
		rx, err := regexp.Compile(v)
		if err != nil {
			return nil, err
		}
		rxs = append(rxs, rx)
	}
	if wantKey == "" {
		// Every expression must match "key:value" of some label.
		return func(*profile.Profile) profile.TagMatch {
			return func(s *profile.Sample) bool {
			next:
				for _, rx := range rxs {
					for k, vals := range s.Label {
						for _, v := range vals {
							if rx.MatchString(k + ":" + v) {
								continue next
							}
						}
					}
					return false
				}
				return true
			}
		}, nil
	}
	return func(*profile.Profile) profile.TagMatch {
		return func(s *profile.Sample) bool {
			vals, ok := s.Label[wantKey]
			if !ok {
				return false
			}
			for _, rx := range rxs {
				if slices.ContainsFunc(vals, rx.MatchString) {
					return true
				}
			}
			return false
		}
	}, nil
}

var tagRangeRx = regexp.MustCompile("([+-]?[[:digit:]]+)([[:alpha:]]+)?")

// parseTagRange reads a numeric filter as pprof does: "32kb" (equal),
// ":64kb" (at most), "4mb:" (at least) or "12kb:64mb" (between, both
// included), units optional. It returns nil when value is not one, which
// makes it a regular expression.
func parseTagRange(value string) func(v int64, unit string) bool {
	m := tagRangeRx.FindAllStringSubmatch(value, 2)
	if len(m) == 0 {
		return nil
	}
	v, err := strconv.ParseInt(m[0][1], 10, 64)
	if err != nil {
		return nil
	}
	lo, unit := scaleUnit(v, m[0][2], m[0][2])
	in := func(cmp func(x float64) bool) func(int64, string) bool {
		return func(x int64, u string) bool {
			sx, su := scaleUnit(x, u, unit)
			return su == unit && cmp(sx)
		}
	}
	if len(m) == 1 {
		switch value {
		case m[0][0]:
			return in(func(x float64) bool { return x == lo })
		case m[0][0] + ":":
			return in(func(x float64) bool { return x >= lo })
		case ":" + m[0][0]:
			return in(func(x float64) bool { return x <= lo })
		}
		return nil
	}
	if value != m[0][0]+":"+m[1][0] {
		return nil
	}
	if v, err = strconv.ParseInt(m[1][1], 10, 64); err != nil {
		return nil
	}
	hi, unit2 := scaleUnit(v, m[1][2], unit)
	if unit2 != unit {
		return nil
	}
	return in(func(x float64) bool { return x >= lo && x <= hi })
}

// unitFamily is a kind of unit, as pprof knows them: each unit's names and
// its size in the family's base unit.
type unitFamily struct {
	units []unitDef
	base  unitDef // the default unit
}

type unitDef struct {
	name    string
	aliases []string
	factor  float64
}

var unitFamilies = []unitFamily{{
	units: []unitDef{
		{"B", []string{"b", "byte"}, 1},
		{"kB", []string{"kb", "kbyte", "kilobyte"}, 1 << 10},
		{"MB", []string{"mb", "mbyte", "megabyte"}, 1 << 20},
		{"GB", []string{"gb", "gbyte", "gigabyte"}, 1 << 30},
		{"TB", []string{"tb", "tbyte", "terabyte"}, 1 << 40},
		{"PB", []string{"pb", "pbyte", "petabyte"}, 1 << 50},
	},
	base: unitDef{"B", nil, 1},
}, {
	units: []unitDef{
		{"ns", []string{"ns", "nanosecond"}, float64(time.Nanosecond)},
		{"us", []string{"μs", "us", "microsecond"}, float64(time.Microsecond)},
		{"ms", []string{"ms", "millisecond"}, float64(time.Millisecond)},
		{"s", []string{"s", "sec", "second"}, float64(time.Second)},
		{"hrs", []string{"hour", "hr"}, float64(time.Hour)},
	},
	base: unitDef{"s", nil, float64(time.Second)},
}}

// find returns the unit named u (case-insensitive, plural allowed).
func (f unitFamily) find(u string) *unitDef {
	u = strings.ToLower(u)
	if len([]rune(u)) > 2 {
		u = strings.TrimSuffix(u, "s")
	}
	for i := range f.units {
		if slices.Contains(f.units[i].aliases, u) {
			return &f.units[i]
		}
	}
	return nil
}

// scaleUnit converts v from unit from to unit to, as pprof's measurement
// package does: it returns the value and the canonical name of the unit it
// is in. A unit pprof does not know is returned as it is.
func scaleUnit(v int64, from, to string) (float64, string) {
	if v < 0 && -v > 0 {
		x, u := scaleUnit(-v, from, to)
		return -x, u
	}
	for _, fam := range unitFamilies {
		fu := fam.find(from)
		if fu == nil {
			continue
		}
		x := float64(v) * fu.factor
		if tu := fam.find(to); tu != nil {
			return x / tu.factor, tu.name
		}
		return x / fam.base.factor, fam.base.name
	}
	switch to {
	case "count", "sample", "unit", "minimum", "auto":
		return float64(v), ""
	}
	return float64(v), to
}

// writeHeading writes the line naming the filters, if any, before a table.
func (f sampleFilter) writeHeading(w io.Writer) error {
	if d := f.describe(); d != "" {
		_, err := fmt.Fprintln(w, d)
		return err
	}
	return nil
}

// applyBoth filters the two profiles of a comparison.
func (f sampleFilter) applyBoth(baseSrc, nextSrc string, base, next *arenaProfile) error {
	if err := f.apply(baseSrc, base); err != nil {
		return err
	}
	return f.apply(nextSrc, next)
}
