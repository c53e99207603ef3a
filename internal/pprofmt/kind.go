package pprofmt

import (
	"fmt"

	"github.com/google/pprof/profile"
)

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
