package arena

import (
	"sync/atomic"
	"testing"

	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/testkit/hookstest"
)

// TestNoStartLag: an arena that took its slow path while nobody listened
// samples the bytes allocated right after a consumer registers, within the
// same chunk (no later slow path needed to notice the consumer). At mean
// 64, 32 KiB of 64-byte objects give about 512 events; P(no event) is
// (1-1/64)^32768, below 1e-200.
func TestNoStartLag(t *testing.T) {
	old := hooks.MeanBytes()
	defer hooks.SetMeanBytes(old)
	if err := hooks.SetMeanBytes(64); err != nil {
		t.Fatal(err)
	}
	a := NewArena()
	defer a.Free()
	New[obj8](a) // the first slow path, with nobody listening
	var n atomic.Int64
	id := a.id
	defer hooks.Register(hookstest.Func(func(e *hooks.Event) {
		if e.Arena == id {
			n.Add(1)
		}
	}))()
	for range 512 {
		New[[64]byte](a)
	}
	if n.Load() == 0 {
		t.Error("no event for 32 KiB allocated right after a consumer registered")
	}
}
