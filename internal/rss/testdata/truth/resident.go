package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident is what of the program's memory the kernel holds resident,
// measured page by page, in bytes: the truth the profile's classes are
// checked against, whatever the kernel and the heap's history did (pages
// never touched, transparent huge pages, fault-around).
type resident struct {
	// Arena is the arenas' chunks (mincore).
	Arena int64 `json:"arena"`
	// Mmap is the anonymous mapping (mincore).
	Mmap int64 `json:"mmap"`
	// CMalloc is the pages holding C's block (mincore).
	CMalloc int64 `json:"cmalloc"`
	// File is the file mapping's pages mapped in this process (the
	// present bit of /proc/self/pagemap: mincore tells the page cache's
	// pages, which hold the whole file just written).
	File int64 `json:"file"`
	// Files is every file mapping's pages mapped but the executable's
	// (pagemap): the file's, the shared libraries', shared memory.
	Files int64 `json:"files"`
	// Special is the size of the kernel's own mappings ([vdso], [vvar],
	// [vsyscall]): at most what they hold resident.
	Special int64 `json:"special"`
}

var pageSize = uintptr(os.Getpagesize())

// pageSpan returns the page-aligned address range holding b.
func pageSpan(b []byte) (start, end uintptr) {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p &^ (pageSize - 1), (p + uintptr(len(b)) + pageSize - 1) &^ (pageSize - 1)
}

// mincoreBytes returns the resident bytes of the pages holding b, by
// mincore(2): exact for anonymous memory.
func mincoreBytes(b []byte) int64 {
	if len(b) == 0 {
		return 0
	}
	start, end := pageSpan(b)
	vec := make([]byte, (end-start)/pageSize)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, start, end-start, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		panic(fmt.Sprintf("mincore: %v", e))
	}
	var n int64
	for _, v := range vec {
		n += int64(v & 1)
	}
	return n * int64(pageSize)
}

// mappedBytes returns the bytes of the pages in [start, end) mapped in
// this process: the present bit (63) of each page's /proc/self/pagemap
// entry.
func mappedBytes(pagemap *os.File, start, end uintptr) int64 {
	buf := make([]byte, (end-start)/pageSize*8)
	if _, err := pagemap.ReadAt(buf, int64(start/pageSize*8)); err != nil {
		panic(fmt.Sprintf("pagemap at %#x: %v", start, err))
	}
	var n int64
	for i := 0; i < len(buf); i += 8 {
		if binary.LittleEndian.Uint64(buf[i:])>>63 == 1 {
			n++
		}
	}
	return n * int64(pageSize)
}

// measure measures what is resident of chunks (the arenas' chunks), m
// (the anonymous mapping), c (C's block) and fm (the file mapping), and
// of the process's file mappings.
func measure(chunks [][]byte, m, c, fm []byte) resident {
	var r resident
	for _, ch := range chunks {
		r.Arena += mincoreBytes(ch)
	}
	r.Mmap = mincoreBytes(m)
	r.CMalloc = mincoreBytes(c)
	pagemap, err := os.Open("/proc/self/pagemap")
	if err != nil {
		panic(err)
	}
	defer pagemap.Close()
	fs, fe := pageSpan(fm)
	r.File = mappedBytes(pagemap, fs, fe)
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		panic(err)
	}
	maps, err := os.Open("/proc/self/maps")
	if err != nil {
		panic(err)
	}
	defer maps.Close()
	// A line: start-end perms offset dev inode [path]. The kinds are
	// those of the profile's classes (internal/rss's smaps.go).
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			panic(fmt.Sprintf("/proc/self/maps: %q", sc.Text()))
		}
		path := strings.Join(f[5:], " ")
		shared := len(f[1]) == 4 && f[1][3] == 's'
		switch {
		case path == exe || path == exe+" (deleted)":
		case strings.HasPrefix(path, "/"), shared && (path == "" || strings.HasPrefix(path, "[anon")):
			r.Files += mappedBytes(pagemap, uintptr(start), uintptr(end))
		case strings.HasPrefix(path, "[") && path != "[heap]" && path != "[stack]" && !strings.HasPrefix(path, "[anon"):
			r.Special += int64(end - start)
		}
	}
	if err := sc.Err(); err != nil {
		panic(err)
	}
	return r
}
