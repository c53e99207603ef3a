package export

import (
	"encoding/binary"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/buildlimit"
	"github.com/arenaprof/arenaprof/internal/holdings"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// BuildArenas returns the live-arenas profile of the process: where arena
// memory is held now, read from package arena's registry of live arenas
// (empty when the program does not use package arena). Its sample types are
// reserved_space/bytes (the bytes of chunks and large buffers the arenas
// hold; the default), used_space/bytes (the bytes handed out since their
// last Reset) and arenas/count. Live arenas make one sample per
// creating stack (the caller of arena.NewArena, or of Pool.Get for a
// pooled arena), arena labels and age bucket (the string label "age":
// time since the arena was made or taken from its pool); the idle arenas
// of each pool make one sample of their own, labelled pool_idle=true and
// pool=N, with no age. The values are exact counts and bytes, not samples:
// they carry no interval.
//
// go tool pprof reads it: -sample_index=arenas counts arenas instead of
// bytes, -tagfocus=age=10m-1h keeps the arenas of one age.
func BuildArenas() (*profile.Profile, error) { return new(Builder).BuildArenas() }

// arenasSlot is a live-arenas sample's key kept by a Builder between
// profiles: its label map, and its sample in the profile of generation
// gen.
type arenasSlot struct {
	labels map[string][]string
	gen    uint64
	sample int
}

// BuildArenas returns what [BuildArenas] returns, in the Builder's memory.
func (r *Builder) BuildArenas() (*profile.Profile, error) {
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

// ArenasHandler returns an HTTP handler that serves the live-arenas
// profile of the process (see [BuildArenas]), with the conventions of
// [Handler]; it takes no parameters. Mount it where you like, e.g.
//
//	mux.Handle("/debug/arenaprof/arenas", export.ArenasHandler())
//
// It needs no profiler: the registry of live arenas is always kept.
// WithFilename applies; the other options are ignored.
func ArenasHandler(opts ...HandlerOption) http.Handler {
	cfg := handlerConfig{filename: "arenas.pb.gz"}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	cfg.limiter = buildlimit.New(0)
	return &arenasHandler{cfg: cfg}
}

type arenasHandler struct{ cfg handlerConfig }

func (h *arenasHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for k := range r.URL.Query() {
		serveError(w, http.StatusBadRequest, fmt.Sprintf("arenaprof: the live-arenas profile takes no parameter, got %q", k))
		return
	}
	release, ok := startBuild(h.cfg.limiter, w, r, buildWait)
	if !ok {
		return
	}
	defer release()
	prof, err := BuildArenas()
	if err != nil {
		serveError(w, http.StatusInternalServerError, "arenaprof: "+err.Error())
		return
	}
	serveProfile(w, h.cfg.filename, prof)
}
