// Package ctxlabels reads the pprof labels of a context (set with
// runtime/pprof.WithLabels or pprof.Do) as a [hooks.Labels] set: package
// arena's Pool labels its arenas with them.
package ctxlabels

import (
	"context"
	"hash/maphash"
	"runtime/pprof"
	"sync/atomic"

	"github.com/arenaprof/arenaprof/hooks"
)

// cacheSize is the number of label sets FromContext remembers. A service
// labels its requests with few distinct sets (a route, a tenant); a set
// pushed out by another one whose hash takes its slot is built again the
// next time, so the bound costs speed, never correctness.
const cacheSize = 256

// entry is one remembered label set: the context's pairs as pprof.ForLabels
// gives them (sorted by key) and what they became.
type entry struct {
	hash   uint64
	kv     []string
	labels hooks.Labels
}

var (
	// cache is direct-mapped by hash; entries are immutable once stored.
	cache [cacheSize]atomic.Pointer[entry]
	seed  = maphash.MakeSeed()
)

// FromContext returns the pprof labels of ctx as a label set. A set met
// recently comes from a bounded cache and costs no allocation: building a
// set (a map, a sort, a canonical key) costs about 500 ns and six
// allocations, which a labelled Pool.Get would pay on every request.
func FromContext(ctx context.Context) hooks.Labels {
	l, hit, has := Cached(ctx)
	if hit || !has {
		return l
	}
	h, _ := hashLabels(ctx)
	kv := pairs(ctx)
	l = hooks.NewLabels(kv...)
	cache[h%cacheSize].Store(&entry{hash: h, kv: kv, labels: l})
	return l
}

// Cached returns the pprof labels of ctx if the cache holds their set
// (hit), without building or storing anything; has reports whether ctx
// has labels at all. A set seen once per request (a span's ID) would only
// push the sets that recur out of the cache: a caller that expects such
// sets resolves them later, and only when needed, with [Build].
func Cached(ctx context.Context) (l hooks.Labels, hit, has bool) {
	if ctx == nil {
		return hooks.Labels{}, false, false
	}
	h, n := hashLabels(ctx)
	if n == 0 {
		return hooks.Labels{}, false, false
	}
	if e := cache[h%cacheSize].Load(); e != nil && e.hash == h && e.matches(ctx, n) {
		return e.labels, true, true
	}
	return hooks.Labels{}, false, true
}

// Build returns the pprof labels of ctx as a new label set, leaving the
// cache alone.
func Build(ctx context.Context) hooks.Labels {
	if ctx == nil {
		return hooks.Labels{}
	}
	return hooks.NewLabels(pairs(ctx)...)
}

// pairs returns ctx's label pairs in the order ForLabels gives them.
func pairs(ctx context.Context) []string {
	var kv []string
	pprof.ForLabels(ctx, func(k, v string) bool {
		kv = append(kv, k, v)
		return true
	})
	return kv
}

// hashLabels returns a hash of ctx's label pairs, in the order ForLabels
// gives them, and their number.
func hashLabels(ctx context.Context) (h uint64, n int) {
	pprof.ForLabels(ctx, func(k, v string) bool {
		// Each string's hash is mixed in with its position, so that
		// moving text between a key and its value changes the hash.
		h = (h ^ maphash.String(seed, k)) * 0x100000001b3
		h = (h ^ maphash.String(seed, v) ^ 0x9e3779b97f4a7c15) * 0x100000001b3
		n++
		return true
	})
	return h, n
}

// matches reports whether ctx holds exactly e's n pairs, in order.
func (e *entry) matches(ctx context.Context, n int) bool {
	if len(e.kv) != 2*n {
		return false
	}
	i, ok := 0, true
	pprof.ForLabels(ctx, func(k, v string) bool {
		if i+1 >= len(e.kv) || e.kv[i] != k || e.kv[i+1] != v {
			ok = false
			return false
		}
		i += 2
		return true
	})
	return ok && i == len(e.kv)
}
