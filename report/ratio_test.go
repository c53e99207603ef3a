package report

import (
	"math"
	"testing"

	"github.com/arenaprof/arenaprof/internal/testkit/binom"
)

// With one weight per side of objects small against the mean, the
// interval is the inverted conditional
// binomial test: at the lower bound rho, given n = x+y events, P(Y >= y)
// under Binomial(n, rho*wb/(wn+rho*wb)) (the share of NEW's events) is
// alpha/2, and at the upper bound P(Y <= y) is alpha/2. Checked against
// binomial sums computed term by term.
func TestRatioIntervalConditional(t *testing.T) {
	for _, c := range []struct {
		x, y   int
		wb, wn float64
		conf   float64
	}{
		{12, 24, 1024, 1024, 0.95},
		{12, 12, 1024, 1024, 0.95},
		{1, 1, 4096, 4096, 0.9},
		{30, 7, 1024, 3000, 0.99},
		{200, 150, 512, 512, 0.95},
	} {
		var b, n ratioSums
		// Objects far smaller than the mean: the Poisson limit.
		b.add(float64(c.x), c.wb, c.wb*1e-12)
		n.add(float64(c.y), c.wn, c.wn*1e-12)
		lo, hi, err := ratioInterval(b, b, n, n, c.conf)
		if err != nil {
			t.Fatal(err)
		}
		a := (1 - c.conf) / 2
		share := func(rho float64) float64 { // P(an event is NEW's) at true ratio rho
			return rho / c.wn / (rho/c.wn + 1/c.wb)
		}
		total := c.x + c.y
		if got := binom.Tail(total, c.y, share(lo)); math.Abs(got-a) > 1e-6*a {
			t.Errorf("%+v: P(Y >= y) at the lower bound %v is %v, want %v", c, lo, got, a)
		}
		if got := 1 - binom.Tail(total, c.y+1, share(hi)); math.Abs(got-a) > 1e-6*a {
			t.Errorf("%+v: P(Y <= y) at the upper bound %v is %v, want %v", c, hi, got, a)
		}
	}
}

// Edge cases: exact sides, empty sides, and a side whose events are all
// certain (mean 1) against a sampled one.
func TestRatioIntervalEdges(t *testing.T) {
	exact := func(bytes float64) ratioSums { var r ratioSums; r.add(1, bytes, bytes); return r }
	sampled := func(c, w float64) ratioSums { var r ratioSums; r.add(c, w, 1); return r }
	for _, c := range []struct {
		name           string
		base, next     ratioSums
		loMax, hiMin   float64 // lo <= loMax, hi >= hiMin
		wantLo, wantHi float64 // exact values when not NaN
	}{
		{name: "both exact", base: exact(100), next: exact(150), wantLo: 1.5, wantHi: 1.5},
		{name: "base exact", base: exact(1000), next: sampled(10, 100), loMax: 1, hiMin: 1, wantLo: math.NaN()},
		{name: "new exact", base: sampled(10, 100), next: exact(1000), loMax: 1, hiMin: 1, wantLo: math.NaN()},
		{name: "new empty", base: sampled(10, 100), next: ratioSums{}, wantLo: 0, wantHi: math.NaN(), hiMin: 0},
		{name: "base empty", base: ratioSums{}, next: sampled(10, 100), wantLo: math.NaN(), wantHi: math.Inf(1)},
	} {
		lo, hi, err := ratioInterval(c.base, c.base, c.next, c.next, 0.95)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !(lo <= hi) || lo < 0 {
			t.Errorf("%s: [%v, %v]", c.name, lo, hi)
		}
		if !math.IsNaN(c.wantLo) && lo != c.wantLo && c.loMax == 0 {
			t.Errorf("%s: lo %v, want %v", c.name, lo, c.wantLo)
		}
		if !math.IsNaN(c.wantHi) && hi != c.wantHi && c.hiMin == 0 {
			t.Errorf("%s: hi %v, want %v", c.name, hi, c.wantHi)
		}
		if c.loMax > 0 && !(lo <= c.loMax && hi >= c.hiMin) {
			t.Errorf("%s: [%v, %v] does not hold 1", c.name, lo, hi)
		}
	}
}

// FuzzRatioInterval feeds arbitrary sums: the interval is never NaN,
// never negative and ordered, and it widens with the confidence.
func FuzzRatioInterval(f *testing.F) {
	f.Add(12.0, 1024.0, 24.0, 1024.0, 0.95)
	f.Add(0.0, 1.0, 1e9, 1e12, 0.5)
	f.Add(1.0, 4096.0, 1.0, 1.0, 1-1e-9)
	f.Fuzz(func(t *testing.T, x, wb, y, wn, conf float64) {
		if !(x >= 0 && y >= 0 && x < 1e12 && y < 1e12 && wb >= 1 && wn >= 1 && wb < 1e15 && wn < 1e15 && conf > 0 && conf < 1) {
			return
		}
		var b, n ratioSums
		b.add(math.Floor(x), wb, 1)
		n.add(math.Floor(y), wn, 1)
		lo, hi, err := ratioInterval(b, b, n, n, conf)
		if err != nil {
			return // reported to the caller as an error, not a wrong bound
		}
		if math.IsNaN(lo) || math.IsNaN(hi) || lo < 0 || lo > hi {
			t.Fatalf("x %v wb %v y %v wn %v conf %v: [%v, %v]", x, wb, y, wn, conf, lo, hi)
		}
		if conf < 0.99 {
			lo2, hi2, err := ratioInterval(b, b, n, n, 0.995)
			if err == nil && (lo2 > lo*(1+1e-9) || hi2 < hi*(1-1e-9)) {
				t.Fatalf("x %v y %v: [%v, %v] at %v, [%v, %v] at 0.995", x, y, lo, hi, conf, lo2, hi2)
			}
		}
	})
}
