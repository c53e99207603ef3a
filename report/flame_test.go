package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/arenaprof/arenaprof/internal/testkit/fixture"
)

// TestFlameMatchesTable checks that the root frame is the table's total and
// that every frame without callees is the table's row of its stack, with
// the same bytes and interval, for allocated and in-use bytes.
func TestFlameMatchesTable(t *testing.T) {
	p := fixture.Arena(t)
	for _, inuse := range []bool{false, true} {
		root, err := Flame(p, FlameOptions{InUse: inuse, Confidence: 0.9})
		if err != nil {
			t.Fatal(err)
		}
		tab, err := Table(p, TableOptions{By: "stack", InUse: inuse, Confidence: 0.9})
		if err != nil {
			t.Fatal(err)
		}
		if root.Bytes != tab.Total.Bytes || root.Lo != tab.Total.Lo || root.Hi != tab.Total.Hi {
			t.Errorf("inuse=%v: root %d [%g, %g], total %d [%g, %g]", inuse, root.Bytes, root.Lo, root.Hi, tab.Total.Bytes, tab.Total.Lo, tab.Total.Hi)
		}
		rows := map[string]TableRow{}
		for _, r := range tab.Rows {
			rows[r.Key] = r
		}
		leaves := 0
		var walk func(n *FlameNode, path []string)
		walk = func(n *FlameNode, path []string) {
			for i := 1; i < len(n.Children); i++ {
				if n.Children[i-1].Bytes < n.Children[i].Bytes {
					t.Errorf("children of %s not largest first", n.Name)
				}
			}
			if len(n.Children) == 0 {
				leaves++
				leafFirst := slices.Clone(path)
				slices.Reverse(leafFirst)
				key := strings.Join(leafFirst, stackSep)
				r, ok := rows[key]
				if !ok {
					t.Errorf("inuse=%v: leaf path %q has no table row", inuse, key)
					return
				}
				if n.Bytes != r.Bytes || n.Lo != r.Lo || n.Hi != r.Hi || n.Samples != r.Samples {
					t.Errorf("inuse=%v: %q: frame %d [%g, %g], row %d [%g, %g]", inuse, key, n.Bytes, n.Lo, n.Hi, r.Bytes, r.Lo, r.Hi)
				}
			}
			for _, k := range n.Children {
				walk(k, append(path[:len(path):len(path)], k.Name))
			}
		}
		walk(root, nil)
		if leaves == 0 {
			t.Errorf("inuse=%v: no leaf frames", inuse)
		}
	}
}

// TestFlameMinShare checks that MinShare drops small frames, counts them
// in Hidden, and keeps their bytes in their callers.
func TestFlameMinShare(t *testing.T) {
	p := fixture.Arena(t)
	for _, tc := range []struct {
		share      float64
		wantHidden bool
		wantErr    bool
	}{
		{0, false, false},
		{0.5, true, false}, // the 1 MiB buffers take most of the bytes
		{1.5, false, true},
		{-0.1, false, true},
	} {
		root, err := Flame(p, FlameOptions{MinShare: tc.share})
		if (err != nil) != tc.wantErr {
			t.Fatalf("MinShare %v: error %v, want error %v", tc.share, err, tc.wantErr)
		}
		if err != nil {
			continue
		}
		if (root.Hidden > 0) != tc.wantHidden {
			t.Errorf("MinShare %v: %d hidden frames", tc.share, root.Hidden)
		}
		var sum int64
		for _, k := range root.Children {
			sum += k.Bytes
		}
		if sum > root.Bytes || (!tc.wantHidden && sum != root.Bytes) {
			t.Errorf("MinShare %v: children hold %d bytes of the root's %d", tc.share, sum, root.Bytes)
		}
	}
}
