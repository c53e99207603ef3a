// Package groupkey gives a profile sample its group's key under each
// grouping the arenaprof command's -by flag names (type, func, stack,
// site, size, label=KEY): package report groups its tables by it, and the
// leaks reader groups each snapshot of a series by it, so that a key means
// the same in every command.
package groupkey

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/tabfmt"
)

// Keys of groups that are not a value of the attribute.
const (
	None       = "(none)"        // samples that lack the attribute
	MixedSizes = "(mixed sizes)" // samples that mix object sizes
	StackSep   = " < "           // joins the frames of a stack key, leaf first
)

// Of returns the key of sample s grouped by by: "type" (or ""), "func",
// "stack", "site", "size" or "label=KEY". The spelling is not checked:
// anything else groups by stack.
func Of(by string, s *profile.Sample) string {
	switch by {
	case "", "type":
		return firstLabel(s, pprofmt.LabelType)
	case "size":
		if v := s.NumLabel[pprofmt.LabelBytes]; len(v) > 0 {
			return SizeClass(v[0])
		}
		return MixedSizes
	case "func":
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
		return None
	case "site":
		return Site(Frames(s))
	}
	if k, ok := strings.CutPrefix(by, "label="); ok {
		return firstLabel(s, k)
	}
	full := Frames(s)
	if len(full) == 0 {
		return None
	}
	return strings.Join(full, StackSep)
}

func firstLabel(s *profile.Sample, key string) string {
	if v := s.Label[key]; len(v) > 0 {
		return v[0]
	}
	return None
}

// Frames returns the frames of s's stack, leaf first: each location's
// function names (inlined calls first, as the profile lists them) whole,
// or its address when it has none.
func Frames(s *profile.Sample) (full []string) {
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

// Site is the key grouped by site of a stack of frames, leaf first: the
// first frame outside the standard library, the frame a user can change,
// then the leaf that allocated ("main.handle via reflect.growslice"); the
// frame alone when it is the leaf; the leaf and tabfmt.StdOnly for a stack
// wholly in the standard library.
func Site(frames []string) string {
	if len(frames) == 0 {
		return None
	}
	leaf := frames[0]
	for _, f := range frames {
		if !IsStdFunc(f) {
			if f == leaf {
				return f
			}
			return f + tabfmt.SiteVia + leaf
		}
	}
	return leaf + tabfmt.StdOnly
}

// IsStdFunc reports whether the function name is in the standard library
// (the runtime included) by the go command's rule: a standard package's
// import path has no dot in its first element, and every other path does
// ("github.com/...", "example.com/..."), except main's. An address
// (an unsymbolized frame) counts as outside.
func IsStdFunc(name string) bool {
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

// SizeClass returns the power-of-two size class of an object of size
// bytes, as -by size groups it: "1-8 B", "9-16 B", "17-32 B", ...
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
