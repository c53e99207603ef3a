package arenajson

import (
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"
)

// typeCache maps types to facts computed once per type. Lookups are on
// the decoder's hot path (every value asks whether its type is plain, and
// every allocation how its type is allocated), so a direct-mapped table of
// atomic pointers answers first, in a load and a compare, and a sync.Map
// holds every entry behind it.
type typeCache[V any] struct {
	fast [256]atomic.Pointer[typeEntry[V]]
	all  sync.Map // reflect.Type -> *typeEntry[V]
}

type typeEntry[V any] struct {
	t unsafe.Pointer // the type's descriptor: compared without ifaceeq
	v V
}

// descriptor returns the address of t's descriptor, which identifies t
// (a reflect.Type is always a *rtype).
func descriptor(t reflect.Type) unsafe.Pointer {
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&t))[1]
}

// slot returns the table slot of the descriptor p.
func slot(p unsafe.Pointer) int {
	u := uintptr(p)
	return int(u>>5^u>>13) & 255
}

// get returns the fact of t, computing it with compute at the first call.
func (c *typeCache[V]) get(t reflect.Type, compute func(reflect.Type) V) V {
	p := descriptor(t)
	s := &c.fast[slot(p)]
	if e := s.Load(); e != nil && e.t == p {
		return e.v
	}
	var e *typeEntry[V]
	if v, ok := c.all.Load(t); ok {
		e = v.(*typeEntry[V])
	} else {
		v, _ := c.all.LoadOrStore(t, &typeEntry[V]{t: p, v: compute(t)})
		e = v.(*typeEntry[V])
	}
	s.Store(e)
	return e.v
}
