package holdings_test

import (
	"testing"

	"github.com/arenaprof/arenaprof/internal/holdings"
)

// TestReadWithoutArena: a program that does not link package arena has no
// arenas.
func TestReadWithoutArena(t *testing.T) {
	if hs := holdings.Read(); hs != nil {
		t.Fatalf("Read() = %v without package arena, want nil", hs)
	}
}

func TestSetReader(t *testing.T) {
	want := []holdings.Holding{{Arenas: 1, Reserved: 4096, Used: 100}}
	if old := holdings.SetReader(func() []holdings.Holding { return want }); old != nil {
		t.Errorf("SetReader replaced a reader without package arena")
	}
	if hs := holdings.Read(); len(hs) != 1 || hs[0].Reserved != 4096 || hs[0].Used != 100 {
		t.Fatalf("Read() = %v, want %v", hs, want)
	}
}
