package rss

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// vmaKind is what a mapping of /proc/self/smaps is, as far as its line
// tells.
type vmaKind uint8

const (
	vmaAnon    vmaKind = iota // anonymous, private (the Go heap, the runtime's and C's memory)
	vmaBrk                    // [heap]: the brk heap, C's malloc (the Go runtime never uses brk)
	vmaStack                  // [stack]: the main thread's system stack
	vmaBinary                 // the executable's file
	vmaFile                   // another file, or shared anonymous memory
	vmaSpecial                // [vdso], [vvar], [vsyscall]: the kernel's pages
)

// vma is one mapping: its address range, kind and resident bytes.
type vma struct {
	start, end uint64
	rss        int64
	kind       vmaKind
}

// parseSmaps reads /proc/self/smaps from r into vmas (reused), naming
// the executable's file exe. It reads every mapping's Rss; other fields
// are skipped without being converted.
func parseSmaps(r io.Reader, buf []byte, exe string, vmas []vma) ([]vma, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(buf, 1<<20)
	vmas = vmas[:0]
	var cur *vma
	for sc.Scan() {
		line := sc.Bytes()
		sp := bytes.IndexByte(line, ' ')
		if sp <= 0 {
			continue
		}
		first := line[:sp]
		if first[len(first)-1] == ':' {
			if cur != nil && string(first) == "Rss:" {
				kb, err := kBytes(line[sp:])
				if err != nil {
					return vmas, fmt.Errorf("smaps: %v in %q", err, line)
				}
				cur.rss = kb
			}
			continue
		}
		dash := bytes.IndexByte(first, '-')
		if dash < 0 {
			continue // VmFlags and the like
		}
		start, err1 := strconv.ParseUint(string(first[:dash]), 16, 64)
		end, err2 := strconv.ParseUint(string(first[dash+1:]), 16, 64)
		if err1 != nil || err2 != nil {
			return vmas, fmt.Errorf("smaps: a mapping line %q", line)
		}
		vmas = append(vmas, vma{start: start, end: end, kind: kindOf(line, exe)})
		cur = &vmas[len(vmas)-1]
	}
	if err := sc.Err(); err != nil {
		return vmas, err
	}
	if len(vmas) == 0 {
		return vmas, errors.New("smaps lists no mapping")
	}
	return vmas, nil
}

// kindOf tells a mapping's kind from its line: address perms offset dev
// inode [path].
func kindOf(line []byte, exe string) vmaKind {
	f := line
	for range 5 { // skip the five fields before the path
		f = bytes.TrimLeft(f, " ")
		i := bytes.IndexByte(f, ' ')
		if i < 0 {
			f = nil
			break
		}
		f = f[i:]
	}
	path := bytes.TrimSpace(f)
	shared := false
	if sp := bytes.IndexByte(line, ' '); sp >= 0 && len(line) > sp+4 {
		shared = line[sp+4] == 's' // rw-s
	}
	switch {
	case len(path) == 0:
		if shared {
			return vmaFile
		}
		return vmaAnon
	case bytes.Equal(path, []byte("[heap]")):
		return vmaBrk
	case bytes.Equal(path, []byte("[stack]")):
		return vmaStack
	case bytes.HasPrefix(path, []byte("[anon:")):
		if shared {
			return vmaFile
		}
		return vmaAnon // named anonymous memory (PR_SET_VMA_ANON_NAME)
	case path[0] == '[':
		if bytes.HasPrefix(path, []byte("[anon_shmem")) {
			return vmaFile
		}
		return vmaSpecial
	case exe != "" && (string(path) == exe || string(bytes.TrimSuffix(path, []byte(" (deleted)"))) == exe):
		return vmaBinary
	}
	return vmaFile
}

// kBytes reads "   1234 kB" as bytes.
func kBytes(b []byte) (int64, error) {
	b = bytes.TrimSpace(b)
	b, ok := bytes.CutSuffix(b, []byte(" kB"))
	if !ok {
		return 0, errors.New("a size not in kB")
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil || n < 0 {
		return 0, errors.New("a size that is no number")
	}
	return n << 10, nil
}

// regions are the resident bytes of each kind of memory smaps shows.
type regions struct {
	total                                    int64  // every mapping's Rss: the RSS
	heap                                     int64  // the Go heap's arenas
	heapStart, heapEnd                       uint64 // the address range of the Go heap's mappings found
	anon, brk, stack, binary, files, special int64
	mappings                                 int
}

// sumRegions adds up vmas by kind. The Go heap is the run of adjacent
// anonymous mappings around the address of a known heap object (probe):
// the runtime reserves its arenas 64 MiB at a time, each after the last,
// from a randomized base (Go 1.26), so no fixed address tells them.
func sumRegions(vmas []vma, probe uint64) regions {
	var r regions
	r.mappings = len(vmas)
	lo, hi := -1, -1
	for i, v := range vmas {
		if v.kind == vmaAnon && probe >= v.start && probe < v.end {
			lo, hi = i, i
			break
		}
	}
	if lo >= 0 {
		for lo > 0 && vmas[lo-1].kind == vmaAnon && vmas[lo-1].end == vmas[lo].start {
			lo--
		}
		for hi+1 < len(vmas) && vmas[hi+1].kind == vmaAnon && vmas[hi+1].start == vmas[hi].end {
			hi++
		}
		r.heapStart, r.heapEnd = vmas[lo].start, vmas[hi].end
	}
	for i, v := range vmas {
		r.total += v.rss
		switch {
		case i >= lo && i <= hi && lo >= 0:
			r.heap += v.rss
		case v.kind == vmaAnon:
			r.anon += v.rss
		case v.kind == vmaBrk:
			r.brk += v.rss
		case v.kind == vmaStack:
			r.stack += v.rss
		case v.kind == vmaBinary:
			r.binary += v.rss
		case v.kind == vmaSpecial:
			r.special += v.rss
		default:
			r.files += v.rss
		}
	}
	return r
}
