package arena

import (
	"context"
	"strconv"
	"testing"
)

// BenchmarkChecked measures what checked mode costs, off (the default)
// and on: op=new32 is New of a 32-byte pointer-free struct with a Reset
// every resetEvery objects; op=request is one request served from a Pool
// (Get, 16 pointer-free New, a 32-byte String, 4 New of a type with
// pointers, Put). mapped-B/op is the address space checked mode maps per
// op: it is released at the next Reset or Put, its pages given back to the
// kernel, and unmapped later (see checked_mmap.go).
func BenchmarkChecked(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run("op=new32/checked="+strconv.FormatBool(on), func(b *testing.B) {
			a := NewArena(WithChecked(on))
			defer a.Free()
			m0 := checkedMapped.Load()
			b.ReportAllocs()
			for i := range b.N {
				if i%resetEvery == 0 {
					a.Reset()
				}
				sink32 = New[obj32](a)
			}
			b.ReportMetric(float64(checkedMapped.Load()-m0)/float64(b.N), "mapped-B/op")
		})
		b.Run("op=request/checked="+strconv.FormatBool(on), func(b *testing.B) {
			p := NewPool(WithChecked(on))
			ctx := context.Background()
			m0 := checkedMapped.Load()
			b.ReportAllocs()
			for range b.N {
				a := p.Get(ctx)
				for range 16 {
					sink32 = New[obj32](a)
				}
				checkedStr = String(a, "0123456789abcdef0123456789abcdef")
				for range 4 {
					sinkStr = New[objStr](a)
				}
				p.Put(a)
			}
			b.ReportMetric(float64(checkedMapped.Load()-m0)/float64(b.N), "mapped-B/op")
		})
	}
}

var checkedStr string
