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

// cacheSize is the number of label sets the cache holds. A service
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

// Cached returns the pprof labels of ctx when that costs no allocation
// (ok): ctx has none, or the cache holds their set. It never builds a
// set: a set not cached may be one seen once per request (a span's ID),
// which the caller builds later, and only if needed, with [Resolve].
func Cached(ctx context.Context) (l hooks.Labels, ok bool) {
	if ctx == nil {
		return hooks.Labels{}, true
	}
	h, n := hashLabels(ctx)
	if n == 0 {
		return hooks.Labels{}, true
	}
	if e := cache[h%cacheSize].Load(); e != nil && e.hash == h && e.matches(ctx, n) {
		return e.labels, true
	}
	return hooks.Labels{}, false
}

// Resolve builds the pprof labels of ctx, and caches the set if Resolve
// met it before (a set that recurs, such as a route's), so that [Cached]
// finds it from then on. A set met once (a span's ID) is only noted by its
// hash: it does not push the sets that recur out of the cache.
func Resolve(ctx context.Context) hooks.Labels {
	if l, ok := Cached(ctx); ok {
		return l
	}
	h, _ := hashLabels(ctx)
	kv := pairs(ctx)
	l := hooks.NewLabels(kv...)
	if s := &seen[h%seenSize]; s.Load() == h {
		cache[h%cacheSize].Store(&entry{hash: h, kv: kv, labels: l})
	} else {
		s.Store(h)
	}
	return l
}

// Hash returns the hash of ctx's pprof labels, which Resolve's cache
// uses: a set that changed has another hash, but for a collision (1 in
// 2^64 for sets of random strings).
func Hash(ctx context.Context) uint64 {
	h, _ := hashLabels(ctx)
	return h
}

// seenSize is the number of label-set hashes Resolve remembers, to tell
// a set that recurs from one seen once.
const seenSize = 1024

// seen holds the hashes of sets Resolve met and did not cache: a set is
// cached when Resolve meets it again before another set takes its slot.
var seen [seenSize]atomic.Uint64

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
