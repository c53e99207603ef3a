package report

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/groupkey"
	"github.com/arenaprof/arenaprof/internal/tabfmt"
)

// groupBy is a grouping of Table, Diff, Advise and Holdings: a value of
// TableOptions.By (and the By of the other options), whose documentation
// lists the spellings. Its methods check and read it.
type groupBy string

// groupKind is the attribute a groupBy groups by.
type groupKind string

// The kinds of grouping.
const (
	groupByType  groupKind = "type"
	groupByFunc  groupKind = "func"
	groupByStack groupKind = "stack"
	groupBySite  groupKind = "site" // Advise's only
	groupByLabel groupKind = "label"
	groupBySize  groupKind = "size"
)

// Keys of groups that are not a value of the attribute.
const (
	noneKey       = groupkey.None       // samples that lack the attribute
	mixedSizesKey = groupkey.MixedSizes // samples that mix object sizes
	stackSep      = groupkey.StackSep   // joins the frames of a stack key, leaf first
)

// kind returns what g groups by; "" for a groupBy that is not one of the
// spellings of TableOptions.By (see check).
func (g groupBy) kind() groupKind {
	switch k := groupKind(g); k {
	case "":
		return groupByType
	case groupByType, groupByFunc, groupByStack, groupBySite, groupBySize:
		return k
	}
	if strings.HasPrefix(string(g), "label=") {
		return groupByLabel
	}
	return ""
}

// label returns the label key of a "label=KEY" grouping.
func (g groupBy) label() string {
	k, _ := strings.CutPrefix(string(g), "label=")
	return k
}

// check returns an error for a groupBy that is not one of the spellings
// of TableOptions.By.
func (g groupBy) check() error {
	switch g.kind() {
	case "":
		return fmt.Errorf("report: unknown grouping %q; use type, func, stack, size or label=KEY", string(g))
	case groupBySite:
		return errors.New("report: grouping site is Advise's; use func or stack")
	case groupByLabel:
		if g.label() == "" {
			return errors.New("report: grouping label= needs a label key, e.g. label=handler")
		}
	}
	return nil
}

// normal returns g with "" spelled "type".
func (g groupBy) normal() groupBy {
	if g == "" {
		return groupBy(groupByType)
	}
	return g
}

// key returns the group key of a sample, whole, as in TableRow.Key.
func (g groupBy) key(s *profile.Sample) string { return groupkey.Of(string(g.normal()), s) }

// display returns the shorter form of a group's key for a table, for
// functions and stacks: function names without their import path (an
// address stays); "" means the same as the key.
func (g groupBy) display(key string) string {
	if key == noneKey {
		return ""
	}
	switch g.kind() {
	case groupByFunc:
		if strings.HasPrefix(key, "0x") {
			return ""
		}
		return tabfmt.ShortFuncName(key)
	case groupBySite:
		frame, leaf, ok := strings.Cut(key, tabfmt.SiteVia)
		if !ok {
			return tabfmt.ShortFuncName(key)
		}
		return tabfmt.ShortFuncName(frame) + tabfmt.SiteVia + tabfmt.ShortFuncName(leaf)
	case groupByStack:
		frames := strings.Split(key, stackSep)
		for i, f := range frames {
			frames[i] = tabfmt.ShortFuncName(f)
		}
		return strings.Join(frames, stackSep)
	}
	return ""
}

// stackFrames returns the frames of s's stack, leaf first (groupkey.Frames).
func stackFrames(s *profile.Sample) []string { return groupkey.Frames(s) }

func firstLabel(s *profile.Sample, key string) string {
	if v := s.Label[key]; len(v) > 0 {
		return v[0]
	}
	return noneKey
}

func firstNumLabel(s *profile.Sample, key string) (int64, bool) {
	if v := s.NumLabel[key]; len(v) > 0 {
		return v[0], true
	}
	return 0, false
}
