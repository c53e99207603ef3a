package rss

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"testing"
)

// smapsSample is a slice of a real /proc/self/smaps (fields trimmed),
// with a Go heap arena, the binary, a library, the brk heap, the stack,
// a shared file mapping and the kernel's pages.
const smapsSample = `00400000-004ab000 r-xp 00000000 fe:00 10010750                           /usr/bin/svc
Size:                684 kB
Rss:                 680 kB
AnonHugePages:         0 kB
VmFlags: rd ex mr mw me sd
0058e000-00599000 rw-p 0018e000 fe:00 10010750                           /usr/bin/svc (deleted)
Size:                 44 kB
Rss:                  44 kB
00599000-005cf000 rw-p 00000000 00:00 0 
Size:                216 kB
Rss:                  60 kB
01000000-01021000 rw-p 00000000 00:00 0                                  [heap]
Size:                132 kB
Rss:                 100 kB
24f130000000-24f130800000 ---p 00000000 00:00 0 
Size:               8192 kB
Rss:                   0 kB
24f130800000-24f130c00000 rw-p 00000000 00:00 0 
Size:               4096 kB
Rss:                3000 kB
24f130c00000-24f134000000 ---p 00000000 00:00 0 
Size:              53248 kB
Rss:                   0 kB
24f134000000-24f134400000 rw-p 00000000 00:00 0 
Size:               4096 kB
Rss:                1000 kB
7f9832b20000-7f9832d00000 rw-p 00000000 00:00 0 
Size:               1920 kB
Rss:                 200 kB
7f9832d00000-7f9832e00000 r--s 00000000 fe:00 55                         /tmp/my data file
Size:               1024 kB
Rss:                 512 kB
7f9832e00000-7f9832f00000 r-xp 00000000 fe:00 56                         /usr/lib/libc.so.6
Size:               1024 kB
Rss:                 900 kB
7f98797c6000-7f98797ca000 r--p 00000000 00:00 0                          [vvar]
Size:                 16 kB
Rss:                   0 kB
7f98797cc000-7f98797ce000 r-xp 00000000 00:00 0                          [vdso]
Size:                  8 kB
Rss:                   8 kB
7ffe10e59000-7ffe10e7a000 rw-p 00000000 00:00 0                          [stack]
Size:                132 kB
Rss:                  20 kB
`

func TestParseSmaps(t *testing.T) {
	vmas, err := parseSmaps(strings.NewReader(smapsSample), make([]byte, 4096), "/usr/bin/svc", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(vmas) != 14 {
		t.Fatalf("%d mappings, want 14", len(vmas))
	}
	kinds := []vmaKind{vmaBinary, vmaBinary, vmaAnon, vmaBrk, vmaAnon, vmaAnon, vmaAnon, vmaAnon, vmaAnon, vmaFile, vmaFile, vmaSpecial, vmaSpecial, vmaStack}
	for i, v := range vmas {
		if v.kind != kinds[i] {
			t.Errorf("mapping %d (%x): kind %d, want %d", i, v.start, v.kind, kinds[i])
		}
	}
	r := sumRegions(vmas, 0x24f130900000)
	want := regions{total: (680 + 44 + 60 + 100 + 3000 + 1000 + 200 + 512 + 900 + 8 + 20) << 10,
		heap: 4000 << 10, heapStart: 0x24f130000000, heapEnd: 0x24f134400000,
		anon: 260 << 10, brk: 100 << 10, stack: 20 << 10, binary: 724 << 10, files: 1412 << 10, special: 8 << 10, mappings: 14}
	if r != want {
		t.Errorf("regions\n%+v, want\n%+v", r, want)
	}
	if r := sumRegions(vmas, 1); r.heapEnd != 0 || r.heap != 0 {
		t.Errorf("a probe in no mapping found a heap: %+v", r)
	}
}

func TestParseSmapsBad(t *testing.T) {
	for _, c := range []struct{ name, in, err string }{
		{"empty", "", "no mapping"},
		{"bad address", "zz-10 rw-p 0 0:0 0\nRss: 4 kB\n", "mapping line"},
		{"bad size", "10-20 rw-p 0 0:0 0\nRss: four kB\n", "no number"},
		{"no unit", "10-20 rw-p 0 0:0 0\nRss: 4\n", "not in kB"},
	} {
		_, err := parseSmaps(strings.NewReader(c.in), make([]byte, 4096), "", nil)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.err)
		}
	}
}

// FuzzParseSmaps feeds parseSmaps any text: it returns mappings or an
// error, never panics, and the regions it sums are never negative.
func FuzzParseSmaps(f *testing.F) {
	f.Add([]byte(smapsSample), uint64(0x24f130900000))
	if b, err := os.ReadFile("/proc/self/smaps"); err == nil {
		f.Add(b, uint64(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, probe uint64) {
		vmas, err := parseSmaps(bytes.NewReader(data), make([]byte, 4096), "/usr/bin/svc", nil)
		if err != nil {
			return
		}
		r := sumRegions(vmas, probe)
		if r.total < 0 || r.heap < 0 || r.anon < 0 || r.heap+r.anon+r.brk+r.stack+r.binary+r.files+r.special != r.total {
			t.Errorf("regions %+v do not add up", r)
		}
	})
}

// TestNoSmaps reads with smaps unreadable: the Go classes only, said, and
// no RSS.
func TestNoSmaps(t *testing.T) {
	old := smapsPath
	smapsPath = "/nonexistent/smaps"
	defer func() { smapsPath = old }()
	runtime.GC() // go/heap/live is what the last GC marked
	r := Read()
	if r.SmapsErr == nil {
		t.Fatal("no error reading a missing smaps")
	}
	b := Classify(r)
	if b.RSS != 0 || b.Bytes[iBinary] != 0 || b.Bytes[iNonGo] != 0 || b.Bytes[iUnattributed] != 0 {
		t.Errorf("without smaps: RSS %d, classes %v", b.RSS, b.Bytes)
	}
	if b.Bytes[iLive] <= 0 || b.Bytes[iRuntime] <= 0 {
		t.Errorf("without smaps the Go classes are missing: %v", b.Bytes)
	}
	if len(b.Notes) == 0 || !strings.Contains(strings.Join(b.Notes, " "), "smaps could not be read") {
		t.Errorf("notes %q do not say smaps was not read", b.Notes)
	}
	p, err := Profile(r, b)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Parse(p, "func", 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if res.Smaps || res.RSSBytes != 0 {
		t.Errorf("the profile read back says smaps %v, RSS %d", res.Smaps, res.RSSBytes)
	}
	for _, c := range res.Classes {
		if c.Class == Binary || c.Class == NonGo || c.Class == Files || c.Class == Unattributed {
			t.Errorf("class %s given without smaps", c.Class)
		}
	}
}
