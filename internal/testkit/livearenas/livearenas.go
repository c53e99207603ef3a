// Package livearenas makes live arenas from known allocation sites, for
// the tests of live-arenas profiles (package export and its builder).
package livearenas

import (
	"context"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/hooks"
)

//go:noinline
func holdSmall(label string) *arena.Arena {
	a := arena.NewArena(arena.WithChunkSize(4096), arena.WithLabels(hooks.NewLabels("test", label)))
	arena.MakeSlice[byte](a, 1000, 1000)
	return a
}

//go:noinline
func holdLarge(label string) *arena.Arena {
	a := arena.NewArena(arena.WithChunkSize(4096), arena.WithLabels(hooks.NewLabels("test", label)))
	arena.MakeSlice[byte](a, 3000, 3000)
	arena.MakeSlice[byte](a, 3000, 3000)
	return a
}

//go:noinline
func takeForRequest(p *arena.Pool, label string) *arena.Arena {
	ctx := pprof.WithLabels(context.Background(), pprof.Labels("test", label))
	a := p.Get(ctx)
	arena.MakeSlice[byte](a, 500, 500)
	return a
}

// Hold makes arenas labelled test=label from known sites, the leaf
// functions of their stacks: two held by holdSmall (1000 bytes used of a
// 4096-byte chunk each), one by holdLarge (6000 bytes in two chunks), one
// made by holdSmall and freed, one taken by takeForRequest from the pool
// it returns (504 bytes used) and two of that pool idle. The test's
// cleanup frees them all.
func Hold(t testing.TB, label string) *arena.Pool {
	t.Helper()
	small := []*arena.Arena{holdSmall(label), holdSmall(label)}
	large := holdLarge(label)
	holdSmall(label).Free()
	p := arena.NewPool(arena.WithChunkSize(4096))
	taken := []*arena.Arena{takeForRequest(p, label), takeForRequest(p, label), takeForRequest(p, label)}
	runtime.GC() // sync.Pool drops idle arenas at collections: none from now on
	p.Put(taken[1])
	p.Put(taken[2])
	t.Cleanup(func() {
		for _, a := range small {
			a.Free()
		}
		large.Free()
		p.Put(taken[0])
		runtime.KeepAlive(p)
	})
	return p
}

// Small returns an arena of holdSmall's site labelled test=label, for the
// caller to free.
func Small(label string) *arena.Arena { return holdSmall(label) }

// Large returns an arena of holdLarge's site labelled test=label, for the
// caller to free.
func Large(label string) *arena.Arena { return holdLarge(label) }
