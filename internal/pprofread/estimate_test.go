package pprofread

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/arenaprof/arenaprof/internal/testkit/memtest"

	"github.com/arenaprof/arenaprof/internal/testkit/fixture"

	"github.com/google/pprof/profile"
)

// pb builds protobuf data for tests.
type pb struct{ b []byte }

func (p *pb) varint(x uint64) *pb {
	for x >= 0x80 {
		p.b = append(p.b, byte(x)|0x80)
		x >>= 7
	}
	p.b = append(p.b, byte(x))
	return p
}

func (p *pb) field(n uint64, payload []byte) *pb {
	p.varint(n<<3 | 2).varint(uint64(len(payload)))
	p.b = append(p.b, payload...)
	return p
}

func (p *pb) num(n, x uint64) *pb { return p.varint(n << 3).varint(x) }

func repeat(n int, rec []byte) []byte { return bytes.Repeat(rec, n) }

// decodeAlloc returns the bytes profile.ParseData allocates on data.
//
// The allocation counter is process-wide, so another goroutine (a timer,
// the leftovers of an earlier test) can add to one measurement; it never
// subtracts, so the least of a few measurements is the decoder's own.
func decodeAlloc(data []byte) uint64 {
	var s memScan
	s.scan(data)
	var least uint64
	for i := range 5 {
		var p *profile.Profile
		n := memtest.AllocDuring(func() { p, _ = parseData(data, &s) })
		runtime.KeepAlive(p)
		if i == 0 || n < least {
			least = n
		}
	}
	return least
}

// scanEstimate returns the estimate Read computes for uncompressed data.
func scanEstimate(data []byte) int64 {
	var s memScan
	s.scan(data)
	return s.estimate(data, true)
}

// estimateCases are data on which the decoder allocates the most per byte
// for each kind of record, and real profiles.
func estimateCases(t testing.TB) []struct {
	name string
	data []byte
} {
	var stringTable pb
	stringTable.field(6, nil)
	for i := range 3000 {
		stringTable.field(6, []byte(fmt.Sprint(i)))
	}
	var oneLabel, packedLocs, looseLocs, packedVals, looseVals, manyLabels, lines, comments pb
	oneLabel.field(2, new(pb).field(3, nil).b)
	packedLocs.field(2, new(pb).field(1, bytes.Repeat([]byte{1}, 200)).b)
	for range 200 {
		looseLocs.num(1, 1)
		looseVals.num(2, 1)
		manyLabels.field(3, new(pb).num(1, 1).b)
		lines.field(4, nil)
	}
	packedVals.field(2, new(pb).field(2, bytes.Repeat([]byte{1}, 200)).b)
	comments.field(13, bytes.Repeat([]byte{0}, 2000))
	var arenaRaw, raw bytes.Buffer
	if err := fixture.Arena(t).WriteUncompressed(&arenaRaw); err != nil {
		t.Fatal(err)
	}
	if err := fixture.BigHeap(20000, 16).WriteUncompressed(&raw); err != nil {
		t.Fatal(err)
	}
	heapText := "heap profile: 1: 2 [3: 4] @ heap/1048576\n" + strings.Repeat("1: 2 [3: 4] @ 0x1 0x2\n", 5000)
	return []struct {
		name string
		data []byte
	}{
		{"empty samples", repeat(30000, []byte{0x12, 0x00})},
		{"samples with one empty label", repeat(10000, oneLabel.b)},
		{"samples with string, number and unit labels", func() []byte {
			var st pb
			st.field(6, nil).field(6, []byte("k")).field(6, []byte("v")).field(6, []byte("u"))
			lab := new(pb).field(3, new(pb).num(1, 1).num(2, 2).b).field(3, new(pb).num(1, 2).num(3, 5).num(4, 3).b).b
			return append(st.b, repeat(10000, new(pb).field(2, lab).b)...)
		}()},
		{"samples with 200 labels", repeat(200, new(pb).field(2, manyLabels.b).b)},
		{"packed location IDs", repeat(3000, packedLocs.b)},
		{"location IDs one by one", repeat(300, new(pb).field(2, looseLocs.b).b)},
		{"packed values", repeat(3000, packedVals.b)},
		{"values one by one", repeat(300, new(pb).field(2, looseVals.b).b)},
		{"empty locations", repeat(20000, new(pb).field(4, nil).b)},
		{"locations with IDs", func() []byte {
			var p pb
			for i := range 20000 {
				p.field(4, new(pb).num(1, uint64(i+1)).b)
			}
			return p.b
		}()},
		{"locations with 200 lines", repeat(300, new(pb).field(4, lines.b).b)},
		{"empty functions", repeat(20000, new(pb).field(5, nil).b)},
		{"functions with IDs", func() []byte {
			var p pb
			for i := range 20000 {
				p.field(5, new(pb).num(1, uint64(i+1)).b)
			}
			return p.b
		}()},
		{"mappings with IDs", func() []byte {
			var p pb
			for i := range 20000 {
				p.field(3, new(pb).num(1, uint64(i+1)).b)
			}
			return p.b
		}()},
		{"strings", stringTable.b},
		{"sample types", repeat(20000, new(pb).field(1, nil).b)},
		{"comments", comments.b},
		{"fixture", arenaRaw.Bytes()},
		{"Go heap profile, 20000 samples", raw.Bytes()},
		{"legacy heap text", []byte(heapText)},
		{"legacy heap text, empty lines", []byte("heap profile: 1: 2 [3: 4] @ heap/1048576\n" + strings.Repeat("0: 0 [0: 0] @\n", 10000))},
		{"legacy heap text, distinct addresses", []byte("heap profile: 1: 2 [3: 4] @ heap/1048576\n1: 1 [1: 1] @" + addrs(20000) + "\n")},
		{"legacy goroutine counts", []byte("goroutine profile: total 1\n" + strings.Repeat("1 @ 0x1\n", 20000))},
		{"legacy goroutine counts, distinct addresses", []byte("goroutine profile: total 1\n1 @" + addrs(20000) + "\n")},
		{"legacy contention", []byte("--- contentions:\ncycles/second=3000000000\n" + strings.Repeat("1 1 @ 0x1\n", 20000))},
		{"legacy threadz", []byte("--- threadz 1 ---\n" + strings.Repeat("--- Thread 1 (name) (1 frames)\n  0x1\n", 5000))},
		{"legacy heap text inside a protobuf string", func() []byte {
			text := "heap profile: 1: 2 [3: 4] @ heap/1048576\n" + strings.Repeat("0: 0 [0: 0] @\n", 10000)
			return new(pb).field(6, []byte(text)).b
		}()},
		{"text", []byte(strings.Repeat("hello, world\n", 10000))},
		{"zeros", make([]byte, 100000)},
		{"legacy CPU header", append(new(pb).b, make([]byte, 8)...)},
	}
}

// TestEstimateCovers checks that the scan's estimate covers what the
// decoder really allocates, and is not far above it, on the records that
// cost the most per byte and on real profiles.
func TestEstimateCovers(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocations")
	}
	for _, tc := range estimateCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			got := decodeAlloc(tc.data)
			est := scanEstimate(tc.data)
			t.Logf("%d bytes: allocated %d (%.1f per byte), estimate %d (%.2fx)", len(tc.data), got, float64(got)/float64(len(tc.data)), est, float64(est)/float64(got))
			if uint64(est) < got {
				t.Errorf("estimate %d below the %d bytes allocated", est, got)
			}
		})
	}
}

// addrs returns n distinct hexadecimal addresses, each after a space.
func addrs(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, " 0x%x", i+1)
	}
	return b.String()
}

// BenchmarkScan measures the scan that prices a profile before decoding,
// on a Go heap profile of 20,000 samples (MB/s of uncompressed data).
func BenchmarkScan(b *testing.B) {
	var raw bytes.Buffer
	if err := fixture.BigHeap(20000, 16).WriteUncompressed(&raw); err != nil {
		b.Fatal(err)
	}
	data := raw.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var s memScan
		s.scan(data)
		if s.estimate(data, true) <= 0 {
			b.Fatal("no estimate")
		}
	}
}
