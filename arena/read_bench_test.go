package arena

import (
	"bytes"
	"io"
	"strconv"
	"testing"
)

// BenchmarkReadAll reads a body of each size from a bytes.Reader: with
// ReadAll into an arena reset every op, and with io.ReadAll on the heap.
// Sampling is on at the default mean, with a consumer registered, as in a
// profiled service. The figures are in BENCHMARKS.md.
//
//	go test -run '^$' -bench BenchmarkReadAll -benchmem -count 10 ./arena | tee new.txt
//	benchstat -col /impl new.txt
func BenchmarkReadAll(b *testing.B) {
	const limit = 16 << 20
	for _, n := range []int{1 << 10, 16 << 10, 256 << 10, 4 << 20} {
		data := bytes.Repeat([]byte{'x'}, n)
		b.Run("size="+strconv.Itoa(n>>10)+"KiB", func(b *testing.B) {
			b.Run("impl=arena", func(b *testing.B) {
				withDefaultSampling(b)
				a := NewArena()
				r := bytes.NewReader(data)
				b.SetBytes(int64(n))
				b.ReportAllocs()
				for b.Loop() {
					a.Reset()
					r.Reset(data)
					out, err := ReadAll(a, r, limit)
					if err != nil || len(out) != n {
						b.Fatal(len(out), err)
					}
					sinkB = out
				}
				sinkB = nil
			})
			b.Run("impl=heap", func(b *testing.B) {
				withDefaultSampling(b)
				r := bytes.NewReader(data)
				b.SetBytes(int64(n))
				b.ReportAllocs()
				for b.Loop() {
					r.Reset(data)
					out, err := io.ReadAll(io.LimitReader(r, limit+1))
					if err != nil || len(out) != n {
						b.Fatal(len(out), err)
					}
					sinkB = out
				}
				sinkB = nil
			})
		})
	}
}
