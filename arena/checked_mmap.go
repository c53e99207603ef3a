//go:build linux && (amd64 || arm64)

package arena

import (
	"sync"
	"syscall"
	"unsafe"
)

// On Linux (amd64 and arm64), checked memory is mapped with mmap at
// addresses of its own: a window of checkedWindow bytes of address space
// starting at checkedBase, taken in order and not handed out twice until
// it wraps, so that a fault address in the window is recognisably arena
// memory and a stale pointer into it faults even after its region is
// unmapped. MAP_FIXED_NOREPLACE (Linux 4.17) never replaces a mapping
// already there: if the window is taken or out of the address space, or
// the kernel ignores the flag, mapping falls back to addresses the kernel
// chooses, and the window is abandoned.

// checkedBase is the first address of the window: its high bytes spell
// "Aren" in ASCII, so a fault address from 0x4172656e0000 up to 1 TiB
// above it is checked arena memory.
const checkedBase = 0x4172_656e_0000

const (
	checkedWindow = 1 << 40
	// checkedKeep bounds the released regions kept mapped and
	// inaccessible: past it, the oldest are unmapped. An unmapped region
	// of the window still faults (its addresses are not mapped again
	// until the window wraps); one the kernel placed may be reused by
	// any later mapping.
	checkedKeep       = 1 << 14 // regions
	checkedKeepBytes  = 1 << 34 // bytes of address space
	mapFixedNoreplace = 0x100000
)

var checkedMaps struct {
	sync.Mutex
	next      uintptr // the next address of the window; 0: window abandoned
	kept      []span  // released regions still mapped, oldest first
	keptBytes uintptr
}

func init() { checkedMaps.next = checkedBase }

// mapChecked maps size bytes (a multiple of the page size) of zeroed,
// readable and writable memory.
func mapChecked(size uintptr) unsafe.Pointer {
	checkedMaps.Lock()
	defer checkedMaps.Unlock()
	if hint := checkedMaps.next; hint != 0 {
		if uint64(hint)+uint64(size) > checkedBase+checkedWindow {
			hint = checkedBase // wrap; NOREPLACE fails if the start is still kept
		}
		p, err := mmap(hint, size, mapFixedNoreplace)
		if err == nil && p == hint {
			checkedMaps.next = hint + size
			return unsafe.Add(nil, p)
		}
		if err == nil {
			munmap(p, size) // an old kernel took the flag for a hint
		}
		checkedMaps.next = 0
	}
	p, err := mmap(0, size, 0)
	if err != nil {
		panic("arenaprof: arena: checked mode cannot map memory: " + err.Error())
	}
	return unsafe.Add(nil, p)
}

// mmap maps size bytes of readable and writable anonymous memory at addr
// (0: where the kernel chooses).
func mmap(addr, size uintptr, flags uintptr) (uintptr, error) {
	p, _, e := syscall.Syscall6(syscall.SYS_MMAP, addr, size,
		syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|flags, ^uintptr(0), 0)
	if e != 0 {
		return 0, e
	}
	return p, nil
}

// munmap unmaps size bytes at addr.
func munmap(addr, size uintptr) {
	syscall.Syscall(syscall.SYS_MUNMAP, addr, size, 0)
}

// retire makes a region inaccessible and gives its pages back to the
// kernel, in one call: a new mapping without access replaces it. It stays
// mapped (reserved, costing address space but no memory) until checkedKeep
// newer regions are retired.
func retire(s span, how string, made, pcs []uintptr) {
	addr := uintptr(s.base)
	_, _, e := syscall.Syscall6(syscall.SYS_MMAP, addr, s.size, syscall.PROT_NONE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_FIXED|syscall.MAP_NORESERVE, ^uintptr(0), 0)
	if e != 0 {
		panic("arenaprof: arena: checked mode cannot protect memory: " + e.Error())
	}
	report(s, how, made, pcs)
	checkedMaps.Lock()
	defer checkedMaps.Unlock()
	checkedMaps.kept = append(checkedMaps.kept, s)
	checkedMaps.keptBytes += s.size
	for len(checkedMaps.kept) > checkedKeep || checkedMaps.keptBytes > checkedKeepBytes {
		old := checkedMaps.kept[0]
		checkedMaps.kept = checkedMaps.kept[1:]
		checkedMaps.keptBytes -= old.size
		munmap(uintptr(old.base), old.size)
	}
}
