package pprofmt

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/pprof/profile"
)

// IsGoHeap reports whether p is a heap or allocs profile as runtime/pprof
// writes it: the four alloc/inuse sample types and no arenaprof raw sums.
func IsGoHeap(p *profile.Profile) bool {
	want := map[string]string{"alloc_objects": "count", "alloc_space": "bytes", "inuse_objects": "count", "inuse_space": "bytes"}
	if len(p.SampleType) != len(want) {
		return false
	}
	for _, st := range p.SampleType {
		if want[st.Type] != st.Unit {
			return false
		}
	}
	return true
}

// MissingTypes returns the arenaprof sample types (see [SampleTypes]) that
// p lacks, as type/unit.
func MissingTypes(p *profile.Profile) []string {
	var missing []string
	for _, want := range SampleTypes() {
		found := false
		for _, st := range p.SampleType {
			if st.Type == want.Type && st.Unit == want.Unit {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, want.Type+"/"+want.Unit)
		}
	}
	return missing
}

// NotMemoryError says why p, which lacks the arenaprof sample types
// missing and is no Go heap profile, carries nothing to estimate.
func NotMemoryError(p *profile.Profile, missing []string) error {
	var have []string
	for _, st := range p.SampleType {
		have = append(have, st.Type+"/"+st.Unit)
	}
	what := "a profile"
	if p.PeriodType != nil {
		switch p.PeriodType.Type {
		case "cpu":
			what = "a CPU profile"
		case "goroutine":
			what = "a goroutine profile"
		case "contentions":
			what = "a contention profile"
		case "wallclock":
			what = "a wall-clock profile"
		}
	}
	h := strings.Join(have, ", ")
	if h == "" {
		h = "none"
	}
	return fmt.Errorf("report: %s (sample types %s) carries no sampled memory to estimate: it lacks the sample types %s; give an arenaprof profile or a Go heap or allocs profile", what, h, strings.Join(missing, ", "))
}

// CheckSampledMemory tells whether p is a Go heap profile, or returns an
// error saying why it cannot be given intervals: a profile of something
// other than sampled memory (CPU, goroutines, contention) or a Go heap
// profile written with MemProfileRate 0, which sampled nothing.
func CheckSampledMemory(p *profile.Profile) (goHeap bool, err error) {
	if p == nil {
		return false, errors.New("report: nil profile")
	}
	if IsGoHeap(p) {
		if p.Period <= 0 {
			return false, fmt.Errorf("report: a Go heap profile written with MemProfileRate %d, which samples nothing; set runtime.MemProfileRate above 0 before allocating", p.Period)
		}
		return true, nil
	}
	if missing := MissingTypes(p); len(missing) > 0 {
		return false, NotMemoryError(p, missing)
	}
	return false, nil
}

// SymbolizeHint is how to turn an unsymbolized profile (a legacy text heap
// profile, as the Go compiler's -memprofile flag and
// /debug/pprof/heap?debug=1 write it, or a profile of raw addresses) into
// one the tools can group by function: google/pprof symbolizes it from
// the binary that wrote it.
const SymbolizeHint = "go tool pprof -proto BINARY PROFILE > out.pb.gz"

// CheckSymbolized returns an error if a sample of p has a location without
// a function name (only an address): grouped by function or stack, its
// memory would be attributed to raw addresses, not to code. The error
// counts such samples and names [SymbolizeHint] as the fix.
func CheckSymbolized(p *profile.Profile) error {
	if p == nil {
		return nil
	}
	bad, first := 0, uint64(0)
	for _, s := range p.Sample {
		for _, loc := range s.Location {
			if !symbolized(loc) {
				if bad == 0 {
					first = loc.Address
				}
				bad++
				break
			}
		}
	}
	if bad == 0 {
		return nil
	}
	return fmt.Errorf("report: %d of %d samples have unsymbolized frames (address 0x%x has no function name): the profile is a legacy text profile or was written without symbols; symbolize it with %s, BINARY being the program that wrote it",
		bad, len(p.Sample), first, SymbolizeHint)
}

// symbolized reports whether loc names at least one function.
func symbolized(loc *profile.Location) bool {
	for _, ln := range loc.Line {
		if ln.Function != nil && ln.Function.Name != "" {
			return true
		}
	}
	return false
}
