package report

import (
	"errors"
	"fmt"
	"sort"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/tabfmt"
)

// FlameOptions configure [Flame].
type FlameOptions struct {
	// InUse, Confidence, GoVersion and AnyOrder are as in [TableOptions].
	InUse      bool
	Confidence float64
	GoVersion  string
	AnyOrder   bool
	// MinShare drops the frames whose bytes are below MinShare times the
	// total's (their bytes stay in their callers' frames), so that a
	// profile of many stacks makes a graph of the frames one can see;
	// 0 keeps every frame.
	MinShare float64
}

// FlameNode is one frame of a flame graph: a call path from the root of
// the stacks (the outermost caller) down to Name. Its bytes are those of
// every sample whose stack starts with that path, and its interval is
// computed from their raw sums as [Table]'s rows are.
type FlameNode struct {
	// Name is the frame's function name, whole (see [TableRow].Key);
	// Short is the name without its import path. The root is "total".
	Name, Short string
	// Samples, Bytes, Lo and Hi are as in [TableRow].
	Samples int64
	Bytes   int64
	Lo, Hi  float64
	// Children are the frames called from this one, largest first, ties
	// by name.
	Children []*FlameNode
	// Hidden is the number of frames left out below this one by
	// FlameOptions.MinShare, counted over the whole subtree.
	Hidden int
}

// flameGroup is a frame being built: its group and its callees by name.
type flameGroup struct {
	g     group
	short string
	kids  map[string]*flameGroup
}

// Flame groups the samples of a profile by call path, root first, into a
// tree of frames whose widths are estimated bytes, each with an interval
// at opts.Confidence. It reads the same profiles as [Table] and returns
// its errors.
func Flame(p *profile.Profile, opts FlameOptions) (*FlameNode, error) {
	if !(opts.MinShare >= 0 && opts.MinShare <= 1) {
		return nil, fmt.Errorf("report: flame MinShare %v is not between 0 and 1", opts.MinShare)
	}
	if p == nil {
		return nil, errors.New("report: nil profile")
	}
	conf, err := confidence(opts.Confidence)
	if err != nil {
		return nil, err
	}
	f, _ := pprofmt.Describe(p) // modelOf returns its error
	topts := TableOptions{By: string(groupByStack), InUse: opts.InUse, Confidence: conf, GoVersion: opts.GoVersion, AnyOrder: opts.AnyOrder}
	m, err := modelOf(f, groupBy(groupByStack), topts)
	if err != nil {
		return nil, err
	}
	root := &flameGroup{g: group{row: TableRow{Key: "total"}, sums: m.newSums(true)}, short: "total"}
	for _, s := range p.Sample {
		c, skip, err := m.read(s)
		if err != nil {
			return nil, err
		}
		if skip {
			continue
		}
		full := stackFrames(s)
		if len(full) == 0 {
			full = []string{noneKey}
		}
		root.g.add(c, &err)
		node := root
		for i := len(full) - 1; i >= 0; i-- {
			kid := node.kids[full[i]]
			if kid == nil {
				if node.kids == nil {
					node.kids = map[string]*flameGroup{}
				}
				kid = &flameGroup{g: group{row: TableRow{Key: full[i]}, sums: m.newSums(false)}, short: tabfmt.ShortFuncName(full[i])}
				node.kids[full[i]] = kid
			}
			kid.g.add(c, &err)
			node = kid
		}
		if err != nil {
			return nil, err
		}
	}
	floor := opts.MinShare * float64(root.g.row.Bytes)
	return root.node(conf, floor)
}

// node bounds the frame and the callees at or above floor bytes, and
// returns them as a FlameNode.
func (f *flameGroup) node(conf, floor float64) (*FlameNode, error) {
	if err := f.g.bound(conf); err != nil {
		return nil, err
	}
	n := &FlameNode{Name: f.g.row.Key, Short: f.short, Samples: f.g.row.Samples, Bytes: f.g.row.Bytes, Lo: f.g.row.Lo, Hi: f.g.row.Hi}
	for _, k := range f.kids {
		if float64(k.g.row.Bytes) < floor || k.g.row.Bytes <= 0 {
			n.Hidden += k.count()
			continue
		}
		kn, err := k.node(conf, floor)
		if err != nil {
			return nil, err
		}
		n.Hidden += kn.Hidden
		n.Children = append(n.Children, kn)
	}
	sort.Slice(n.Children, func(i, j int) bool {
		a, b := n.Children[i], n.Children[j]
		if a.Bytes != b.Bytes {
			return a.Bytes > b.Bytes
		}
		return a.Name < b.Name
	})
	return n, nil
}

// count is the number of frames of f's subtree, f included.
func (f *flameGroup) count() int {
	n := 1
	for _, k := range f.kids {
		n += k.count()
	}
	return n
}
