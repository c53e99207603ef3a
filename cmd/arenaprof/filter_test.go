package main

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// TestFiltersMatchGoToolPprof: -focus, -ignore, -tagfocus and -tagignore
// keep the same samples as the real go tool pprof given the same flag, on
// the same profile (its -proto output is the filtered profile).
func TestFiltersMatchGoToolPprof(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	path := fixturePath(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flag, value string
		none        bool // pprof keeps no sample; arenaprof says so
	}{
		{"focus", "parseOrder", false},
		{"focus", `^main\.main$`, false},
		{"ignore", `main\.main`, false},
		{"focus", `\(\*codec\)`, false},
		{"focus", "noSuchFunction", true},
		{"tagfocus", "type=workload.user", false},
		{"tagfocus", `type=^\[\]uint8$`, false},
		{"tagfocus", "type=user,order", false},
		{"tagfocus", "type:workload", false}, // no key: key:value of any label
		{"tagfocus", "handler=orders", false},
		{"tagignore", "type=string", false},
		{"tagfocus", "bytes=1kb:", false},
		{"tagfocus", "bytes=:64b", false},
		{"tagfocus", "bytes=32b:64b", false},
		{"tagfocus", "bytes=64b", true}, // no object of exactly 64 bytes
		{"tagfocus", "1mb:", false},     // no key: any numeric label in bytes
		{"tagfocus", "bytes=64", true},  // no unit: matches no label in bytes
		{"tagignore", "bytes=1mb:", false},
		{"tagfocus", "type=nothing-here", true},
	} {
		t.Run(tc.flag+"="+tc.value, func(t *testing.T) {
			cmd := exec.Command(goBin, "tool", "pprof", "-proto", "-"+tc.flag+"="+tc.value, path)
			cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Run(); err != nil {
				t.Fatalf("go tool pprof: %v\n%s", err, errOut.String())
			}
			want, err := profile.Parse(&out)
			if err != nil {
				t.Fatal(err)
			}
			got, err := profile.ParseData(data)
			if err != nil {
				t.Fatal(err)
			}
			args := map[string]string{tc.flag: tc.value}
			f, err := parseFilters(args["focus"], args["ignore"], args["tagfocus"], args["tagignore"])
			if err != nil {
				t.Fatal(err)
			}
			err = f.apply(path, newArenaProfile(got))
			if tc.none {
				if len(want.Sample) != 0 {
					t.Errorf("go tool pprof kept %d samples", len(want.Sample))
				}
				if err == nil || !strings.Contains(err.Error(), "matches no") {
					t.Errorf("no error for a filter that keeps nothing: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := countSamples(data); len(got.Sample) == 0 || len(got.Sample) == n {
				t.Errorf("the filter kept %d of %d samples: not a useful case", len(got.Sample), n)
			}
			if g, w := sampleKeys(got), sampleKeys(want); !slices.Equal(g, w) {
				t.Errorf("kept samples differ from go tool pprof's:\n got %q\nwant %q", g, w)
			}
		})
	}
	// The filters reach the table: the heading names them and the total
	// covers the samples kept.
	code, out, errOut := runTopArgs("-tagfocus", "type=workload.user", "-by", "type", path)
	if code != 0 || !strings.Contains(out, "samples kept by -tagfocus=type=workload.user") || strings.Contains(out, "[]uint8") {
		t.Errorf("exit %d, %s:\n%s", code, errOut, out)
	}
	code, out, errOut = runDiffArgs("-focus", "parseOrder", path, path)
	if code != 0 || !strings.Contains(out, "samples kept by -focus=parseOrder") {
		t.Errorf("diff: exit %d, %s:\n%s", code, errOut, out)
	}
	if code, _, errOut := runTopArgs("-focus", "(", path); code != 2 || !strings.Contains(errOut, "bad -focus") {
		t.Errorf("bad -focus: exit %d, %s", code, errOut)
	}
}

// sampleKeys describes each sample by its values, labels and stack,
// sorted.
func sampleKeys(p *profile.Profile) []string {
	var keys []string
	for _, s := range p.Sample {
		var b strings.Builder
		for _, v := range s.Value {
			b.WriteString(" " + strconv.FormatInt(v, 10))
		}
		for _, k := range slices.Sorted(maps.Keys(s.Label)) {
			b.WriteString(" " + k + "=" + strings.Join(s.Label[k], ","))
		}
		for _, k := range slices.Sorted(maps.Keys(s.NumLabel)) {
			for _, v := range s.NumLabel[k] {
				b.WriteString(" " + k + "=" + strconv.FormatInt(v, 10))
			}
		}
		for _, l := range s.Location {
			for _, ln := range l.Line {
				b.WriteString(" " + ln.Function.Name)
			}
		}
		keys = append(keys, b.String())
	}
	slices.Sort(keys)
	return keys
}

func countSamples(data []byte) int {
	p, err := profile.ParseData(data)
	if err != nil {
		return -1
	}
	return len(p.Sample)
}

// FuzzFilters: any filter flags are compiled or refused with an error,
// and a compiled filter runs on a profile without a panic.
func FuzzFilters(f *testing.F) {
	for _, s := range []string{"type=^main\\.x$", "bytes=1kb:", ":64b", "32b:64mb", "1kb:2", "x=(", "99999999999999999999b:", "-5s", "a=b,c"} {
		f.Add("parse", "", s)
	}
	p := buildFixture(f)
	f.Fuzz(func(t *testing.T, focus, ignore, tag string) {
		filt, err := parseFilters(focus, ignore, tag, tag)
		if err != nil {
			return
		}
		_ = filt.apply("fixture", newArenaProfile(p.Copy()))
	})
}
