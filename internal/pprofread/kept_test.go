package pprofread

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/testkit/fixture"
)

// labeledHeap is fixture.BigHeap(n, depth) with a string and a numeric
// label on every sample, the labels of part.
func labeledHeap(n, depth int, part string) *profile.Profile {
	p := fixture.BigHeap(n, depth)
	for i, s := range p.Sample {
		s.Label = map[string][]string{"part": {part}, "type": {fmt.Sprintf("main.T%d", i%50)}}
		s.NumUnit = map[string][]string{"bytes": {"bytes"}}
	}
	return p
}

// encode returns p's uncompressed data.
func encode(t *testing.T, p *profile.Profile) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := p.WriteUncompressed(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Kept bounds what a decoded profile keeps, never prices it above the
// read's estimate of decoding it, and grows by at most Adds of that
// estimate when a profile is merged in: a merge of 1,000 copies keeps what
// one copy keeps.
func TestKept(t *testing.T) {
	profiles := []struct {
		name string
		p    *profile.Profile
		big  bool // large enough to measure the heap it keeps, too large to merge 1,000 times quickly
	}{
		{"arena fixture", fixture.Arena(t), false},
		{"small labeled heap", labeledHeap(200, 8, "a"), false},
		{"big heap", fixture.BigHeap(20000, 16), true},
		{"labeled heap", labeledHeap(20000, 8, "a"), true},
	}
	for _, tt := range profiles {
		data := encode(t, tt.p)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var s memScan
		s.scan(data)
		p, err := parseData(data, &s)
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		kept := Kept(p)
		if tt.big && int64(after.HeapAlloc) > int64(before.HeapAlloc)+kept {
			t.Errorf("%s: keeps %d bytes of heap, Kept %d", tt.name, after.HeapAlloc-before.HeapAlloc, kept)
		}
		runtime.KeepAlive(p)
		t.Logf("%s: keeps %d bytes of heap, Kept %d, the read's estimate %d", tt.name, int64(after.HeapAlloc)-int64(before.HeapAlloc), kept, scanEstimate(data))
		if est := scanEstimate(data); kept > est {
			t.Errorf("%s: Kept %d, above the read's estimate %d", tt.name, kept, est)
		}
		if tt.big {
			continue
		}
		copies := make([]*profile.Profile, 1000)
		for i := range copies {
			copies[i] = p
		}
		m, err := profile.Merge(copies)
		if err != nil {
			t.Fatal(err)
		}
		if km := Kept(m); km > kept {
			t.Errorf("%s: 1000 copies merged keep %d, one %d", tt.name, km, kept)
		}
	}
	// Two profiles of distinct samples (labels) and shared functions:
	// the merge keeps more than either, at most the first and what the
	// second adds.
	a, b := labeledHeap(2000, 8, "a"), labeledHeap(2000, 8, "b")
	m, err := profile.Merge([]*profile.Profile{a, b})
	if err != nil {
		t.Fatal(err)
	}
	ka, km := Kept(a), Kept(m)
	if bound := ka + Adds(scanEstimate(encode(t, b))); km > bound || km <= ka {
		t.Errorf("merged keeps %d, first part %d, bound %d", km, ka, bound)
	}
}
