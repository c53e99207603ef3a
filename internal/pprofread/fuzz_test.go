package pprofread

import (
	"bytes"
	"testing"

	"github.com/arenaprof/arenaprof/internal/testkit/memtest"

	"github.com/arenaprof/arenaprof/internal/testkit/fixture"

	"github.com/google/pprof/profile"
)

// FuzzEstimate checks the scan that prices a profile before it is decoded:
// it never panics, gives the same result however the data is cut into
// arriving pieces, and when Read accepts the data, decoding allocated at
// most twice the estimate.
func FuzzEstimate(f *testing.F) {
	var raw bytes.Buffer
	if err := fixture.Arena(f).WriteUncompressed(&raw); err != nil {
		f.Fatal(err)
	}
	f.Add(raw.Bytes(), uint16(7))
	f.Add(emptySamples(100), uint16(1))
	f.Add([]byte{0x12, 0x02, 0x1a, 0x00}, uint16(3))
	f.Add([]byte("heap profile: 1: 2 [3: 4] @ heap/1048576\n1: 2 [3: 4] @ 0x1 0x2\n"), uint16(5))
	f.Add([]byte("goroutine profile: total 1\n1 @ 0x1 0x2\n"), uint16(5))
	f.Add([]byte{0x22, 0x04, 0x22, 0x00, 0x22, 0x00}, uint16(2))
	f.Fuzz(func(t *testing.T, data []byte, step uint16) {
		var whole memScan
		whole.scan(data)
		est := whole.estimate(data, true)
		var pieces memScan
		st := int(step%64) + 1
		var pieceEst int64
		for n := st; ; n += st {
			n = min(n, len(data))
			pieces.scan(data[:n])
			pieceEst = pieces.estimate(data[:n], n == len(data))
			if n == len(data) {
				break
			}
		}
		if pieces != whole || pieceEst != est {
			t.Fatalf("scan in pieces of %d: %+v (estimate %d), whole: %+v (estimate %d)", st, pieces, pieceEst, whole, est)
		}
		var p *profile.Profile
		var err error
		got := memtest.AllocDuring(func() { p, err = parse(bytes.NewReader(data), Options{MaxMemory: 256 << 20}) })
		if err != nil {
			return
		}
		if p == nil {
			t.Fatal("nil profile without an error")
		}
		// The counter is the process's: a background goroutine left by an
		// earlier test (a collected arena's cleanup, a profiler's peak
		// snapshot) can allocate during the parse, so an excess is
		// measured again and the least of five parses is judged.
		limit := 2*uint64(est) + 4*uint64(len(data)) + 64<<10
		for i := 0; i < 4 && got > limit; i++ {
			got = min(got, memtest.AllocDuring(func() { parse(bytes.NewReader(data), Options{MaxMemory: 256 << 20}) }))
		}
		if !raceEnabled && got > limit {
			t.Fatalf("Read allocated %d bytes, estimate %d", got, est)
		}
	})
}
