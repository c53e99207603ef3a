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
	noneKey       = "(none)"        // samples that lack the attribute
	mixedSizesKey = "(mixed sizes)" // samples that mix object sizes
	stackSep      = " < "           // joins the frames of a stack key, leaf first
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
func (g groupBy) key(s *profile.Sample) string {
	switch g.kind() {
	case groupByType:
		return firstLabel(s, pprofmt.LabelType)
	case groupByLabel:
		return firstLabel(s, g.label())
	case groupBySize:
		size, ok := firstNumLabel(s, pprofmt.LabelBytes)
		if !ok {
			return mixedSizesKey
		}
		return sizeClass(size)
	case groupByFunc:
		if len(s.Location) > 0 { // the leaf location's function, when symbolized
			for _, ln := range s.Location[0].Line {
				if ln.Function != nil && ln.Function.Name != "" {
					return ln.Function.Name
				}
			}
		}
		if len(s.Location) > 0 && s.Location[0].Address != 0 {
			return fmt.Sprintf("0x%x", s.Location[0].Address)
		}
		return noneKey
	case groupBySite:
		return siteKey(stackFrames(s))
	default: // stack
		full := stackFrames(s)
		if len(full) == 0 {
			return noneKey
		}
		return strings.Join(full, stackSep)
	}
}

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

// stackFrames returns the frames of s's stack, leaf first: each
// location's function names (inlined calls first, as the profile lists
// them) whole, or its address when it has none.
func stackFrames(s *profile.Sample) (full []string) {
	for _, loc := range s.Location {
		n := 0
		for _, ln := range loc.Line {
			if ln.Function != nil && ln.Function.Name != "" {
				full = append(full, ln.Function.Name)
				n++
			}
		}
		if n == 0 {
			full = append(full, fmt.Sprintf("0x%x", loc.Address))
		}
	}
	return full
}

// siteKey is the key grouped by site of a stack of frames, leaf first:
// the first frame outside the standard library, the frame a user can
// change, then the leaf that allocated ("main.handle via
// reflect.growslice"); the frame alone when it is the leaf; the leaf and
// tabfmt.StdOnly for a stack wholly in the standard library.
func siteKey(frames []string) string {
	if len(frames) == 0 {
		return noneKey
	}
	leaf := frames[0]
	for _, f := range frames {
		if !isStdFunc(f) {
			if f == leaf {
				return f
			}
			return f + tabfmt.SiteVia + leaf
		}
	}
	return leaf + tabfmt.StdOnly
}

// isStdFunc reports whether the function name is in the standard library
// (the runtime included) by the go command's rule: a standard package's
// import path has no dot in its first element, and every other path does
// ("github.com/...", "example.com/..."), except main's. An address
// (an unsymbolized frame) counts as outside.
func isStdFunc(name string) bool {
	if strings.HasPrefix(name, "0x") {
		return false
	}
	path := name
	if i := strings.IndexByte(path, '['); i >= 0 { // generic brackets may hold paths
		path = path[:i]
	}
	first := path
	if i := strings.IndexByte(first, '/'); i >= 0 {
		first = first[:i]
	} else if i := strings.IndexByte(first, '.'); i >= 0 {
		first = first[:i] // a one-element path: the package, then '.', then the function
	}
	return first != "main" && !strings.Contains(first, ".")
}

// sizeClass returns the power-of-two size class of an object of size bytes,
// as -by size groups it: "1-8 B", "9-16 B", "17-32 B", ...
func sizeClass(size int64) string {
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
	return noneKey
}

func firstNumLabel(s *profile.Sample, key string) (int64, bool) {
	if v := s.NumLabel[key]; len(v) > 0 {
		return v[0], true
	}
	return 0, false
}
