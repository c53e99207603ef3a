package pprofread

import "github.com/google/pprof/profile"

// Kept returns the memory a decoded profile keeps: its records priced at
// the costs Read's scan gives them in the data (estimate.go), each
// distinct string once, and the fixed cost of one profile; what a caller
// that merges many profiles into one counts against its bound, in place
// of the sum of the parts' costs. A merged profile holds each distinct
// stack, location, function, mapping and comment of its parts once (as
// profile.Merge merges them), so it grows with what they hold that
// differs, not with their number. No record is priced above what the scan
// prices it at in any encoding, so Kept(merged) <= Kept(a) + [Adds] of the
// cost Read gave b, for a merged from a and b: what a caller that has not
// yet read b may assume it adds.
func Kept(p *profile.Profile) int64 {
	if p == nil {
		return 0
	}
	strs := map[string]bool{}
	str := func(s string) int64 {
		if s == "" || strs[s] {
			return 0
		}
		strs[s] = true
		return costString + int64(len(s)) + int64(len(s))/8 + 8
	}
	n := int64(costProfile) + costValueType*int64(len(p.SampleType)+1)
	for _, t := range p.SampleType {
		n += str(t.Type) + str(t.Unit)
	}
	for _, c := range p.Comments {
		n += costComment + str(c)
	}
	for _, s := range p.Sample {
		n += costSample + packed(len(s.Location), costPackedElem+8) + packed(len(s.Value), costPackedElem)
		labels := int64(0)
		for k, v := range s.Label {
			labels += int64(len(v))
			n += str(k)
			for _, x := range v {
				n += str(x)
			}
		}
		for k, v := range s.NumLabel {
			labels += int64(len(v))
			n += str(k)
		}
		for _, v := range s.NumUnit {
			for _, x := range v {
				n += str(x)
			}
		}
		if labels > 0 {
			n += costLabeled + costLabel*labels
		}
	}
	for _, l := range p.Location {
		n += costLocation + costLine*int64(len(l.Line))
	}
	for _, f := range p.Function {
		n += costFunction + str(f.Name) + str(f.SystemName) + str(f.Filename)
	}
	for _, m := range p.Mapping {
		n += costMapping + str(m.File) + str(m.BuildID)
	}
	return n
}

// Adds bounds what merging a profile whose decoded cost is cost (Read's
// second result, or what a MemoryLimitError measured: Need less four
// times Size) adds to the memory a merged profile keeps (Kept): its
// records, without the fixed cost of a profile, which the merged profile
// already counts.
func Adds(cost int64) int64 { return max(cost-costProfile, 0) }

// packed prices a run of n location IDs or values of a sample at the
// price of a packed run, each element at elem: the lowest price the scan
// gives it.
func packed(n int, elem int64) int64 {
	if n == 0 {
		return 0
	}
	return costPacked + elem*int64(n)
}
