package arena

import "unsafe"

// The type table maps the type key of every type the fast path serves
// through a per-type region (types with pointers, and pointer-free types
// when the descriptor layout is unknown) to its region. It is direct-mapped
// and collision-free: slot(k) = (k*mult) >> shift, and whenever a new type
// would collide with one already present, the arena draws multipliers until
// the types it holds hash apart, doubling the table after a few failures.
// A lookup is therefore one multiply, one probe and one key compare,
// whatever the number of types and however their keys hash.
//
// The expected number of multipliers to try is about exp(n²/2m) for n
// types in m slots; keeping m ≥ n²/4 (and ≥ 4n) bounds it by e² ≈ 7. Past
// maxTableBits the table stops growing and a type that still collides is
// served by the slow path alone (a map lookup): that takes several hundred
// types with pointers in one arena.

// tabEntry is a slot of the type table.
type tabEntry struct {
	key  uintptr
	reg  *region
	size uintptr // the type's size rounded up to 8
}

const (
	minTableBits = 4
	maxTableBits = 12 // 4096 slots, 64 KiB on 64-bit platforms
	tableTries   = 16 // multipliers tried before the table doubles
)

// tabSlot returns the slot of key k in a table hashed with mult and shift.
func tabSlot(k uintptr, mult uint64, shift uint) uintptr {
	return uintptr((uint64(k) * mult) >> (shift & 63))
}

// lookup returns the region of key k, or a.none's when k has no slot.
func (a *Arena) lookup(k uintptr) *region {
	e := a.slot(k)
	if e.key != k {
		return &a.none
	}
	return e.reg
}

// slot returns the table slot of key k, which holds k or another key.
func (a *Arena) slot(k uintptr) *tabEntry {
	return (*tabEntry)(unsafe.Add(a.tab, tabSlot(k, a.mult, a.shift)*unsafe.Sizeof(tabEntry{})))
}

// clearTable empties the type table.
func (a *Arena) clearTable() {
	a.none = region{sampleAt: noSample}
	if a.entries == nil {
		a.entries = a.smallEntries[:0]
	}
	a.entries = a.entries[:0]
	if a.mult == 0 {
		a.mult = 0x9e3779b97f4a7c15
	}
	a.setTable(minTableBits, a.mult)
}

// setTable builds a table of 1<<bits slots hashed with mult from
// a.entries, and reports whether they all got a slot of their own. On a
// collision the first entry keeps the slot.
func (a *Arena) setTable(bits uint, mult uint64) bool {
	var slots []tabEntry
	if bits == minTableBits {
		slots = a.small[:] // the first table lives in the Arena
		clear(slots)
	} else {
		slots = make([]tabEntry, 1<<bits)
	}
	for i := range slots {
		slots[i].reg = &a.none
	}
	shift := 64 - bits
	ok := true
	for _, e := range a.entries {
		s := &slots[tabSlot(e.key, mult, shift)]
		if s.key != 0 {
			ok = false
			continue
		}
		*s = e
	}
	a.slots = slots
	a.tab = unsafe.Pointer(&slots[0])
	a.mult, a.shift, a.bits = mult, shift, bits
	return ok
}

// fits reports whether the entries hash apart with mult in 1<<bits slots.
func (a *Arena) fits(bits uint, mult uint64, seen []uint64) bool {
	shift := 64 - bits
	clear(seen)
	for _, e := range a.entries {
		s := tabSlot(e.key, mult, shift)
		if seen[s/64]&(1<<(s%64)) != 0 {
			return false
		}
		seen[s/64] |= 1 << (s % 64)
	}
	return true
}

// install gives key k the region r in the type table.
func (a *Arena) install(k uintptr, r *region, size uintptr) {
	// A key's region never changes while the arena lives; a key already
	// present either has its slot or lost it for good at maxTableBits.
	for i := range a.entries {
		if a.entries[i].key == k {
			return
		}
	}
	a.entries = append(a.entries, tabEntry{key: k, reg: r, size: size})
	n := uint(len(a.entries))
	bits := a.bits
	for bits < maxTableBits && (1<<bits < 4*n || 1<<bits < n*n/4) {
		bits++
	}
	if bits == a.bits {
		if e := a.slot(k); e.key == 0 {
			*e = tabEntry{key: k, reg: r, size: size}
			return
		}
	}
	// Draw multipliers until the keys hash apart, doubling the table
	// after tableTries failures; give up at maxTableBits.
	seen := make([]uint64, (1<<maxTableBits)/64)
	for {
		for range tableTries {
			a.hashSeed += 0x9e3779b97f4a7c15
			mult := mix(a.hashSeed) | 1
			if a.fits(bits, mult, seen[:(1<<bits+63)/64]) {
				a.setTable(bits, mult)
				return
			}
		}
		if bits == maxTableBits {
			a.setTable(bits, a.mult)
			return
		}
		bits++
	}
}

// mix is the finalizer of splitmix64.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
