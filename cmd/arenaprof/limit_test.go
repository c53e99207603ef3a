package main

import (
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"testing"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/report"
)

// TestLimitErr: a refusal at -max-memory suggests more than was given
// (twice at least, and above what the data read already needs), and says
// instead that the input is no profile when it is none.
func TestLimitErr(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		name      string
		limit     int64
		err       error
		want, not string
	}{
		{"4GiB, need 5GiB", 4 * gib, &pprofmt.MemoryLimitError{Limit: 4 * gib, Need: 5 * gib}, "e.g. -max-memory 8GiB", "not a profile"},
		{"4GiB, need 9GiB", 4 * gib, &pprofmt.MemoryLimitError{Limit: 4 * gib, Need: 9 * gib}, "e.g. -max-memory 16GiB", "not a profile"},
		{"512MiB, just over", 512 << 20, &pprofmt.MemoryLimitError{Limit: 512 << 20, Need: 512<<20 + 1}, "e.g. -max-memory 1GiB", "not a profile"},
		{"1MiB", 1 << 20, &pprofmt.MemoryLimitError{Limit: 1 << 20, Need: 3 << 20}, "e.g. -max-memory 4MiB", "not a profile"},
		{"wrapped", 4 * gib, fmt.Errorf("report: %w", &pprofmt.MemoryLimitError{Limit: 4 * gib, Need: 5 * gib}), "e.g. -max-memory 8GiB", "not a profile"},
		{"sentinel alone", 4 * gib, pprofmt.ErrMemoryLimit, "e.g. -max-memory 8GiB", "not a profile"},
		{"zeros", 4 * gib, &pprofmt.MemoryLimitError{Limit: 4 * gib, Need: 5 * gib, NotProfile: true}, "zeros.gz: not a profile", "e.g."},
		{"-max-bytes", 4 * gib, fmt.Errorf("report: %w of 1 bytes", pprofmt.ErrTooLarge), "larger than -max-bytes", "-max-memory"},
		{"measured", 4 * gib, &pprofmt.MemoryLimitError{Limit: 4 * gib, Need: 5 * gib, Exact: true, Size: 1 << 20}, "reading it takes 5.00GiB of memory, more than -max-memory 4GiB; raise -max-memory (e.g. -max-memory 8GiB) if", "-max-bytes"},
		{"measured past -max-bytes", 4 * gib, &pprofmt.MemoryLimitError{Limit: 4 * gib, Need: 5 * gib, Exact: true, Size: 3 * gib}, "(e.g. -max-memory 8GiB) and -max-bytes (e.g. -max-bytes 4GiB; its data is 3.00GiB decompressed)", "not a profile"},
		{"size, decompressed", 4 * gib, &pprofmt.SizeLimitError{Limit: gib, Size: 3 * gib, Exact: true}, "larger than -max-bytes 1GiB: its data is 3.00GiB decompressed; raise -max-bytes (e.g. -max-bytes 4GiB)", "-max-memory"},
		{"size, compressed", 4 * gib, &pprofmt.SizeLimitError{Limit: gib, Size: 5 * gib, Compressed: true}, "larger than -max-bytes 1GiB as read (compressed), and more than 5.00GiB decompressed; raise -max-bytes (e.g. -max-bytes 8GiB)", "-max-memory"},
		{"size, not a profile", 4 * gib, &pprofmt.SizeLimitError{Limit: gib, Size: 5 * gib, NotProfile: true}, "zeros.gz: not a profile: its data is no protobuf message and starts like no legacy profile (refused at -max-bytes 1GiB", "e.g."},
	} {
		msg := limitErr("zeros.gz", c.err, report.ParseOptions{MaxBytes: 1 << 30, MaxMemory: c.limit}).Error()
		if !strings.Contains(msg, c.want) || strings.Contains(msg, c.not) {
			t.Errorf("%s: %q; want %q and not %q", c.name, msg, c.want, c.not)
		}
	}
}

// FuzzSuggestMemory: for any -max-memory and need, the suggestion is a
// power of two above both, at least twice the limit (or the largest
// int64, when none is).
func FuzzSuggestMemory(f *testing.F) {
	for _, c := range [][2]int64{{1, 0}, {512 << 20, 600 << 20}, {4 << 30, 5 << 30}, {math.MaxInt64 / 4, math.MaxInt64 / 4}, {1 << 62, 0}, {3, math.MaxInt64}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, limit, need int64) {
		if limit <= 0 || need < 0 {
			return
		}
		s := suggestMemory(limit, need)
		if s == math.MaxInt64 {
			if limit <= math.MaxInt64/4 && need < 1<<62 {
				t.Fatalf("suggestMemory(%d, %d) gave up with room left", limit, need)
			}
			return
		}
		if bits.OnesCount64(uint64(s)) != 1 || s/2 < limit || s <= need {
			t.Fatalf("suggestMemory(%d, %d) = %d", limit, need, s)
		}
	})
}

// legacyText returns a legacy text heap profile of about n bytes, as
// runtime/pprof writes one with debug=1: sample lines, each followed by a
// comment line per frame.
func legacyText(n int) []byte {
	var b strings.Builder
	b.WriteString("heap profile: 10: 1000 [20: 2000] @ heap/524288\n")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%d: %d [%d: %d] @", 1+i%3, 64*(1+i%3), 1+i%5, 64*(1+i%5))
		for d := range 12 {
			fmt.Fprintf(&b, " 0x%x", 0x401000+64*((i*7+d*13)%997))
		}
		b.WriteString("\n")
		for d := range 12 {
			fmt.Fprintf(&b, "#\t0x%x\tmain.f%d+0x10\t/src/main/f.go:%d\n", 0x401000+64*((i*7+d*13)%997)-1, d, d)
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// Every limit error names the flag that was hit and suggests a value that
// then reads the profile: -max-memory and -max-bytes, on a legacy text
// heap profile, an arenaprof profile gzipped or not, and data past both.
func TestLimitSuggestionsRead(t *testing.T) {
	legacy := writeTemp(t, "heap.txt", legacyText(4<<20))
	p := buildFixture(t)
	var raw bytes.Buffer
	if err := p.WriteUncompressed(&raw); err != nil {
		t.Fatal(err)
	}
	plain := writeTemp(t, "arena.pb", raw.Bytes())
	gz := writeTemp(t, "arena.pb.gz", profileBytes(t, p))
	for _, tc := range []struct {
		name  string
		args  []string
		flags []string // the flags the message names, in order
	}{
		{"legacy at -max-memory", []string{"-by", "size", "-max-memory", "8MiB", legacy}, []string{"-max-memory"}},
		{"legacy at -max-bytes", []string{"-by", "size", "-max-bytes", "1MiB", legacy}, []string{"-max-bytes"}},
		{"legacy past both", []string{"-by", "size", "-max-bytes", "1MiB", "-max-memory", "2MiB", legacy}, []string{"-max-memory", "-max-bytes"}},
		{"plain at -max-bytes", []string{"-max-bytes", "1KiB", plain}, []string{"-max-bytes"}},
		{"gzipped at -max-bytes", []string{"-max-bytes", "1KiB", gz}, []string{"-max-bytes"}},
		{"plain at -max-memory", []string{"-max-memory", "70KiB", plain}, []string{"-max-memory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runTopArgs(tc.args...)
			if code != 1 || strings.Contains(errOut, "not a profile") {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			args := slices.Clone(tc.args)
			for _, flag := range tc.flags {
				_, after, ok := strings.Cut(errOut, "(e.g. "+flag+" ")
				if !ok {
					t.Fatalf("%q suggests no %s", errOut, flag)
				}
				v := strings.FieldsFunc(after, func(r rune) bool { return r == ')' || r == ';' || r == ' ' })[0]
				i := slices.Index(args, flag)
				if i < 0 {
					args = append([]string{flag, v}, args...)
				} else {
					args[i+1] = v
				}
			}
			if code, _, errOut2 := runTopArgs(args...); code != 0 {
				t.Errorf("%s\nthen %v: exit %d: %s", errOut, args, code, errOut2)
			}
		})
	}
}
