package report

import (
	"errors"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// Merge merges compatible profiles with [profile.Merge]: values add up, and
// the window marking becomes the union of the parts' markings (a part
// without one counts as "both"; see the package documentation,
// Intervals). The parts must come from independent sampling streams or
// disjoint windows, as the windows of one process's agent do.
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
