package arena

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/samplingstate"
	"github.com/arenaprof/arenaprof/internal/testkit/hookstest"
)

// Benchmarks, run side by side with
//
//	go test -run '^$' -bench . -count 10 ./arena | tee new.txt
//	benchstat -col /impl new.txt
//
// Every loop resets its arena (or the floor's chunk) every resetEvery
// allocations, so that steady state reuses memory: 0 allocs/op.

const resetEvery = 1024

type obj8 struct{ a int64 }
type obj32 struct{ a, b, c, d int64 }
type obj256 struct{ a [32]int64 }
type objStr struct {
	s string
	n [3]int64
}

var (
	sink8   *obj8
	sink32  *obj32
	sink256 *obj256
	sinkStr *objStr
	sinkB   []byte
)

// floor is a hand-written bump allocator over one byte chunk, written out
// at each call site: the cost an arena's fast path can at best approach.
type floor struct {
	chunk []uint64
	base  unsafe.Pointer
	off   uintptr
	limit uintptr
}

func newFloor() *floor {
	f := &floor{chunk: make([]uint64, defaultChunkSize/8)}
	f.base = unsafe.Pointer(&f.chunk[0])
	f.limit = defaultChunkSize
	return f
}

// reset zeroes the used part, as Arena.Reset does.
func (f *floor) reset() {
	clear(unsafe.Slice((*byte)(f.base), f.off))
	f.off = 0
}

// sampling runs fn with sampling off, on at the default mean and on at a
// mean of 4096 bytes, as sub-benchmarks.
func sampling(b *testing.B, fn func(b *testing.B)) {
	for _, c := range []struct {
		name string
		mean int64
	}{{"off", 0}, {"default", samplingstate.DefaultMeanBytes}, {"4096", 4096}} {
		b.Run("sampling="+c.name, func(b *testing.B) {
			if c.mean > 0 {
				if err := hooks.SetMeanBytes(c.mean); err != nil {
					b.Fatal(err)
				}
				defer hooks.SetMeanBytes(samplingstate.DefaultMeanBytes)
				n := 0
				defer hooks.Register(hookstest.Func(func(*hooks.Event) { n++ }))()
			}
			fn(b)
		})
	}
}

func BenchmarkNew(b *testing.B) {
	b.Run("size=8", func(b *testing.B) {
		b.Run("impl=arena", func(b *testing.B) {
			sampling(b, func(b *testing.B) {
				a := NewArena()
				b.ReportAllocs()
				for i := range b.N {
					if i%resetEvery == 0 {
						a.Reset()
					}
					sink8 = New[obj8](a)
				}
			})
		})
		b.Run("impl=floor", func(b *testing.B) {
			f := newFloor()
			b.ReportAllocs()
			for i := range b.N {
				if i%resetEvery == 0 {
					f.reset()
				}
				end := f.off + 8
				if end > f.limit {
					f.reset()
					end = 8
				}
				sink8 = (*obj8)(unsafe.Add(f.base, f.off))
				f.off = end
			}
		})
		b.Run("impl=heap", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				sink8 = new(obj8)
			}
		})
	})
	b.Run("size=32", func(b *testing.B) {
		b.Run("impl=arena", func(b *testing.B) {
			sampling(b, func(b *testing.B) {
				a := NewArena()
				b.ReportAllocs()
				for i := range b.N {
					if i%resetEvery == 0 {
						a.Reset()
					}
					sink32 = New[obj32](a)
				}
			})
		})
		b.Run("impl=arena-trynew", func(b *testing.B) {
			sampling(b, func(b *testing.B) {
				a := NewArena()
				b.ReportAllocs()
				for i := range b.N {
					if i%resetEvery == 0 {
						a.Reset()
					}
					p := tryNew[obj32](a)
					if p == nil {
						p = New[obj32](a)
					}
					sink32 = p
				}
			})
		})
		b.Run("impl=floor", func(b *testing.B) {
			f := newFloor()
			b.ReportAllocs()
			for i := range b.N {
				if i%resetEvery == 0 {
					f.reset()
				}
				end := f.off + 32
				if end > f.limit {
					f.reset()
					end = 32
				}
				sink32 = (*obj32)(unsafe.Add(f.base, f.off))
				f.off = end
			}
		})
		b.Run("impl=heap", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				sink32 = new(obj32)
			}
		})
	})
	b.Run("size=256", func(b *testing.B) {
		b.Run("impl=arena", func(b *testing.B) {
			sampling(b, func(b *testing.B) {
				a := NewArena()
				b.ReportAllocs()
				for i := range b.N {
					if i%resetEvery == 0 {
						a.Reset()
					}
					sink256 = New[obj256](a)
				}
			})
		})
		b.Run("impl=floor", func(b *testing.B) {
			f := newFloor()
			b.ReportAllocs()
			for i := range b.N {
				if i%resetEvery == 0 {
					f.reset()
				}
				end := f.off + 256
				if end > f.limit {
					f.reset()
					end = 256
				}
				sink256 = (*obj256)(unsafe.Add(f.base, f.off))
				f.off = end
			}
		})
		b.Run("impl=heap", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				sink256 = new(obj256)
			}
		})
	})
	b.Run("size=str32", func(b *testing.B) {
		b.Run("impl=arena", func(b *testing.B) {
			sampling(b, func(b *testing.B) {
				a := NewArena()
				b.ReportAllocs()
				for i := range b.N {
					if i%resetEvery == 0 {
						a.Reset()
					}
					sinkStr = New[objStr](a)
				}
			})
		})
		b.Run("impl=heap", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				sinkStr = new(objStr)
			}
		})
	})
}

func BenchmarkMakeSlice(b *testing.B) {
	for _, n := range []int{64, 4096} {
		b.Run("size="+strconv.Itoa(n), func(b *testing.B) {
			b.Run("impl=arena", func(b *testing.B) {
				sampling(b, func(b *testing.B) {
					a := NewArena()
					b.ReportAllocs()
					for i := range b.N {
						if i%resetEvery == 0 {
							a.Reset()
						}
						sinkB = MakeSlice[byte](a, n, n)
					}
				})
			})
			b.Run("impl=heap", func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					sinkB = make([]byte, n)
				}
			})
		})
	}
}

// BenchmarkPerSample measures the cost of one sample with a 20-frame stack:
// the arena at mean 1 (every object sampled: stack capture and dispatch to
// one consumer) against sampling off, and the runtime's heap profiler at
// MemProfileRate 1 (every object sampled) against 0, in the same run. The
// cost per sample is the difference of the two pairs.
func BenchmarkPerSample(b *testing.B) {
	b.Run("impl=arena/sampling=off", func(b *testing.B) {
		atDepth(20, func() { arenaLoop(b) })
	})
	b.Run("impl=arena/sampling=every", func(b *testing.B) {
		if err := hooks.SetMeanBytes(1); err != nil {
			b.Fatal(err)
		}
		defer hooks.SetMeanBytes(samplingstate.DefaultMeanBytes)
		n := 0
		defer hooks.Register(hookstest.Func(func(*hooks.Event) { n++ }))()
		atDepth(20, func() { arenaLoop(b) })
	})
	b.Run("impl=runtime/sampling=off", func(b *testing.B) {
		defer setMemProfileRate(0)()
		atDepth(20, func() { heapLoop(b) })
	})
	b.Run("impl=runtime/sampling=every", func(b *testing.B) {
		defer setMemProfileRate(1)()
		atDepth(20, func() { heapLoop(b) })
	})
}

func setMemProfileRate(r int) (restore func()) {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = r
	runtime.GC() // start from a fresh sampling point
	return func() { runtime.MemProfileRate = old }
}

// atDepth calls fn below depth extra frames.
//
//go:noinline
func atDepth(depth int, fn func()) {
	if depth <= 1 {
		fn()
		return
	}
	atDepth(depth-1, fn)
}

func arenaLoop(b *testing.B) {
	a := NewArena()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%resetEvery == 0 {
			a.Reset()
		}
		sink32 = New[obj32](a)
	}
}

func heapLoop(b *testing.B) {
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		sink32 = new(obj32)
	}
}

var sinkS string

// BenchmarkString compares String and Bytes of 100 bytes with MakeSlice
// and copy, the same work written out by the caller.
func BenchmarkString(b *testing.B) {
	src := strings.Repeat("x", 100)
	srcB := []byte(src)
	b.Run("impl=string", func(b *testing.B) {
		a := NewArena()
		b.ReportAllocs()
		for i := range b.N {
			if i%resetEvery == 0 {
				a.Reset()
			}
			sinkS = String(a, src)
		}
	})
	b.Run("impl=bytes", func(b *testing.B) {
		a := NewArena()
		b.ReportAllocs()
		for i := range b.N {
			if i%resetEvery == 0 {
				a.Reset()
			}
			sinkB = Bytes(a, srcB)
		}
	})
	b.Run("impl=makeslice-copy", func(b *testing.B) {
		a := NewArena()
		b.ReportAllocs()
		for i := range b.N {
			if i%resetEvery == 0 {
				a.Reset()
			}
			s := MakeSlice[byte](a, len(src), len(src))
			copy(s, src)
			sinkB = s
		}
	})
}

// BenchmarkLargeRequest is a request that needs one buffer of the given
// size, then resets its arena: 60 KiB fits a chunk, 72 KiB does not and
// is a large buffer, kept by Reset for the next request.
func BenchmarkLargeRequest(b *testing.B) {
	for _, n := range []int{60 << 10, 72 << 10} {
		b.Run("size="+strconv.Itoa(n>>10)+"KiB", func(b *testing.B) {
			b.Run("impl=arena", func(b *testing.B) {
				a := NewArena()
				b.ReportAllocs()
				for range b.N {
					sinkB = MakeSlice[byte](a, n, n)
					a.Reset()
				}
			})
			b.Run("impl=heap", func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					sinkB = make([]byte, n)
				}
			})
		})
	}
}
