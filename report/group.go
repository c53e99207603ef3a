package report

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/tabfmt"
)

// GroupKind is what [Table] groups samples by.
type GroupKind string

// The kinds of grouping of [Table].
const (
	GroupByType  GroupKind = "type"  // the Go type (the "type" label)
	GroupByFunc  GroupKind = "func"  // the leaf function: the caller of arena.New
	GroupByStack GroupKind = "stack" // the whole stack, leaf first
	GroupByLabel GroupKind = "label" // the value of one string label
	GroupBySize  GroupKind = "size"  // the object size class (the "bytes" label)
)

// GroupBy says how [Table] groups samples: by Go type, leaf function, whole
// stack, object size class, or the value of one string label (an arena
// label such as a pprof label "endpoint" given to arena.Pool.Get).
//
// Size classes are powers of two of the object size as the arena takes it
// (rounded up to 8): "1-8 B", "9-16 B", "17-32 B", and so on. Samples
// without a size (those past the profiler's bucket bound, which mix sizes)
// form the group [MixedSizesKey].
//
// The zero GroupBy groups by type.
type GroupBy struct {
	Kind  GroupKind
	Label string // the label key when Kind is GroupByLabel
}

// NoneKey is the key of the group of samples that lack the grouping
// attribute (no such label, no stack).
const NoneKey = "(none)"

// MixedSizesKey is the size class of samples that mix object sizes.
const MixedSizesKey = "(mixed sizes)"

// StackSep joins the frames of a stack key, leaf first.
const StackSep = " < "

// ParseGroupBy parses a grouping as the CLI's -by flag spells it: type,
// func, stack, size or label=KEY.
func ParseGroupBy(s string) (GroupBy, error) {
	switch GroupKind(s) {
	case GroupByType, GroupByFunc, GroupByStack, GroupBySize:
		return GroupBy{Kind: GroupKind(s)}, nil
	}
	if k, ok := strings.CutPrefix(s, "label="); ok {
		if k == "" {
			return GroupBy{}, errors.New("report: grouping label= needs a label key, e.g. label=handler")
		}
		return GroupBy{Kind: GroupByLabel, Label: k}, nil
	}
	return GroupBy{}, fmt.Errorf("report: unknown grouping %q; use type, func, stack, size or label=KEY", s)
}

// String returns g as [ParseGroupBy] reads it.
func (g GroupBy) String() string {
	switch g.Kind {
	case "":
		return string(GroupByType)
	case GroupByLabel:
		return "label=" + g.Label
	}
	return string(g.Kind)
}

// key returns the group key of a sample (full, as in TableRow.Key) and, for
// functions and stacks, its shorter form for a table (function names without
// their import path; "" means the same as the key).
func (g GroupBy) key(s *profile.Sample) (key, display string) {
	switch g.Kind {
	case GroupByType, "":
		return firstLabel(s, pprofmt.LabelType), ""
	case GroupByLabel:
		return firstLabel(s, g.Label), ""
	case GroupBySize:
		size, ok := firstNumLabel(s, pprofmt.LabelBytes)
		if !ok {
			return MixedSizesKey, ""
		}
		return SizeClass(size), ""
	case GroupByFunc:
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				if ln.Function != nil && ln.Function.Name != "" {
					return ln.Function.Name, tabfmt.ShortFuncName(ln.Function.Name)
				}
			}
			break // the leaf location has no symbolized function
		}
		if len(s.Location) > 0 && s.Location[0].Address != 0 {
			return fmt.Sprintf("0x%x", s.Location[0].Address), ""
		}
		return NoneKey, ""
	default: // stack
		var full, short []string
		for _, loc := range s.Location {
			n := 0
			for _, ln := range loc.Line {
				if ln.Function != nil && ln.Function.Name != "" {
					full = append(full, ln.Function.Name)
					short = append(short, tabfmt.ShortFuncName(ln.Function.Name))
					n++
				}
			}
			if n == 0 {
				a := fmt.Sprintf("0x%x", loc.Address)
				full, short = append(full, a), append(short, a)
			}
		}
		if len(full) == 0 {
			return NoneKey, ""
		}
		return strings.Join(full, StackSep), strings.Join(short, StackSep)
	}
}

// SizeClass returns the power-of-two size class of an object of size bytes,
// as -by size groups it: "1-8 B", "9-16 B", "17-32 B", ...
func SizeClass(size int64) string {
	if size <= 8 {
		return "1-8 B"
	}
	n := bits.Len64(uint64(size - 1))
	if n >= 63 {
		return "4611686018427387905-9223372036854775807 B"
	}
	hi := int64(1) << n // the power of two >= size
	return strconv.FormatInt(hi/2+1, 10) + "-" + strconv.FormatInt(hi, 10) + " B"
}

func firstLabel(s *profile.Sample, key string) string {
	if v := s.Label[key]; len(v) > 0 {
		return v[0]
	}
	return NoneKey
}

func firstNumLabel(s *profile.Sample, key string) (int64, bool) {
	if v := s.NumLabel[key]; len(v) > 0 {
		return v[0], true
	}
	return 0, false
}
