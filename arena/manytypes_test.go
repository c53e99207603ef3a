package arena

// The types and the round-robin loops below are spelled out, one call
// site per allocation, because that is how a program allocates its types:
// each New[T] is its own instantiation, inlined where it is called.

import (
	"testing"
	"unsafe"
)

// Benchmarks of many distinct types allocated round-robin: 32-byte
// structs, pointer-free (pfN) or holding a pointer (ppN), the arena reset
// every 1 MiB, each beside new(T) of the same types:
//
//	go test -run '^$' -bench ManyTypes -count 10 ./arena | tee many.txt
//	benchstat -col /impl many.txt

var sinkP unsafe.Pointer

const manyResetBytes = 1 << 20

type pf0 struct{ a, b, c, d int64 }
type pf1 struct{ a, b, c, d int64 }
type pf2 struct{ a, b, c, d int64 }
type pf3 struct{ a, b, c, d int64 }
type pf4 struct{ a, b, c, d int64 }
type pf5 struct{ a, b, c, d int64 }
type pf6 struct{ a, b, c, d int64 }
type pf7 struct{ a, b, c, d int64 }
type pf8 struct{ a, b, c, d int64 }
type pf9 struct{ a, b, c, d int64 }
type pf10 struct{ a, b, c, d int64 }
type pf11 struct{ a, b, c, d int64 }
type pf12 struct{ a, b, c, d int64 }
type pf13 struct{ a, b, c, d int64 }
type pf14 struct{ a, b, c, d int64 }
type pf15 struct{ a, b, c, d int64 }
type pf16 struct{ a, b, c, d int64 }
type pf17 struct{ a, b, c, d int64 }
type pf18 struct{ a, b, c, d int64 }
type pf19 struct{ a, b, c, d int64 }
type pf20 struct{ a, b, c, d int64 }
type pf21 struct{ a, b, c, d int64 }
type pf22 struct{ a, b, c, d int64 }
type pf23 struct{ a, b, c, d int64 }
type pf24 struct{ a, b, c, d int64 }
type pf25 struct{ a, b, c, d int64 }
type pf26 struct{ a, b, c, d int64 }
type pf27 struct{ a, b, c, d int64 }
type pf28 struct{ a, b, c, d int64 }
type pf29 struct{ a, b, c, d int64 }
type pf30 struct{ a, b, c, d int64 }
type pf31 struct{ a, b, c, d int64 }
type pf32 struct{ a, b, c, d int64 }
type pf33 struct{ a, b, c, d int64 }
type pf34 struct{ a, b, c, d int64 }
type pf35 struct{ a, b, c, d int64 }
type pf36 struct{ a, b, c, d int64 }
type pf37 struct{ a, b, c, d int64 }
type pf38 struct{ a, b, c, d int64 }
type pf39 struct{ a, b, c, d int64 }
type pf40 struct{ a, b, c, d int64 }
type pf41 struct{ a, b, c, d int64 }
type pf42 struct{ a, b, c, d int64 }
type pf43 struct{ a, b, c, d int64 }
type pf44 struct{ a, b, c, d int64 }
type pf45 struct{ a, b, c, d int64 }
type pf46 struct{ a, b, c, d int64 }
type pf47 struct{ a, b, c, d int64 }
type pf48 struct{ a, b, c, d int64 }
type pf49 struct{ a, b, c, d int64 }
type pf50 struct{ a, b, c, d int64 }
type pf51 struct{ a, b, c, d int64 }
type pf52 struct{ a, b, c, d int64 }
type pf53 struct{ a, b, c, d int64 }
type pf54 struct{ a, b, c, d int64 }
type pf55 struct{ a, b, c, d int64 }
type pf56 struct{ a, b, c, d int64 }
type pf57 struct{ a, b, c, d int64 }
type pf58 struct{ a, b, c, d int64 }
type pf59 struct{ a, b, c, d int64 }
type pf60 struct{ a, b, c, d int64 }
type pf61 struct{ a, b, c, d int64 }
type pf62 struct{ a, b, c, d int64 }
type pf63 struct{ a, b, c, d int64 }
type pp0 struct {
	p       *int
	b, c, d int64
}
type pp1 struct {
	p       *int
	b, c, d int64
}
type pp2 struct {
	p       *int
	b, c, d int64
}
type pp3 struct {
	p       *int
	b, c, d int64
}
type pp4 struct {
	p       *int
	b, c, d int64
}
type pp5 struct {
	p       *int
	b, c, d int64
}
type pp6 struct {
	p       *int
	b, c, d int64
}
type pp7 struct {
	p       *int
	b, c, d int64
}
type pp8 struct {
	p       *int
	b, c, d int64
}
type pp9 struct {
	p       *int
	b, c, d int64
}
type pp10 struct {
	p       *int
	b, c, d int64
}
type pp11 struct {
	p       *int
	b, c, d int64
}
type pp12 struct {
	p       *int
	b, c, d int64
}
type pp13 struct {
	p       *int
	b, c, d int64
}
type pp14 struct {
	p       *int
	b, c, d int64
}
type pp15 struct {
	p       *int
	b, c, d int64
}
type pp16 struct {
	p       *int
	b, c, d int64
}
type pp17 struct {
	p       *int
	b, c, d int64
}
type pp18 struct {
	p       *int
	b, c, d int64
}
type pp19 struct {
	p       *int
	b, c, d int64
}
type pp20 struct {
	p       *int
	b, c, d int64
}
type pp21 struct {
	p       *int
	b, c, d int64
}
type pp22 struct {
	p       *int
	b, c, d int64
}
type pp23 struct {
	p       *int
	b, c, d int64
}
type pp24 struct {
	p       *int
	b, c, d int64
}
type pp25 struct {
	p       *int
	b, c, d int64
}
type pp26 struct {
	p       *int
	b, c, d int64
}
type pp27 struct {
	p       *int
	b, c, d int64
}
type pp28 struct {
	p       *int
	b, c, d int64
}
type pp29 struct {
	p       *int
	b, c, d int64
}
type pp30 struct {
	p       *int
	b, c, d int64
}
type pp31 struct {
	p       *int
	b, c, d int64
}

func arenaPF1(a *Arena) {
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf0](a))
}

func heapPF1() {
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf0))
}

func arenaPF6(a *Arena) {
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf1](a))
	sinkP = unsafe.Pointer(New[pf2](a))
	sinkP = unsafe.Pointer(New[pf3](a))
	sinkP = unsafe.Pointer(New[pf4](a))
	sinkP = unsafe.Pointer(New[pf5](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf1](a))
	sinkP = unsafe.Pointer(New[pf2](a))
	sinkP = unsafe.Pointer(New[pf3](a))
	sinkP = unsafe.Pointer(New[pf4](a))
	sinkP = unsafe.Pointer(New[pf5](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf1](a))
	sinkP = unsafe.Pointer(New[pf2](a))
	sinkP = unsafe.Pointer(New[pf3](a))
	sinkP = unsafe.Pointer(New[pf4](a))
	sinkP = unsafe.Pointer(New[pf5](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf1](a))
	sinkP = unsafe.Pointer(New[pf2](a))
	sinkP = unsafe.Pointer(New[pf3](a))
	sinkP = unsafe.Pointer(New[pf4](a))
	sinkP = unsafe.Pointer(New[pf5](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf1](a))
	sinkP = unsafe.Pointer(New[pf2](a))
	sinkP = unsafe.Pointer(New[pf3](a))
	sinkP = unsafe.Pointer(New[pf4](a))
	sinkP = unsafe.Pointer(New[pf5](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf1](a))
	sinkP = unsafe.Pointer(New[pf2](a))
	sinkP = unsafe.Pointer(New[pf3](a))
	sinkP = unsafe.Pointer(New[pf4](a))
	sinkP = unsafe.Pointer(New[pf5](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf1](a))
	sinkP = unsafe.Pointer(New[pf2](a))
	sinkP = unsafe.Pointer(New[pf3](a))
	sinkP = unsafe.Pointer(New[pf4](a))
	sinkP = unsafe.Pointer(New[pf5](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf1](a))
	sinkP = unsafe.Pointer(New[pf2](a))
	sinkP = unsafe.Pointer(New[pf3](a))
	sinkP = unsafe.Pointer(New[pf4](a))
	sinkP = unsafe.Pointer(New[pf5](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf1](a))
	sinkP = unsafe.Pointer(New[pf2](a))
	sinkP = unsafe.Pointer(New[pf3](a))
	sinkP = unsafe.Pointer(New[pf4](a))
	sinkP = unsafe.Pointer(New[pf5](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf1](a))
	sinkP = unsafe.Pointer(New[pf2](a))
	sinkP = unsafe.Pointer(New[pf3](a))
	sinkP = unsafe.Pointer(New[pf4](a))
	sinkP = unsafe.Pointer(New[pf5](a))
}

func heapPF6() {
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf1))
	sinkP = unsafe.Pointer(new(pf2))
	sinkP = unsafe.Pointer(new(pf3))
	sinkP = unsafe.Pointer(new(pf4))
	sinkP = unsafe.Pointer(new(pf5))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf1))
	sinkP = unsafe.Pointer(new(pf2))
	sinkP = unsafe.Pointer(new(pf3))
	sinkP = unsafe.Pointer(new(pf4))
	sinkP = unsafe.Pointer(new(pf5))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf1))
	sinkP = unsafe.Pointer(new(pf2))
	sinkP = unsafe.Pointer(new(pf3))
	sinkP = unsafe.Pointer(new(pf4))
	sinkP = unsafe.Pointer(new(pf5))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf1))
	sinkP = unsafe.Pointer(new(pf2))
	sinkP = unsafe.Pointer(new(pf3))
	sinkP = unsafe.Pointer(new(pf4))
	sinkP = unsafe.Pointer(new(pf5))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf1))
	sinkP = unsafe.Pointer(new(pf2))
	sinkP = unsafe.Pointer(new(pf3))
	sinkP = unsafe.Pointer(new(pf4))
	sinkP = unsafe.Pointer(new(pf5))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf1))
	sinkP = unsafe.Pointer(new(pf2))
	sinkP = unsafe.Pointer(new(pf3))
	sinkP = unsafe.Pointer(new(pf4))
	sinkP = unsafe.Pointer(new(pf5))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf1))
	sinkP = unsafe.Pointer(new(pf2))
	sinkP = unsafe.Pointer(new(pf3))
	sinkP = unsafe.Pointer(new(pf4))
	sinkP = unsafe.Pointer(new(pf5))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf1))
	sinkP = unsafe.Pointer(new(pf2))
	sinkP = unsafe.Pointer(new(pf3))
	sinkP = unsafe.Pointer(new(pf4))
	sinkP = unsafe.Pointer(new(pf5))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf1))
	sinkP = unsafe.Pointer(new(pf2))
	sinkP = unsafe.Pointer(new(pf3))
	sinkP = unsafe.Pointer(new(pf4))
	sinkP = unsafe.Pointer(new(pf5))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf1))
	sinkP = unsafe.Pointer(new(pf2))
	sinkP = unsafe.Pointer(new(pf3))
	sinkP = unsafe.Pointer(new(pf4))
	sinkP = unsafe.Pointer(new(pf5))
}

func arenaPF24(a *Arena) {
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf1](a))
	sinkP = unsafe.Pointer(New[pf2](a))
	sinkP = unsafe.Pointer(New[pf3](a))
	sinkP = unsafe.Pointer(New[pf4](a))
	sinkP = unsafe.Pointer(New[pf5](a))
	sinkP = unsafe.Pointer(New[pf6](a))
	sinkP = unsafe.Pointer(New[pf7](a))
	sinkP = unsafe.Pointer(New[pf8](a))
	sinkP = unsafe.Pointer(New[pf9](a))
	sinkP = unsafe.Pointer(New[pf10](a))
	sinkP = unsafe.Pointer(New[pf11](a))
	sinkP = unsafe.Pointer(New[pf12](a))
	sinkP = unsafe.Pointer(New[pf13](a))
	sinkP = unsafe.Pointer(New[pf14](a))
	sinkP = unsafe.Pointer(New[pf15](a))
	sinkP = unsafe.Pointer(New[pf16](a))
	sinkP = unsafe.Pointer(New[pf17](a))
	sinkP = unsafe.Pointer(New[pf18](a))
	sinkP = unsafe.Pointer(New[pf19](a))
	sinkP = unsafe.Pointer(New[pf20](a))
	sinkP = unsafe.Pointer(New[pf21](a))
	sinkP = unsafe.Pointer(New[pf22](a))
	sinkP = unsafe.Pointer(New[pf23](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf1](a))
	sinkP = unsafe.Pointer(New[pf2](a))
	sinkP = unsafe.Pointer(New[pf3](a))
	sinkP = unsafe.Pointer(New[pf4](a))
	sinkP = unsafe.Pointer(New[pf5](a))
	sinkP = unsafe.Pointer(New[pf6](a))
	sinkP = unsafe.Pointer(New[pf7](a))
	sinkP = unsafe.Pointer(New[pf8](a))
	sinkP = unsafe.Pointer(New[pf9](a))
	sinkP = unsafe.Pointer(New[pf10](a))
	sinkP = unsafe.Pointer(New[pf11](a))
	sinkP = unsafe.Pointer(New[pf12](a))
	sinkP = unsafe.Pointer(New[pf13](a))
	sinkP = unsafe.Pointer(New[pf14](a))
	sinkP = unsafe.Pointer(New[pf15](a))
	sinkP = unsafe.Pointer(New[pf16](a))
	sinkP = unsafe.Pointer(New[pf17](a))
	sinkP = unsafe.Pointer(New[pf18](a))
	sinkP = unsafe.Pointer(New[pf19](a))
	sinkP = unsafe.Pointer(New[pf20](a))
	sinkP = unsafe.Pointer(New[pf21](a))
	sinkP = unsafe.Pointer(New[pf22](a))
	sinkP = unsafe.Pointer(New[pf23](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf1](a))
	sinkP = unsafe.Pointer(New[pf2](a))
	sinkP = unsafe.Pointer(New[pf3](a))
	sinkP = unsafe.Pointer(New[pf4](a))
	sinkP = unsafe.Pointer(New[pf5](a))
	sinkP = unsafe.Pointer(New[pf6](a))
	sinkP = unsafe.Pointer(New[pf7](a))
	sinkP = unsafe.Pointer(New[pf8](a))
	sinkP = unsafe.Pointer(New[pf9](a))
	sinkP = unsafe.Pointer(New[pf10](a))
	sinkP = unsafe.Pointer(New[pf11](a))
	sinkP = unsafe.Pointer(New[pf12](a))
	sinkP = unsafe.Pointer(New[pf13](a))
	sinkP = unsafe.Pointer(New[pf14](a))
	sinkP = unsafe.Pointer(New[pf15](a))
}

func heapPF24() {
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf1))
	sinkP = unsafe.Pointer(new(pf2))
	sinkP = unsafe.Pointer(new(pf3))
	sinkP = unsafe.Pointer(new(pf4))
	sinkP = unsafe.Pointer(new(pf5))
	sinkP = unsafe.Pointer(new(pf6))
	sinkP = unsafe.Pointer(new(pf7))
	sinkP = unsafe.Pointer(new(pf8))
	sinkP = unsafe.Pointer(new(pf9))
	sinkP = unsafe.Pointer(new(pf10))
	sinkP = unsafe.Pointer(new(pf11))
	sinkP = unsafe.Pointer(new(pf12))
	sinkP = unsafe.Pointer(new(pf13))
	sinkP = unsafe.Pointer(new(pf14))
	sinkP = unsafe.Pointer(new(pf15))
	sinkP = unsafe.Pointer(new(pf16))
	sinkP = unsafe.Pointer(new(pf17))
	sinkP = unsafe.Pointer(new(pf18))
	sinkP = unsafe.Pointer(new(pf19))
	sinkP = unsafe.Pointer(new(pf20))
	sinkP = unsafe.Pointer(new(pf21))
	sinkP = unsafe.Pointer(new(pf22))
	sinkP = unsafe.Pointer(new(pf23))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf1))
	sinkP = unsafe.Pointer(new(pf2))
	sinkP = unsafe.Pointer(new(pf3))
	sinkP = unsafe.Pointer(new(pf4))
	sinkP = unsafe.Pointer(new(pf5))
	sinkP = unsafe.Pointer(new(pf6))
	sinkP = unsafe.Pointer(new(pf7))
	sinkP = unsafe.Pointer(new(pf8))
	sinkP = unsafe.Pointer(new(pf9))
	sinkP = unsafe.Pointer(new(pf10))
	sinkP = unsafe.Pointer(new(pf11))
	sinkP = unsafe.Pointer(new(pf12))
	sinkP = unsafe.Pointer(new(pf13))
	sinkP = unsafe.Pointer(new(pf14))
	sinkP = unsafe.Pointer(new(pf15))
	sinkP = unsafe.Pointer(new(pf16))
	sinkP = unsafe.Pointer(new(pf17))
	sinkP = unsafe.Pointer(new(pf18))
	sinkP = unsafe.Pointer(new(pf19))
	sinkP = unsafe.Pointer(new(pf20))
	sinkP = unsafe.Pointer(new(pf21))
	sinkP = unsafe.Pointer(new(pf22))
	sinkP = unsafe.Pointer(new(pf23))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf1))
	sinkP = unsafe.Pointer(new(pf2))
	sinkP = unsafe.Pointer(new(pf3))
	sinkP = unsafe.Pointer(new(pf4))
	sinkP = unsafe.Pointer(new(pf5))
	sinkP = unsafe.Pointer(new(pf6))
	sinkP = unsafe.Pointer(new(pf7))
	sinkP = unsafe.Pointer(new(pf8))
	sinkP = unsafe.Pointer(new(pf9))
	sinkP = unsafe.Pointer(new(pf10))
	sinkP = unsafe.Pointer(new(pf11))
	sinkP = unsafe.Pointer(new(pf12))
	sinkP = unsafe.Pointer(new(pf13))
	sinkP = unsafe.Pointer(new(pf14))
	sinkP = unsafe.Pointer(new(pf15))
}

func arenaPF64(a *Arena) {
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf1](a))
	sinkP = unsafe.Pointer(New[pf2](a))
	sinkP = unsafe.Pointer(New[pf3](a))
	sinkP = unsafe.Pointer(New[pf4](a))
	sinkP = unsafe.Pointer(New[pf5](a))
	sinkP = unsafe.Pointer(New[pf6](a))
	sinkP = unsafe.Pointer(New[pf7](a))
	sinkP = unsafe.Pointer(New[pf8](a))
	sinkP = unsafe.Pointer(New[pf9](a))
	sinkP = unsafe.Pointer(New[pf10](a))
	sinkP = unsafe.Pointer(New[pf11](a))
	sinkP = unsafe.Pointer(New[pf12](a))
	sinkP = unsafe.Pointer(New[pf13](a))
	sinkP = unsafe.Pointer(New[pf14](a))
	sinkP = unsafe.Pointer(New[pf15](a))
	sinkP = unsafe.Pointer(New[pf16](a))
	sinkP = unsafe.Pointer(New[pf17](a))
	sinkP = unsafe.Pointer(New[pf18](a))
	sinkP = unsafe.Pointer(New[pf19](a))
	sinkP = unsafe.Pointer(New[pf20](a))
	sinkP = unsafe.Pointer(New[pf21](a))
	sinkP = unsafe.Pointer(New[pf22](a))
	sinkP = unsafe.Pointer(New[pf23](a))
	sinkP = unsafe.Pointer(New[pf24](a))
	sinkP = unsafe.Pointer(New[pf25](a))
	sinkP = unsafe.Pointer(New[pf26](a))
	sinkP = unsafe.Pointer(New[pf27](a))
	sinkP = unsafe.Pointer(New[pf28](a))
	sinkP = unsafe.Pointer(New[pf29](a))
	sinkP = unsafe.Pointer(New[pf30](a))
	sinkP = unsafe.Pointer(New[pf31](a))
	sinkP = unsafe.Pointer(New[pf32](a))
	sinkP = unsafe.Pointer(New[pf33](a))
	sinkP = unsafe.Pointer(New[pf34](a))
	sinkP = unsafe.Pointer(New[pf35](a))
	sinkP = unsafe.Pointer(New[pf36](a))
	sinkP = unsafe.Pointer(New[pf37](a))
	sinkP = unsafe.Pointer(New[pf38](a))
	sinkP = unsafe.Pointer(New[pf39](a))
	sinkP = unsafe.Pointer(New[pf40](a))
	sinkP = unsafe.Pointer(New[pf41](a))
	sinkP = unsafe.Pointer(New[pf42](a))
	sinkP = unsafe.Pointer(New[pf43](a))
	sinkP = unsafe.Pointer(New[pf44](a))
	sinkP = unsafe.Pointer(New[pf45](a))
	sinkP = unsafe.Pointer(New[pf46](a))
	sinkP = unsafe.Pointer(New[pf47](a))
	sinkP = unsafe.Pointer(New[pf48](a))
	sinkP = unsafe.Pointer(New[pf49](a))
	sinkP = unsafe.Pointer(New[pf50](a))
	sinkP = unsafe.Pointer(New[pf51](a))
	sinkP = unsafe.Pointer(New[pf52](a))
	sinkP = unsafe.Pointer(New[pf53](a))
	sinkP = unsafe.Pointer(New[pf54](a))
	sinkP = unsafe.Pointer(New[pf55](a))
	sinkP = unsafe.Pointer(New[pf56](a))
	sinkP = unsafe.Pointer(New[pf57](a))
	sinkP = unsafe.Pointer(New[pf58](a))
	sinkP = unsafe.Pointer(New[pf59](a))
	sinkP = unsafe.Pointer(New[pf60](a))
	sinkP = unsafe.Pointer(New[pf61](a))
	sinkP = unsafe.Pointer(New[pf62](a))
	sinkP = unsafe.Pointer(New[pf63](a))
}

func heapPF64() {
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf1))
	sinkP = unsafe.Pointer(new(pf2))
	sinkP = unsafe.Pointer(new(pf3))
	sinkP = unsafe.Pointer(new(pf4))
	sinkP = unsafe.Pointer(new(pf5))
	sinkP = unsafe.Pointer(new(pf6))
	sinkP = unsafe.Pointer(new(pf7))
	sinkP = unsafe.Pointer(new(pf8))
	sinkP = unsafe.Pointer(new(pf9))
	sinkP = unsafe.Pointer(new(pf10))
	sinkP = unsafe.Pointer(new(pf11))
	sinkP = unsafe.Pointer(new(pf12))
	sinkP = unsafe.Pointer(new(pf13))
	sinkP = unsafe.Pointer(new(pf14))
	sinkP = unsafe.Pointer(new(pf15))
	sinkP = unsafe.Pointer(new(pf16))
	sinkP = unsafe.Pointer(new(pf17))
	sinkP = unsafe.Pointer(new(pf18))
	sinkP = unsafe.Pointer(new(pf19))
	sinkP = unsafe.Pointer(new(pf20))
	sinkP = unsafe.Pointer(new(pf21))
	sinkP = unsafe.Pointer(new(pf22))
	sinkP = unsafe.Pointer(new(pf23))
	sinkP = unsafe.Pointer(new(pf24))
	sinkP = unsafe.Pointer(new(pf25))
	sinkP = unsafe.Pointer(new(pf26))
	sinkP = unsafe.Pointer(new(pf27))
	sinkP = unsafe.Pointer(new(pf28))
	sinkP = unsafe.Pointer(new(pf29))
	sinkP = unsafe.Pointer(new(pf30))
	sinkP = unsafe.Pointer(new(pf31))
	sinkP = unsafe.Pointer(new(pf32))
	sinkP = unsafe.Pointer(new(pf33))
	sinkP = unsafe.Pointer(new(pf34))
	sinkP = unsafe.Pointer(new(pf35))
	sinkP = unsafe.Pointer(new(pf36))
	sinkP = unsafe.Pointer(new(pf37))
	sinkP = unsafe.Pointer(new(pf38))
	sinkP = unsafe.Pointer(new(pf39))
	sinkP = unsafe.Pointer(new(pf40))
	sinkP = unsafe.Pointer(new(pf41))
	sinkP = unsafe.Pointer(new(pf42))
	sinkP = unsafe.Pointer(new(pf43))
	sinkP = unsafe.Pointer(new(pf44))
	sinkP = unsafe.Pointer(new(pf45))
	sinkP = unsafe.Pointer(new(pf46))
	sinkP = unsafe.Pointer(new(pf47))
	sinkP = unsafe.Pointer(new(pf48))
	sinkP = unsafe.Pointer(new(pf49))
	sinkP = unsafe.Pointer(new(pf50))
	sinkP = unsafe.Pointer(new(pf51))
	sinkP = unsafe.Pointer(new(pf52))
	sinkP = unsafe.Pointer(new(pf53))
	sinkP = unsafe.Pointer(new(pf54))
	sinkP = unsafe.Pointer(new(pf55))
	sinkP = unsafe.Pointer(new(pf56))
	sinkP = unsafe.Pointer(new(pf57))
	sinkP = unsafe.Pointer(new(pf58))
	sinkP = unsafe.Pointer(new(pf59))
	sinkP = unsafe.Pointer(new(pf60))
	sinkP = unsafe.Pointer(new(pf61))
	sinkP = unsafe.Pointer(new(pf62))
	sinkP = unsafe.Pointer(new(pf63))
}

func arenaPP8(a *Arena) {
	sinkP = unsafe.Pointer(New[pp0](a))
	sinkP = unsafe.Pointer(New[pp1](a))
	sinkP = unsafe.Pointer(New[pp2](a))
	sinkP = unsafe.Pointer(New[pp3](a))
	sinkP = unsafe.Pointer(New[pp4](a))
	sinkP = unsafe.Pointer(New[pp5](a))
	sinkP = unsafe.Pointer(New[pp6](a))
	sinkP = unsafe.Pointer(New[pp7](a))
	sinkP = unsafe.Pointer(New[pp0](a))
	sinkP = unsafe.Pointer(New[pp1](a))
	sinkP = unsafe.Pointer(New[pp2](a))
	sinkP = unsafe.Pointer(New[pp3](a))
	sinkP = unsafe.Pointer(New[pp4](a))
	sinkP = unsafe.Pointer(New[pp5](a))
	sinkP = unsafe.Pointer(New[pp6](a))
	sinkP = unsafe.Pointer(New[pp7](a))
	sinkP = unsafe.Pointer(New[pp0](a))
	sinkP = unsafe.Pointer(New[pp1](a))
	sinkP = unsafe.Pointer(New[pp2](a))
	sinkP = unsafe.Pointer(New[pp3](a))
	sinkP = unsafe.Pointer(New[pp4](a))
	sinkP = unsafe.Pointer(New[pp5](a))
	sinkP = unsafe.Pointer(New[pp6](a))
	sinkP = unsafe.Pointer(New[pp7](a))
	sinkP = unsafe.Pointer(New[pp0](a))
	sinkP = unsafe.Pointer(New[pp1](a))
	sinkP = unsafe.Pointer(New[pp2](a))
	sinkP = unsafe.Pointer(New[pp3](a))
	sinkP = unsafe.Pointer(New[pp4](a))
	sinkP = unsafe.Pointer(New[pp5](a))
	sinkP = unsafe.Pointer(New[pp6](a))
	sinkP = unsafe.Pointer(New[pp7](a))
	sinkP = unsafe.Pointer(New[pp0](a))
	sinkP = unsafe.Pointer(New[pp1](a))
	sinkP = unsafe.Pointer(New[pp2](a))
	sinkP = unsafe.Pointer(New[pp3](a))
	sinkP = unsafe.Pointer(New[pp4](a))
	sinkP = unsafe.Pointer(New[pp5](a))
	sinkP = unsafe.Pointer(New[pp6](a))
	sinkP = unsafe.Pointer(New[pp7](a))
	sinkP = unsafe.Pointer(New[pp0](a))
	sinkP = unsafe.Pointer(New[pp1](a))
	sinkP = unsafe.Pointer(New[pp2](a))
	sinkP = unsafe.Pointer(New[pp3](a))
	sinkP = unsafe.Pointer(New[pp4](a))
	sinkP = unsafe.Pointer(New[pp5](a))
	sinkP = unsafe.Pointer(New[pp6](a))
	sinkP = unsafe.Pointer(New[pp7](a))
	sinkP = unsafe.Pointer(New[pp0](a))
	sinkP = unsafe.Pointer(New[pp1](a))
	sinkP = unsafe.Pointer(New[pp2](a))
	sinkP = unsafe.Pointer(New[pp3](a))
	sinkP = unsafe.Pointer(New[pp4](a))
	sinkP = unsafe.Pointer(New[pp5](a))
	sinkP = unsafe.Pointer(New[pp6](a))
	sinkP = unsafe.Pointer(New[pp7](a))
	sinkP = unsafe.Pointer(New[pp0](a))
	sinkP = unsafe.Pointer(New[pp1](a))
	sinkP = unsafe.Pointer(New[pp2](a))
	sinkP = unsafe.Pointer(New[pp3](a))
	sinkP = unsafe.Pointer(New[pp4](a))
	sinkP = unsafe.Pointer(New[pp5](a))
	sinkP = unsafe.Pointer(New[pp6](a))
	sinkP = unsafe.Pointer(New[pp7](a))
}

func heapPP8() {
	sinkP = unsafe.Pointer(new(pp0))
	sinkP = unsafe.Pointer(new(pp1))
	sinkP = unsafe.Pointer(new(pp2))
	sinkP = unsafe.Pointer(new(pp3))
	sinkP = unsafe.Pointer(new(pp4))
	sinkP = unsafe.Pointer(new(pp5))
	sinkP = unsafe.Pointer(new(pp6))
	sinkP = unsafe.Pointer(new(pp7))
	sinkP = unsafe.Pointer(new(pp0))
	sinkP = unsafe.Pointer(new(pp1))
	sinkP = unsafe.Pointer(new(pp2))
	sinkP = unsafe.Pointer(new(pp3))
	sinkP = unsafe.Pointer(new(pp4))
	sinkP = unsafe.Pointer(new(pp5))
	sinkP = unsafe.Pointer(new(pp6))
	sinkP = unsafe.Pointer(new(pp7))
	sinkP = unsafe.Pointer(new(pp0))
	sinkP = unsafe.Pointer(new(pp1))
	sinkP = unsafe.Pointer(new(pp2))
	sinkP = unsafe.Pointer(new(pp3))
	sinkP = unsafe.Pointer(new(pp4))
	sinkP = unsafe.Pointer(new(pp5))
	sinkP = unsafe.Pointer(new(pp6))
	sinkP = unsafe.Pointer(new(pp7))
	sinkP = unsafe.Pointer(new(pp0))
	sinkP = unsafe.Pointer(new(pp1))
	sinkP = unsafe.Pointer(new(pp2))
	sinkP = unsafe.Pointer(new(pp3))
	sinkP = unsafe.Pointer(new(pp4))
	sinkP = unsafe.Pointer(new(pp5))
	sinkP = unsafe.Pointer(new(pp6))
	sinkP = unsafe.Pointer(new(pp7))
	sinkP = unsafe.Pointer(new(pp0))
	sinkP = unsafe.Pointer(new(pp1))
	sinkP = unsafe.Pointer(new(pp2))
	sinkP = unsafe.Pointer(new(pp3))
	sinkP = unsafe.Pointer(new(pp4))
	sinkP = unsafe.Pointer(new(pp5))
	sinkP = unsafe.Pointer(new(pp6))
	sinkP = unsafe.Pointer(new(pp7))
	sinkP = unsafe.Pointer(new(pp0))
	sinkP = unsafe.Pointer(new(pp1))
	sinkP = unsafe.Pointer(new(pp2))
	sinkP = unsafe.Pointer(new(pp3))
	sinkP = unsafe.Pointer(new(pp4))
	sinkP = unsafe.Pointer(new(pp5))
	sinkP = unsafe.Pointer(new(pp6))
	sinkP = unsafe.Pointer(new(pp7))
	sinkP = unsafe.Pointer(new(pp0))
	sinkP = unsafe.Pointer(new(pp1))
	sinkP = unsafe.Pointer(new(pp2))
	sinkP = unsafe.Pointer(new(pp3))
	sinkP = unsafe.Pointer(new(pp4))
	sinkP = unsafe.Pointer(new(pp5))
	sinkP = unsafe.Pointer(new(pp6))
	sinkP = unsafe.Pointer(new(pp7))
	sinkP = unsafe.Pointer(new(pp0))
	sinkP = unsafe.Pointer(new(pp1))
	sinkP = unsafe.Pointer(new(pp2))
	sinkP = unsafe.Pointer(new(pp3))
	sinkP = unsafe.Pointer(new(pp4))
	sinkP = unsafe.Pointer(new(pp5))
	sinkP = unsafe.Pointer(new(pp6))
	sinkP = unsafe.Pointer(new(pp7))
}

func arenaPP32(a *Arena) {
	sinkP = unsafe.Pointer(New[pp0](a))
	sinkP = unsafe.Pointer(New[pp1](a))
	sinkP = unsafe.Pointer(New[pp2](a))
	sinkP = unsafe.Pointer(New[pp3](a))
	sinkP = unsafe.Pointer(New[pp4](a))
	sinkP = unsafe.Pointer(New[pp5](a))
	sinkP = unsafe.Pointer(New[pp6](a))
	sinkP = unsafe.Pointer(New[pp7](a))
	sinkP = unsafe.Pointer(New[pp8](a))
	sinkP = unsafe.Pointer(New[pp9](a))
	sinkP = unsafe.Pointer(New[pp10](a))
	sinkP = unsafe.Pointer(New[pp11](a))
	sinkP = unsafe.Pointer(New[pp12](a))
	sinkP = unsafe.Pointer(New[pp13](a))
	sinkP = unsafe.Pointer(New[pp14](a))
	sinkP = unsafe.Pointer(New[pp15](a))
	sinkP = unsafe.Pointer(New[pp16](a))
	sinkP = unsafe.Pointer(New[pp17](a))
	sinkP = unsafe.Pointer(New[pp18](a))
	sinkP = unsafe.Pointer(New[pp19](a))
	sinkP = unsafe.Pointer(New[pp20](a))
	sinkP = unsafe.Pointer(New[pp21](a))
	sinkP = unsafe.Pointer(New[pp22](a))
	sinkP = unsafe.Pointer(New[pp23](a))
	sinkP = unsafe.Pointer(New[pp24](a))
	sinkP = unsafe.Pointer(New[pp25](a))
	sinkP = unsafe.Pointer(New[pp26](a))
	sinkP = unsafe.Pointer(New[pp27](a))
	sinkP = unsafe.Pointer(New[pp28](a))
	sinkP = unsafe.Pointer(New[pp29](a))
	sinkP = unsafe.Pointer(New[pp30](a))
	sinkP = unsafe.Pointer(New[pp31](a))
	sinkP = unsafe.Pointer(New[pp0](a))
	sinkP = unsafe.Pointer(New[pp1](a))
	sinkP = unsafe.Pointer(New[pp2](a))
	sinkP = unsafe.Pointer(New[pp3](a))
	sinkP = unsafe.Pointer(New[pp4](a))
	sinkP = unsafe.Pointer(New[pp5](a))
	sinkP = unsafe.Pointer(New[pp6](a))
	sinkP = unsafe.Pointer(New[pp7](a))
	sinkP = unsafe.Pointer(New[pp8](a))
	sinkP = unsafe.Pointer(New[pp9](a))
	sinkP = unsafe.Pointer(New[pp10](a))
	sinkP = unsafe.Pointer(New[pp11](a))
	sinkP = unsafe.Pointer(New[pp12](a))
	sinkP = unsafe.Pointer(New[pp13](a))
	sinkP = unsafe.Pointer(New[pp14](a))
	sinkP = unsafe.Pointer(New[pp15](a))
	sinkP = unsafe.Pointer(New[pp16](a))
	sinkP = unsafe.Pointer(New[pp17](a))
	sinkP = unsafe.Pointer(New[pp18](a))
	sinkP = unsafe.Pointer(New[pp19](a))
	sinkP = unsafe.Pointer(New[pp20](a))
	sinkP = unsafe.Pointer(New[pp21](a))
	sinkP = unsafe.Pointer(New[pp22](a))
	sinkP = unsafe.Pointer(New[pp23](a))
	sinkP = unsafe.Pointer(New[pp24](a))
	sinkP = unsafe.Pointer(New[pp25](a))
	sinkP = unsafe.Pointer(New[pp26](a))
	sinkP = unsafe.Pointer(New[pp27](a))
	sinkP = unsafe.Pointer(New[pp28](a))
	sinkP = unsafe.Pointer(New[pp29](a))
	sinkP = unsafe.Pointer(New[pp30](a))
	sinkP = unsafe.Pointer(New[pp31](a))
}

func heapPP32() {
	sinkP = unsafe.Pointer(new(pp0))
	sinkP = unsafe.Pointer(new(pp1))
	sinkP = unsafe.Pointer(new(pp2))
	sinkP = unsafe.Pointer(new(pp3))
	sinkP = unsafe.Pointer(new(pp4))
	sinkP = unsafe.Pointer(new(pp5))
	sinkP = unsafe.Pointer(new(pp6))
	sinkP = unsafe.Pointer(new(pp7))
	sinkP = unsafe.Pointer(new(pp8))
	sinkP = unsafe.Pointer(new(pp9))
	sinkP = unsafe.Pointer(new(pp10))
	sinkP = unsafe.Pointer(new(pp11))
	sinkP = unsafe.Pointer(new(pp12))
	sinkP = unsafe.Pointer(new(pp13))
	sinkP = unsafe.Pointer(new(pp14))
	sinkP = unsafe.Pointer(new(pp15))
	sinkP = unsafe.Pointer(new(pp16))
	sinkP = unsafe.Pointer(new(pp17))
	sinkP = unsafe.Pointer(new(pp18))
	sinkP = unsafe.Pointer(new(pp19))
	sinkP = unsafe.Pointer(new(pp20))
	sinkP = unsafe.Pointer(new(pp21))
	sinkP = unsafe.Pointer(new(pp22))
	sinkP = unsafe.Pointer(new(pp23))
	sinkP = unsafe.Pointer(new(pp24))
	sinkP = unsafe.Pointer(new(pp25))
	sinkP = unsafe.Pointer(new(pp26))
	sinkP = unsafe.Pointer(new(pp27))
	sinkP = unsafe.Pointer(new(pp28))
	sinkP = unsafe.Pointer(new(pp29))
	sinkP = unsafe.Pointer(new(pp30))
	sinkP = unsafe.Pointer(new(pp31))
	sinkP = unsafe.Pointer(new(pp0))
	sinkP = unsafe.Pointer(new(pp1))
	sinkP = unsafe.Pointer(new(pp2))
	sinkP = unsafe.Pointer(new(pp3))
	sinkP = unsafe.Pointer(new(pp4))
	sinkP = unsafe.Pointer(new(pp5))
	sinkP = unsafe.Pointer(new(pp6))
	sinkP = unsafe.Pointer(new(pp7))
	sinkP = unsafe.Pointer(new(pp8))
	sinkP = unsafe.Pointer(new(pp9))
	sinkP = unsafe.Pointer(new(pp10))
	sinkP = unsafe.Pointer(new(pp11))
	sinkP = unsafe.Pointer(new(pp12))
	sinkP = unsafe.Pointer(new(pp13))
	sinkP = unsafe.Pointer(new(pp14))
	sinkP = unsafe.Pointer(new(pp15))
	sinkP = unsafe.Pointer(new(pp16))
	sinkP = unsafe.Pointer(new(pp17))
	sinkP = unsafe.Pointer(new(pp18))
	sinkP = unsafe.Pointer(new(pp19))
	sinkP = unsafe.Pointer(new(pp20))
	sinkP = unsafe.Pointer(new(pp21))
	sinkP = unsafe.Pointer(new(pp22))
	sinkP = unsafe.Pointer(new(pp23))
	sinkP = unsafe.Pointer(new(pp24))
	sinkP = unsafe.Pointer(new(pp25))
	sinkP = unsafe.Pointer(new(pp26))
	sinkP = unsafe.Pointer(new(pp27))
	sinkP = unsafe.Pointer(new(pp28))
	sinkP = unsafe.Pointer(new(pp29))
	sinkP = unsafe.Pointer(new(pp30))
	sinkP = unsafe.Pointer(new(pp31))
}

func arenaMix(a *Arena) {
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf1](a))
	sinkP = unsafe.Pointer(New[pp0](a))
	sinkP = unsafe.Pointer(New[pf2](a))
	sinkP = unsafe.Pointer(New[pf3](a))
	sinkP = unsafe.Pointer(New[pp1](a))
	sinkP = unsafe.Pointer(New[pf4](a))
	sinkP = unsafe.Pointer(New[pf5](a))
	sinkP = unsafe.Pointer(New[pp2](a))
	sinkP = unsafe.Pointer(New[pf6](a))
	sinkP = unsafe.Pointer(New[pf7](a))
	sinkP = unsafe.Pointer(New[pp3](a))
	sinkP = unsafe.Pointer(New[pf8](a))
	sinkP = unsafe.Pointer(New[pf9](a))
	sinkP = unsafe.Pointer(New[pp4](a))
	sinkP = unsafe.Pointer(New[pf10](a))
	sinkP = unsafe.Pointer(New[pf11](a))
	sinkP = unsafe.Pointer(New[pp5](a))
	sinkP = unsafe.Pointer(New[pf12](a))
	sinkP = unsafe.Pointer(New[pf13](a))
	sinkP = unsafe.Pointer(New[pp6](a))
	sinkP = unsafe.Pointer(New[pf14](a))
	sinkP = unsafe.Pointer(New[pf15](a))
	sinkP = unsafe.Pointer(New[pp7](a))
	sinkP = unsafe.Pointer(New[pf0](a))
	sinkP = unsafe.Pointer(New[pf1](a))
	sinkP = unsafe.Pointer(New[pp0](a))
	sinkP = unsafe.Pointer(New[pf2](a))
	sinkP = unsafe.Pointer(New[pf3](a))
	sinkP = unsafe.Pointer(New[pp1](a))
	sinkP = unsafe.Pointer(New[pf4](a))
	sinkP = unsafe.Pointer(New[pf5](a))
	sinkP = unsafe.Pointer(New[pp2](a))
	sinkP = unsafe.Pointer(New[pf6](a))
	sinkP = unsafe.Pointer(New[pf7](a))
	sinkP = unsafe.Pointer(New[pp3](a))
	sinkP = unsafe.Pointer(New[pf8](a))
	sinkP = unsafe.Pointer(New[pf9](a))
	sinkP = unsafe.Pointer(New[pp4](a))
	sinkP = unsafe.Pointer(New[pf10](a))
	sinkP = unsafe.Pointer(New[pf11](a))
	sinkP = unsafe.Pointer(New[pp5](a))
	sinkP = unsafe.Pointer(New[pf12](a))
	sinkP = unsafe.Pointer(New[pf13](a))
	sinkP = unsafe.Pointer(New[pp6](a))
	sinkP = unsafe.Pointer(New[pf14](a))
	sinkP = unsafe.Pointer(New[pf15](a))
	sinkP = unsafe.Pointer(New[pp7](a))
}

func heapMix() {
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf1))
	sinkP = unsafe.Pointer(new(pp0))
	sinkP = unsafe.Pointer(new(pf2))
	sinkP = unsafe.Pointer(new(pf3))
	sinkP = unsafe.Pointer(new(pp1))
	sinkP = unsafe.Pointer(new(pf4))
	sinkP = unsafe.Pointer(new(pf5))
	sinkP = unsafe.Pointer(new(pp2))
	sinkP = unsafe.Pointer(new(pf6))
	sinkP = unsafe.Pointer(new(pf7))
	sinkP = unsafe.Pointer(new(pp3))
	sinkP = unsafe.Pointer(new(pf8))
	sinkP = unsafe.Pointer(new(pf9))
	sinkP = unsafe.Pointer(new(pp4))
	sinkP = unsafe.Pointer(new(pf10))
	sinkP = unsafe.Pointer(new(pf11))
	sinkP = unsafe.Pointer(new(pp5))
	sinkP = unsafe.Pointer(new(pf12))
	sinkP = unsafe.Pointer(new(pf13))
	sinkP = unsafe.Pointer(new(pp6))
	sinkP = unsafe.Pointer(new(pf14))
	sinkP = unsafe.Pointer(new(pf15))
	sinkP = unsafe.Pointer(new(pp7))
	sinkP = unsafe.Pointer(new(pf0))
	sinkP = unsafe.Pointer(new(pf1))
	sinkP = unsafe.Pointer(new(pp0))
	sinkP = unsafe.Pointer(new(pf2))
	sinkP = unsafe.Pointer(new(pf3))
	sinkP = unsafe.Pointer(new(pp1))
	sinkP = unsafe.Pointer(new(pf4))
	sinkP = unsafe.Pointer(new(pf5))
	sinkP = unsafe.Pointer(new(pp2))
	sinkP = unsafe.Pointer(new(pf6))
	sinkP = unsafe.Pointer(new(pf7))
	sinkP = unsafe.Pointer(new(pp3))
	sinkP = unsafe.Pointer(new(pf8))
	sinkP = unsafe.Pointer(new(pf9))
	sinkP = unsafe.Pointer(new(pp4))
	sinkP = unsafe.Pointer(new(pf10))
	sinkP = unsafe.Pointer(new(pf11))
	sinkP = unsafe.Pointer(new(pp5))
	sinkP = unsafe.Pointer(new(pf12))
	sinkP = unsafe.Pointer(new(pf13))
	sinkP = unsafe.Pointer(new(pp6))
	sinkP = unsafe.Pointer(new(pf14))
	sinkP = unsafe.Pointer(new(pf15))
	sinkP = unsafe.Pointer(new(pp7))
}

// manyTypes runs one round-robin benchmark: each call of arenaFn or heapFn
// allocates k objects of 32 bytes, cycling through its types (the same
// number of objects per call for every number of types, so that the cost
// of the call itself is spread alike).
func manyTypes(b *testing.B, k int, arenaFn func(*Arena), heapFn func()) {
	b.Run("impl=arena", func(b *testing.B) {
		a := NewArena()
		arenaFn(a) // install the types
		a.Reset()
		b.ReportAllocs()
		b.ResetTimer()
		n := 0
		for i := 0; i < b.N; i += k {
			arenaFn(a)
			if n += 32 * k; n >= manyResetBytes {
				a.Reset()
				n = 0
			}
		}
	})
	b.Run("impl=heap", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i += k {
			heapFn()
		}
	})
}

func BenchmarkManyTypes(b *testing.B) {
	for _, c := range []struct {
		name  string
		k     int
		arena func(*Arena)
		heap  func()
	}{
		{"pointerfree=1", 64, arenaPF1, heapPF1},
		{"pointerfree=6", 60, arenaPF6, heapPF6},
		{"pointerfree=24", 64, arenaPF24, heapPF24},
		{"pointerfree=64", 64, arenaPF64, heapPF64},
		{"pointers=8", 64, arenaPP8, heapPP8},
		{"pointers=32", 64, arenaPP32, heapPP32},
		{"mix=16+8", 48, arenaMix, heapMix},
	} {
		b.Run(c.name, func(b *testing.B) { manyTypes(b, c.k, c.arena, c.heap) })
	}
}
