//go:build goexperiment.arenas

package bench

import (
	goarena "arena"
	"testing"
)

// goAllocs are the loop bodies of the benchmarks with Go's experimental
// arena package, by allocs.name.
var goAllocs = map[string]func(a *goarena.Arena){
	"new8":      func(a *goarena.Arena) { sink8 = goarena.New[obj8](a) },
	"new32":     func(a *goarena.Arena) { sink32 = goarena.New[obj32](a) },
	"new256":    func(a *goarena.Arena) { sink256 = goarena.New[obj256](a) },
	"newStr":    func(a *goarena.Arena) { sinkStr = goarena.New[objStr](a) },
	"slice64":   func(a *goarena.Arena) { sinkB = goarena.MakeSlice[byte](a, 64, 64) },
	"slice4096": func(a *goarena.Arena) { sinkB = goarena.MakeSlice[byte](a, 4096, 4096) },
}

// goArena returns the benchmark of the experimental arena for the loop body
// name. That arena has no Reset: the loop frees its arena and takes a new
// one every resetEvery allocations.
func goArena(name string) func(b *testing.B) {
	alloc := goAllocs[name]
	if alloc == nil {
		return nil
	}
	return func(b *testing.B) {
		a := goarena.NewArena()
		b.ReportAllocs()
		for i := range b.N {
			if i%resetEvery == 0 {
				a.Free()
				a = goarena.NewArena()
			}
			alloc(a)
		}
		a.Free()
	}
}

func TestGoArena(t *testing.T) {
	a := goarena.NewArena()
	defer a.Free()
	for name, alloc := range goAllocs {
		alloc(a)
		if goArena(name) == nil {
			t.Errorf("no benchmark for %s", name)
		}
	}
}
