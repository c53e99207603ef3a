package export

import (
	"encoding/binary"
	"fmt"
	"net/http"
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
func BuildArenas() (*profile.Profile, error) {
	hs := holdings.Read()
	b := newBuilder(new(Builder))
	defer b.done()
	b.p.SampleType = pprofmt.HoldingTypes()
	b.p.DefaultSampleType = b.p.SampleType[pprofmt.IndexReserved].Type
	b.p.Comments = []string{pprofmt.HoldingsComment}
	// Memory, as Pyroscope files it (memory:reserved_space:bytes:space:bytes);
	// a period of 1: every arena counts, none is sampled.
	b.p.PeriodType = &profile.ValueType{Type: "space", Unit: "bytes"}
	b.p.Period = 1
	b.p.TimeNanos = time.Now().UnixNano()
	samples := map[string]*profile.Sample{}
	var key []byte
	for _, h := range hs {
		key = key[:0]
		for _, pc := range h.Stack {
			key = binary.LittleEndian.AppendUint64(key, uint64(pc))
		}
		labels := map[string][]string{}
		for k, v := range h.Labels.All {
			switch k {
			case pprofmt.LabelAge, pprofmt.LabelPoolIdle, pprofmt.LabelPool:
				k = pprofmt.ReservedLabelPrefix + k
			}
			labels[k] = append(labels[k], v)
		}
		if h.Pool != 0 {
			labels[pprofmt.LabelPoolIdle] = []string{"true"}
			labels[pprofmt.LabelPool] = []string{strconv.FormatUint(h.Pool, 10)}
		} else {
			labels[pprofmt.LabelAge] = []string{pprofmt.AgeBucket(h.Age)}
		}
		key = fmt.Appendf(key, "|%s|%d|%s", h.Labels.Key(), h.Pool, labels[pprofmt.LabelAge])
		s := samples[string(key)]
		if s == nil {
			s = &profile.Sample{
				Location: b.stackLocations(h.Stack),
				Value:    make([]int64, pprofmt.NumHoldingTypes),
				Label:    labels,
			}
			samples[string(key)] = s
			b.p.Sample = append(b.p.Sample, s)
		}
		s.Value[pprofmt.IndexArenas] += h.Arenas
		s.Value[pprofmt.IndexReserved] += h.Reserved
		s.Value[pprofmt.IndexUsed] += h.Used
	}
	if err := b.p.CheckValid(); err != nil {
		return nil, fmt.Errorf("export: live-arenas profile: %w", err)
	}
	return b.p, nil
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
