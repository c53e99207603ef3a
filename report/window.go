package report

import (
	"errors"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// WindowOf returns the window marking of an arenaprof profile: the union of
// the flags of every "arenaprof window=W" comment (a merged profile carries
// the comments of its parts), or WindowBoth, the conservative choice, if
// there is none or one cannot be read.
//
// How the marking is used: the interval of a group of samples is computed
// from its raw sums (alloc_samples, alloc_tail per sampling_mean) with
// [estimate.GroupInterval] at this window. A window whose start is not on a
// sample event lowers the lower bound as if one event fewer had been seen;
// one whose end is not on an event raises the upper bound as if one more had.
func WindowOf(p *profile.Profile) estimate.Window { return pprofmt.WindowOf(p) }

// Merge merges compatible profiles with [profile.Merge]: values add up, and
// the window marking becomes the union of the parts' markings (a part
// without one counts as "both").
func Merge(ps ...*profile.Profile) (*profile.Profile, error) {
	if len(ps) == 0 {
		return nil, errors.New("report: no profiles to merge")
	}
	var w estimate.Window
	for _, p := range ps {
		if p == nil {
			return nil, errors.New("report: nil profile")
		}
		w |= pprofmt.WindowOf(p)
	}
	m, err := profile.Merge(ps)
	if err != nil {
		return nil, err
	}
	cs := m.Comments[:0]
	for _, c := range m.Comments {
		if !strings.HasPrefix(c, pprofmt.WindowCommentPrefix) {
			cs = append(cs, c)
		}
	}
	m.Comments = append(cs, pprofmt.WindowComment(w))
	return m, nil
}
