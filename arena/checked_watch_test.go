//go:build linux && (amd64 || arm64)

package arena

import (
	"strings"
	"testing"
)

// TestWatch feeds the watcher records and a crash report and checks what
// it says.
func TestWatch(t *testing.T) {
	records := "S 0 1\nmain.handle\t/src/main.go:10\n" +
		"S 1 2\ngithub.com/arenaprof/arenaprof/arena.(*Pool).Put\t/src/pool.go:58\nmain.handle\t/src/main.go:20\n" +
		"R 4172656e0000 11000 0 1 Pool.Put\n" +
		"R 4172656f1000 11000 0 -1 Free\n"
	crash := func(addr string) string {
		return "fatal error: fault\n[signal SIGSEGV: segmentation violation code=0x2 addr=" + addr + " pc=0x48eae5]\n"
	}
	cases := []struct {
		name, crash string
		want        []string // "" for no output
	}{
		{"in a region", crash("0x4172656e0010"), []string{
			"the fault address 0x4172656e0010 is arena memory used after its release by Pool.Put.",
			"The region [0x4172656e0000, 0x4172656f1000) was released by Pool.Put at:\n\tgithub.com/arenaprof/arenaprof/arena.(*Pool).Put\n\t\t/src/pool.go:58\n\tmain.handle\n\t\t/src/main.go:20\n",
			"Its arena was made at:\n\tmain.handle\n\t\t/src/main.go:10\n",
		}},
		{"unknown release stack", crash("0x4172656f1000"), []string{"released by Free at:\n\t(unknown)\n"}},
		{"in the window, record dropped", crash("0x417265800000"), []string{"released long ago (its record was dropped)"}},
		{"elsewhere", crash("0xc000010000"), []string{""}},
		{"no fault", "panic: boom\n", []string{""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out strings.Builder
			watch(strings.NewReader(records), strings.NewReader(c.crash), &out)
			for _, w := range c.want {
				if w == "" && out.Len() != 0 || !strings.Contains(out.String(), w) {
					t.Errorf("output %q lacks %q", out.String(), w)
				}
			}
		})
	}
}

// FuzzWatch checks that the watcher survives any records and crash output.
func FuzzWatch(f *testing.F) {
	f.Add("S 0 1\nf\tx.go:1\nR 4172656e0000 1000 0 0 Reset\n", "[signal SIGSEGV: x addr=0x4172656e0000 pc=0x1]")
	f.Add("S 5 1000000\n", "[signal SIGSEGV: x addr=0xffffffffffffffffff pc=0x1]")
	f.Fuzz(func(t *testing.T, records, crash string) {
		var out strings.Builder
		watch(strings.NewReader(records), strings.NewReader(crash), &out)
	})
}
