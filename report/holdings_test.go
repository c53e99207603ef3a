package report

import (
	"bytes"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/internal/testkit/fixture"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// hv returns the values of a live-arenas sample.
func hv(arenas, reserved, used int64) []int64 {
	v := make([]int64, pprofmt.NumHoldingTypes)
	v[pprofmt.IndexArenas], v[pprofmt.IndexReserved], v[pprofmt.IndexUsed] = arenas, reserved, used
	return v
}

// holdingsFixture is a live-arenas profile of two sites and an idle pool.
func holdingsFixture() *profile.Profile {
	fa := &profile.Function{ID: 1, Name: "main.leaky"}
	fb := &profile.Function{ID: 2, Name: "main.busy"}
	la := &profile.Location{ID: 1, Line: []profile.Line{{Function: fa}}}
	lb := &profile.Location{ID: 2, Line: []profile.Line{{Function: fb}}}
	return &profile.Profile{
		SampleType: pprofmt.HoldingTypes(),
		Function:   []*profile.Function{fa, fb},
		Location:   []*profile.Location{la, lb},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{la}, Value: hv(2, 2<<20, 100), Label: map[string][]string{pprofmt.LabelAge: {">1h"}}},
			{Location: []*profile.Location{la}, Value: hv(1, 1<<20, 0), Label: map[string][]string{pprofmt.LabelAge: {"1m-10m"}}},
			{Location: []*profile.Location{lb}, Value: hv(3, 3<<20, 3<<20), Label: map[string][]string{pprofmt.LabelAge: {"<1s"}, "endpoint": {"/x"}}},
			{Location: []*profile.Location{lb}, Value: hv(4, 4<<20, 0), Label: map[string][]string{pprofmt.LabelPoolIdle: {"true"}, pprofmt.LabelPool: {"1"}}},
		},
	}
}

func TestHoldings(t *testing.T) {
	p := holdingsFixture()
	for _, c := range []struct {
		by    string
		old   time.Duration
		first string
		rows  []HoldingsRow
	}{
		{"", 0, "", []HoldingsRow{
			{Key: "(idle arenas of pool 1)", Arenas: 4, Reserved: 4 << 20, Idle: true},
			{Key: "main.busy", Display: "main.busy", Arenas: 3, Reserved: 3 << 20, Used: 3 << 20},
			{Key: "main.leaky", Display: "main.leaky", Arenas: 3, Reserved: 3 << 20, Used: 100, Old: 2},
		}},
		{"", time.Minute, "", []HoldingsRow{
			{Key: "(idle arenas of pool 1)", Arenas: 4, Reserved: 4 << 20, Idle: true},
			{Key: "main.busy", Display: "main.busy", Arenas: 3, Reserved: 3 << 20, Used: 3 << 20},
			{Key: "main.leaky", Display: "main.leaky", Arenas: 3, Reserved: 3 << 20, Used: 100, Old: 3},
		}},
		{"label=" + "endpoint", 0, "", []HoldingsRow{
			{Key: "(idle arenas of pool 1)", Arenas: 4, Reserved: 4 << 20, Idle: true},
			{Key: "(none)", Arenas: 3, Reserved: 3 << 20, Used: 100, Old: 2},
			{Key: "/x", Arenas: 3, Reserved: 3 << 20, Used: 3 << 20},
		}},
	} {
		res, err := Holdings(p, HoldingsOptions{By: c.by, OldAge: c.old})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != len(c.rows) {
			t.Fatalf("%v: rows %+v", c.by, res.Rows)
		}
		for i, r := range res.Rows {
			if r != c.rows[i] {
				t.Errorf("%v -old %v: row %d %+v, want %+v", c.by, c.old, i, r, c.rows[i])
			}
		}
		if res.Total.Arenas != 10 || res.Total.Reserved != 10<<20 {
			t.Errorf("total %+v", res.Total)
		}
	}
	for _, by := range []string{"type", "size"} {
		if _, err := Holdings(p, HoldingsOptions{By: by}); err == nil {
			t.Errorf("-by %s accepted", by)
		}
	}
	if _, err := Holdings(fixture.Arena(t), HoldingsOptions{}); err == nil {
		t.Error("an allocation profile read as a live-arenas profile")
	}
}

// FuzzHoldings checks that any profile that parses and claims the
// live-arenas sample types is tabled and compared with itself without a
// panic, its total the sum of its rows, nothing growing against itself.
func FuzzHoldings(f *testing.F) {
	var buf bytes.Buffer
	if err := holdingsFixture().Write(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(bytes.NewReader(data), ParseOptions{MaxMemory: 64 << 20})
		if err != nil || !pprofmt.IsHoldings(p) {
			return
		}
		for _, by := range []string{"func", "stack", "label=age"} {
			res, err := Holdings(p, HoldingsOptions{By: by})
			if err != nil {
				continue // a malformed sample
			}
			var arenas int64
			for _, r := range res.Rows {
				arenas += r.Arenas
			}
			if arenas != res.Total.Arenas {
				t.Fatalf("rows sum to %d arenas, total %d", arenas, res.Total.Arenas)
			}
			rows, _, err := DiffHoldings(p, p, by)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if r.Growing {
					t.Fatalf("%q grows against itself", r.Key)
				}
			}
		}
	})
}
