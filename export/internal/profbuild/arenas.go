package profbuild

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/holdings"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// arenasSlot is a live-arenas sample's key kept by a Builder between
// profiles: its label map, and its sample in the profile of generation
// gen.
type arenasSlot struct {
	labels map[string][]string
	gen    uint64
	sample int
}

// Arenas returns the live-arenas profile of the process, as package
// export's BuildArenas documents it, in the Builder's memory.
func (r *Builder) Arenas() (*profile.Profile, error) {
	hs := holdings.Read()
	b := newBuilder(r)
	defer b.done()
	if r.holdingTypes == nil {
		r.holdingTypes = pprofmt.HoldingTypes()
	}
	if r.arenas == nil || len(r.arenas) > maxKeptLabelMaps {
		r.arenas = map[string]*arenasSlot{}
	}
	r.arenasGen++
	b.p.SampleType = r.holdingTypes
	b.p.DefaultSampleType = b.p.SampleType[pprofmt.IndexReserved].Type
	b.p.Comments = append(b.p.Comments, pprofmt.HoldingsComment)
	// Memory, as Pyroscope files it (memory:reserved_space:bytes:space:bytes);
	// a period of 1: every arena counts, none is sampled.
	r.periodType = profile.ValueType{Type: "space", Unit: "bytes"}
	b.p.PeriodType = &r.periodType
	b.p.Period = 1
	b.p.TimeNanos = time.Now().UnixNano()
	// The samples and their values are carved from the Builder's arrays.
	r.samples = slices.Grow(r.samples[:0], len(hs))[:len(hs)]
	r.values = slices.Grow(r.values[:0], pprofmt.NumHoldingTypes*len(hs))[:pprofmt.NumHoldingTypes*len(hs)]
	samples, values := r.samples, r.values
	b.p.Sample = slices.Grow(b.p.Sample, len(hs))
	key := b.keyBuf
	for _, h := range hs {
		// A sample per stack, labels, pool and age bucket.
		key = key[:0]
		for _, pc := range h.Stack {
			key = binary.LittleEndian.AppendUint64(key, uint64(pc))
		}
		age := ""
		if h.Pool == 0 {
			age = pprofmt.AgeBucket(h.Age)
		}
		key = append(key, '|')
		if h.Labels != nil {
			key = append(key, h.Labels.Key()...)
		}
		key = append(key, '|')
		key = strconv.AppendUint(key, h.Pool, 10)
		key = append(key, '|')
		key = append(key, age...)
		slot := r.arenas[string(key)]
		if slot == nil {
			slot = &arenasSlot{labels: arenasLabels(h, age)}
			r.arenas[string(key)] = slot
		}
		if slot.gen != r.arenasGen {
			slot.gen, slot.sample = r.arenasGen, len(b.p.Sample)
			val := values[:pprofmt.NumHoldingTypes:pprofmt.NumHoldingTypes]
			values = values[pprofmt.NumHoldingTypes:]
			clear(val)
			smp := &samples[0]
			samples = samples[1:]
			*smp = profile.Sample{
				Location: b.stackLocations(h.Stack),
				Value:    val,
				Label:    slot.labels,
			}
			b.p.Sample = append(b.p.Sample, smp)
		}
		s := b.p.Sample[slot.sample]
		s.Value[pprofmt.IndexArenas] += h.Arenas
		s.Value[pprofmt.IndexReserved] += h.Reserved
		s.Value[pprofmt.IndexUsed] += h.Used
	}
	b.keyBuf = key
	if err := b.p.CheckValid(); err != nil {
		return nil, fmt.Errorf("export: live-arenas profile: %w", err)
	}
	return b.p, nil
}

// arenasLabels returns the string labels of the live-arenas sample of h:
// its arena labels, and its pool (idle arenas) or age bucket.
func arenasLabels(h holdings.Holding, age string) map[string][]string {
	labels := map[string][]string{}
	if h.Labels != nil {
		for k, v := range h.Labels.All {
			switch k {
			case pprofmt.LabelAge, pprofmt.LabelPoolIdle, pprofmt.LabelPool:
				k = pprofmt.ReservedLabelPrefix + k
			}
			labels[k] = append(labels[k], v)
		}
	}
	if h.Pool != 0 {
		labels[pprofmt.LabelPoolIdle] = []string{"true"}
		labels[pprofmt.LabelPool] = []string{strconv.FormatUint(h.Pool, 10)}
	} else {
		labels[pprofmt.LabelAge] = []string{age}
	}
	return labels
}
