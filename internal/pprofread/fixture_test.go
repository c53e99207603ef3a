package pprofread

import (
	"io"
	"math"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// parse is Read without the cost: what report.Parse returns.
func parse(r io.Reader, o Options) (*profile.Profile, error) {
	p, _, err := Read(r, o)
	return p, err
}

// fixtureBucket is one sample of the hand-built table fixture.
type fixtureBucket struct {
	stack   []string // leaf first
	typ     string
	handler string // label "handler"; "" for none
	size    int64
	mean    int64
	samples int64
	tail    int64
	live    int64 // events still in use
}

const (
	fxParseUser = "github.com/x/svc.parseUser"
	fxParseOrd  = "github.com/x/svc.parseOrder"
	fxHandle    = "github.com/x/svc.(*server).handle"
)

var fixtureBuckets = []fixtureBucket{
	{[]string{fxParseUser, fxHandle}, "svc.user", "users", 96, 102400, 310, 15120, 40},
	{[]string{fxParseUser, fxHandle}, "svc.user", "users", 96, 4096, 120, 5890, 0},
	{[]string{fxParseOrd, fxHandle}, "svc.order", "orders", 160, 102400, 205, 16400, 31},
	{[]string{fxParseOrd}, "[]uint8", "", 1 << 20, 102400, 1024, 968900000, 3},
	{[]string{fxParseUser, fxHandle}, "svc.user", "admin", 96, 102400, 0, 0, 0}, // empty
}

// arenaFixture builds an arenaprof profile of fixtureBuckets (a copy of
// report's table fixture), with its sample types in the reverse of the
// exporter's order: a profile with string and numeric labels.
func arenaFixture(t testing.TB) *profile.Profile {
	st := pprofmt.SampleTypes()
	rev := make([]*profile.ValueType, len(st))
	for i := range st {
		rev[len(st)-1-i] = st[i]
	}
	p := &profile.Profile{
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:     102400,
		SampleType: rev,
		Comments:   []string{pprofmt.WindowComment(estimate.WindowEnd)},
	}
	locs := map[string]*profile.Location{}
	for _, b := range fixtureBuckets {
		w, err := estimate.WeightedBytes(b.size, b.mean)
		if err != nil {
			t.Fatal(err)
		}
		space := int64(math.Round(float64(b.samples) * w))
		inuse := int64(math.Round(float64(b.live) * w))
		vals := []int64{space / b.size, space, inuse / b.size, inuse, b.samples, b.tail}
		for i, j := 0, len(vals)-1; i < j; i, j = i+1, j-1 {
			vals[i], vals[j] = vals[j], vals[i]
		}
		s := &profile.Sample{
			Value:    vals,
			Label:    map[string][]string{pprofmt.LabelType: {b.typ}},
			NumLabel: map[string][]int64{pprofmt.LabelBytes: {b.size}, pprofmt.LabelMean: {b.mean}},
		}
		if b.handler != "" {
			s.Label["handler"] = []string{b.handler}
		}
		for _, fn := range b.stack {
			l := locs[fn]
			if l == nil {
				f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: fn}
				p.Function = append(p.Function, f)
				l = &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
				p.Location = append(p.Location, l)
				locs[fn] = l
			}
			s.Location = append(s.Location, l)
		}
		p.Sample = append(p.Sample, s)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	return p
}
