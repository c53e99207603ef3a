package report

import (
	"bytes"
	"math"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/goheap"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/testkit/fixture"
)

// runtimeScale returns the values runtime/pprof writes for count objects
// of size bytes sampled at rate (runtime/pprof's scaleHeapSample).
func runtimeScale(count, size, rate int64) (objects, bytes int64) {
	if count == 0 || size == 0 {
		return 0, 0
	}
	if rate <= 1 {
		return count, count * size
	}
	scale := 1 / (1 - math.Exp(-float64(size)/float64(rate)))
	return int64(float64(count) * scale), int64(float64(count*size) * scale)
}

// scaledCounts returns a copy of the Go heap profile p whose samples hold
// n times their raw counts, written as runtime/pprof writes one record:
// what n copies of p merged must read as.
func scaledCounts(t testing.TB, p *profile.Profile, n int64) *profile.Profile {
	t.Helper()
	q := p.Copy()
	for _, s := range q.Sample {
		if len(s.NumLabel[pprofmt.LabelBytes]) == 0 {
			// A record whose first allocations the runtime has not
			// published yet: runtime/pprof writes it with zero values and
			// no size.
			if slices.ContainsFunc(s.Value, func(v int64) bool { return v != 0 }) {
				t.Fatalf("a sample without a size holds values %v", s.Value)
			}
			continue
		}
		size := s.NumLabel[pprofmt.LabelBytes][0]
		for _, i := range [][2]int{{0, 1}, {2, 3}} {
			c, hi, err := goheap.RawCount(s.Value[i[0]], s.Value[i[1]], size, q.Period)
			if err != nil || c != hi {
				t.Fatalf("raw count of %v: [%d, %d], %v", s.Value, c, hi, err)
			}
			s.Value[i[0]], s.Value[i[1]] = runtimeScale(n*c, size, q.Period)
		}
	}
	return q
}

// realHeap is this process's heap profile as runtime/pprof writes it.
func realHeap(t testing.TB) *profile.Profile {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// manySizes is a Go heap profile at MemProfileRate 4096 of 64 object sizes
// (16 to 1024 bytes), scaled as runtime/pprof scales: the kind of profile
// whose truncations add up fastest.
func manySizes() *profile.Profile {
	p := fixture.BigHeap(64, 3)
	p.Period = 4096
	for _, s := range p.Sample {
		size := s.NumLabel[pprofmt.LabelBytes][0]
		s.Value[0], s.Value[1] = runtimeScale(3, size, p.Period)
		s.Value[2], s.Value[3] = runtimeScale(1, size, p.Period)
	}
	return p
}

// Merging N copies of a genuine Go heap profile (runtime/pprof's own, and
// one of many object sizes at MemProfileRate 4096) reads, for every N, as
// the one profile whose raw counts are N times its own: the same rows,
// estimates, event counts and intervals, allocated and in use, grouped by
// function, stack and size. Under Go 1.23's rule, whose estimate is the
// sum of the values, the estimate is exactly N times one copy's. (The
// interval is not N times one copy's: N copies read as N independent
// samples of the same allocations, whose relative width shrinks as
// 1/sqrt(N).) Before the raw counts were kept, 99 or 100 copies were
// refused: the summed truncations passed goheap.Slack.
func TestMergeHeapCopies(t *testing.T) {
	profiles := map[string]*profile.Profile{"runtime": realHeap(t), "rate 4096": manySizes()}
	for name, one := range profiles {
		for _, n := range []int{1, 99, 100, 1000, 10000} {
			parts := make([]*profile.Profile, n)
			for i := range parts {
				parts[i] = one
			}
			merged, err := Merge(parts...)
			if err != nil {
				t.Fatalf("%s, %d copies: %v", name, n, err)
			}
			want := scaledCounts(t, one, int64(n))
			for _, by := range []string{"func", "stack", "size"} {
				for _, inuse := range []bool{false, true} {
					opts := TableOptions{By: by, InUse: inuse}
					got, err := Table(merged, opts)
					if err != nil {
						t.Fatalf("%s, %d copies, by %s, inuse %v: %v", name, n, by, inuse, err)
					}
					ref, err := Table(want, opts)
					if err != nil {
						t.Fatal(err)
					}
					if !sameRows(got, ref) {
						t.Errorf("%s, %d copies, by %s, inuse %v: total %+v, want %+v", name, n, by, inuse, got.Total, ref.Total)
					}
					opts.GoVersion = "go1.23.0"
					got, err = Table(merged, opts)
					if err != nil {
						t.Fatal(err)
					}
					single, err := Table(one, opts)
					if err != nil {
						t.Fatal(err)
					}
					if got.Total.Bytes != int64(n)*single.Total.Bytes || got.Total.Samples != int64(n)*single.Total.Samples {
						t.Errorf("%s, %d copies, by %s, inuse %v, go1.23: total %d bytes from %d samples, want %d times %d from %d",
							name, n, by, inuse, got.Total.Bytes, got.Total.Samples, n, single.Total.Bytes, single.Total.Samples)
					}
				}
			}
		}
	}
}

// sameRows reports whether two tables have the same groups with the same
// estimates, counts and intervals.
func sameRows(a, b *TableResult) bool {
	if a.Groups != b.Groups || len(a.Rows) != len(b.Rows) || a.Total != b.Total {
		return false
	}
	for i := range a.Rows {
		if a.Rows[i] != b.Rows[i] {
			return false
		}
	}
	return true
}

// A part whose in-use values match no raw count (a delta profile, whose
// in-use values may be negative) merges: the allocated values read, and
// the in-use ones are refused, as they are in the part alone.
func TestMergeHeapUnreadable(t *testing.T) {
	good := manySizes()
	delta := good.Copy()
	delta.Sample[0].Value[2], delta.Sample[0].Value[3] = -1, -4096
	for _, parts := range [][]*profile.Profile{{delta}, {good, delta}, {delta, good, good}} {
		merged, err := Merge(parts...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Table(merged, TableOptions{By: "func"}); err != nil {
			t.Errorf("%d parts, allocated: %v", len(parts), err)
		}
		if _, err := Table(merged, TableOptions{By: "func", InUse: true}); err == nil || !strings.Contains(err.Error(), "in one of the merged profiles match no raw count") {
			t.Errorf("%d parts, in use: %v", len(parts), err)
		}
	}
}

// Merge keeps the raw counts of arenaprof's heap uploads too (label
// memory=heap): N copies read as one whose in-use counts are N times its
// own, and arena samples beside them are unchanged.
func TestMergeHeapUploadCopies(t *testing.T) {
	heap := manySizes()
	up, err := goheap.Convert(heap)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	parts := make([]*profile.Profile, n)
	for i := range parts {
		parts[i] = up
	}
	merged, err := Merge(parts...)
	if err != nil {
		t.Fatal(err)
	}
	want, err := goheap.Convert(scaledCounts(t, heap, n))
	if err != nil {
		t.Fatal(err)
	}
	for _, inuse := range []bool{false, true} {
		got, err := Table(merged, TableOptions{By: "func", InUse: inuse})
		if err != nil {
			t.Fatalf("inuse %v: %v", inuse, err)
		}
		ref, err := Table(want, TableOptions{By: "func", InUse: inuse})
		if err != nil {
			t.Fatal(err)
		}
		if !sameRows(got, ref) {
			t.Errorf("inuse %v: total %+v, want %+v", inuse, got.Total, ref.Total)
		}
	}
}

// FuzzMergeHeap merges Go heap profiles as runtime/pprof writes them
// (records of fuzzed object sizes and raw counts at a fuzzed
// MemProfileRate, 1 or above 128, where one record's values give one raw
// count), each part given copies times: the merge always reads, allocated
// and in use, and its total counts every sampled object of every part,
// exactly.
func FuzzMergeHeap(f *testing.F) {
	f.Add(uint32(4096), uint16(100), []byte{1, 16, 200, 3, 8, 1})
	f.Add(uint32(512*1024), uint16(10000), []byte{255, 255, 255, 255, 255, 255, 0, 0, 1})
	f.Add(uint32(1), uint16(2), []byte{7, 7, 7})
	f.Fuzz(func(t *testing.T, rate32 uint32, copies16 uint16, recs []byte) {
		rate := int64(rate32 % (1 << 24))
		if rate != 1 && rate <= 2*goheap.Slack {
			rate += 2*goheap.Slack + 1
		}
		copies := int(copies16%2000) + 1
		if len(recs) > 60 {
			recs = recs[:60]
		}
		// Each part: records of three bytes (size/8, alloc count, in-use
		// count at most the alloc count), a part per 12 bytes.
		var parts []*profile.Profile
		var alloc, inuse int64
		for len(recs) >= 3 {
			p := fixture.BigHeap(0, 1)
			p.Period = rate
			loc := p.Location[0]
			for i := 0; i < 4 && len(recs) >= 3; i++ {
				size := 8 * (int64(recs[0]) + 1)
				a := int64(recs[1])
				u := min(int64(recs[2]), a)
				recs = recs[3:]
				s := &profile.Sample{Location: []*profile.Location{loc}, Value: make([]int64, 4), NumLabel: map[string][]int64{"bytes": {size}}}
				s.Value[0], s.Value[1] = runtimeScale(a, size, rate)
				s.Value[2], s.Value[3] = runtimeScale(u, size, rate)
				p.Sample = append(p.Sample, s)
				alloc += int64(copies) * a
				inuse += int64(copies) * u
			}
			for range copies {
				parts = append(parts, p)
			}
		}
		if len(parts) == 0 {
			return
		}
		merged, err := Merge(parts...)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range []bool{false, true} {
			res, err := Table(merged, TableOptions{By: "size", InUse: u})
			if err != nil {
				t.Fatalf("inuse %v: %v", u, err)
			}
			want := alloc
			if u {
				want = inuse
			}
			if res.Total.Samples != want || res.Total.SamplesMax != want {
				t.Fatalf("inuse %v: total of %d to %d samples, want %d", u, res.Total.Samples, res.Total.SamplesMax, want)
			}
		}
	})
}
