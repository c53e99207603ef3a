package arenajson

import (
	"encoding/json"
	"reflect"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/arenaprof/arenaprof/arena"
)

// TestGarbageCollection decodes the corpora into arenas (values with
// pointers in typed slabs, pointer-free ones in byte chunks) while another
// goroutine runs the garbage collector without pause, and compares the
// values with encoding/json's after more collections: a pointer the collector did not see (a value
// with pointers in untyped memory, a store without a write barrier) would
// show as a changed value or a crash. Checked arenas too, whose
// pointer-free memory is mapped apart from the Go heap.
func TestGarbageCollection(t *testing.T) {
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			runtime.GC()
		}
	}()
	defer func() { stop.Store(true); <-done }()
	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	for _, checked := range []bool{false, true} {
		for _, c := range corpora {
			data := c.data()
			want := c.new()
			if err := json.Unmarshal(data, want); err != nil {
				t.Fatal(err)
			}
			wantAny := new(any)
			if err := json.Unmarshal(data, wantAny); err != nil {
				t.Fatal(err)
			}
			a := arena.NewArena(arena.WithChecked(checked))
			for range rounds {
				a.Reset()
				got, gotAny := c.new(), new(any)
				if err := Unmarshal(a, data, got); err != nil {
					t.Fatal(err)
				}
				if err := Unmarshal(a, data, gotAny); err != nil {
					t.Fatal(err)
				}
				runtime.GC()
				runtime.GC()
				if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotAny, wantAny) {
					t.Fatalf("%s (checked %v): values changed after collections", c.name, checked)
				}
			}
			a.Free()
		}
	}
}
