package arena

import (
	"context"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/arenaprof/arenaprof/arena/internal/ctxlabels"
	"github.com/arenaprof/arenaprof/hooks"
)

// Pool hands arenas to goroutines for request-scoped use and takes them
// back. It is safe for concurrent use. The zero Pool makes arenas with the
// default options; [NewPool] sets others.
//
// Idle arenas are kept in a [sync.Pool]: the garbage collector may drop
// them, with their memory, between two uses.
type Pool struct {
	opts []Option
	p    sync.Pool
	rec  atomic.Pointer[poolRecord] // the pool in the registry of live arenas
	// merged caches the pool's labels merged with context labels (see
	// withLabels).
	merged [mergedCacheSize]atomic.Pointer[merged]
}

// NewPool returns a pool whose arenas are made with opts.
func NewPool(opts ...Option) *Pool {
	return &Pool{opts: opts}
}

// Get returns an empty arena for the caller's exclusive use, labelled with
// the pprof labels of ctx (see [runtime/pprof.WithLabels] and
// [runtime/pprof.Do]) on top of the pool's own labels. ctx may be nil.
// Give the arena back with [Pool.Put].
//
// A label set that recurs (a route's) costs Get nothing once cached. Any
// other (a set new on every request, such as a span's ID) is added to the
// arena's labels at its first event or first slow-path allocation (a new
// chunk), so that Get costs no allocation; until then the live arenas
// view shows the pool's labels. A set is cached when it was built for
// two arenas. Under a context from [ContextWithUsage] Get does not look
// the labels up: they are added at the first event or slow path.
// Under a context from [ContextWithUsage], the arena reports what it
// handed out when it is Reset or Put.
func (p *Pool) Get(ctx context.Context) *Arena {
	a, _ := p.p.Get().(*Arena)
	if a == nil {
		a = NewArena(p.opts...)
		a.base = a.labels
	}
	a.pooled = false
	a.labels = a.base
	if ctx != nil {
		// A label set in the cache is taken now; any other is built
		// when the arena first needs it (see resolveLabels), so that a
		// set new on every request (a span's ID) costs a Get no
		// allocation. A context with a usage function is a request's
		// from a tracing integration, whose labels are new on every
		// request: they are not even looked up.
		if f, ok := ctx.Value(usageKey{}).(func(int64, int64)); ok {
			a.startTally(f)
			a.lctx = ctx
		} else if l, ok := ctxlabels.Cached(ctx); !ok {
			a.lctx = ctx
		} else if l.Key() != "" {
			a.labels = p.withLabels(a, l)
		}
	}
	a.publishLabels()
	a.taken(p, 0)
	return a
}

// Put resets a and takes it back; the caller must not use a or anything
// allocated in it afterwards. Put ignores nil and freed arenas. It panics
// if a is already in a pool (put twice without a Get in between): two
// later Gets would hand the same arena to two goroutines.
func (p *Pool) Put(a *Arena) {
	if a == nil || a.freed {
		return
	}
	if a.pooled {
		panic("arenaprof: Pool.Put of an arena already in a pool")
	}
	a.pooled = true
	a.Reset()
	a.labels = a.base
	if a.lctx != nil || a.tally != nil {
		a.lctx, a.tally, a.tctx = nil, nil, nil
	}
	a.idle()
	p.p.Put(a)
}

// mergedCacheSize bounds the merged label sets a Pool remembers.
const mergedCacheSize = 64

// merged is a pool's labels with the context labels whose key is over.
type merged struct {
	over   string
	labels hooks.Labels
}

var mergedSeed = maphash.MakeSeed()

// withLabels returns a's base labels (the pool's) with over added or
// replacing. The pool remembers the merged sets in a bounded
// direct-mapped cache, so that a label set seen before costs no
// allocation.
func (p *Pool) withLabels(a *Arena, over hooks.Labels) hooks.Labels {
	if a.base.Key() == "" {
		return over
	}
	slot := &p.merged[maphash.String(mergedSeed, over.Key())%mergedCacheSize]
	if m := slot.Load(); m != nil && m.over == over.Key() {
		return m.labels
	}
	m := &merged{over: over.Key(), labels: mergeLabels(a.base, over)}
	slot.Store(m)
	return m.labels
}

// mergeLabels returns base with the labels of over added or replacing.
func mergeLabels(base, over hooks.Labels) hooks.Labels {
	if base.Key() == "" {
		return over
	}
	var kv []string
	for k, v := range base.All {
		kv = append(kv, k, v)
	}
	for k, v := range over.All {
		kv = append(kv, k, v)
	}
	return hooks.NewLabels(kv...)
}
