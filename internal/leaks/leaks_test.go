package leaks

import (
	"math"
	"strings"
	"testing"
)

func TestWindow(t *testing.T) {
	for _, tc := range []struct {
		times []float64
		from  int
		err   string
	}{
		{seconds(8), 4, ""},
		{seconds(9), 4, ""},                          // mid 5: snapshots 5..9
		{seconds(600), 300, ""},                      // mid 300.5
		{[]float64{0, 1, 2, 3, 4, 5, 6, 100}, 4, ""}, // at least 4
		{seconds(7), 0, "7 snapshots; at least 8 are needed"},
		{[]float64{1, 2, 3, 3, 4, 5, 6, 7}, 0, "not increasing at snapshot 3"},
	} {
		from, err := Window(tc.times)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Window(%v) = %v, want an error with %q", tc.times, err, tc.err)
			}
			continue
		}
		if err != nil || from != tc.from {
			t.Errorf("Window(%v) = %d, %v, want %d", tc.times, from, err, tc.from)
		}
	}
}

// TestFitExact: exact bytes (no sampling variance) on a line give its
// slope with no width; a flat series, and one that grew in its first half
// only, give 0 and are not flagged.
func TestFitExact(t *testing.T) {
	times := seconds(100)
	line, flat, cache := make([]float64, 100), make([]float64, 100), make([]float64, 100)
	for i, x := range times {
		line[i] = 1000 + 50*x
		flat[i] = 1 << 20
		cache[i] = math.Min(x, 40) * 4096
	}
	e, err := New(times, 3, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		y    []float64
		rate float64
	}{{"line", line, 50}, {"flat", flat, 0}, {"cache", cache, 0}} {
		v := make([]float64, len(tc.y))
		for i, y := range tc.y {
			v[i] = y * Dispersion(64, 512<<10)
		}
		f, err := e.Fit(tc.y, v)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(f.Rate-tc.rate) > 1e-6*math.Max(1, tc.rate) {
			t.Errorf("%s: rate %v, want %v", tc.name, f.Rate, tc.rate)
		}
		if tc.rate == 0 && (f.Lo > 0 || f.SE != 0) {
			t.Errorf("%s: %+v, want no width and no flag", tc.name, f)
		}
	}
}

// TestFitErrors: bad lengths and values are refused, naming them.
func TestFitErrors(t *testing.T) {
	if _, err := New(seconds(8), 0, 0.95); err == nil {
		t.Error("New with no group: no error")
	}
	if _, err := New(seconds(8), 1, 1); err == nil {
		t.Error("New at confidence 1: no error")
	}
	if _, err := New([]float64{1, 2, 3, 4, 5, 6, 7, math.Inf(1)}, 1, 0.9); err == nil {
		t.Error("New with an infinite time: no error")
	}
	e, err := New(seconds(8), 1, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Fit(make([]float64, 7), nil); err == nil {
		t.Error("Fit of 7 values for 8 snapshots: no error")
	}
	y := make([]float64, 8)
	y[6] = math.NaN()
	if _, err := e.Fit(y, nil); err == nil || !strings.Contains(err.Error(), "snapshot 6") {
		t.Errorf("Fit with NaN: %v", err)
	}
	v := make([]float64, 8)
	v[5] = -1
	if _, err := e.Fit(make([]float64, 8), v); err == nil || !strings.Contains(err.Error(), "snapshot 5") {
		t.Errorf("Fit with a negative variance: %v", err)
	}
}

func TestDispersion(t *testing.T) {
	const r = 512 << 10
	for _, tc := range []struct {
		size int64
		want float64
	}{{0, r}, {-1, r}, {1, r - 0.5}, {r, r / (math.E - 1)}, {1 << 40, 0}} {
		if got := Dispersion(tc.size, r); math.Abs(got-tc.want) > 1e-3*r {
			t.Errorf("Dispersion(%d) = %v, want %v", tc.size, got, tc.want)
		}
	}
}

// FuzzFit: whatever the times, values and variances, New and Fit return
// an error or finite bounds around the rate.
func FuzzFit(f *testing.F) {
	f.Add(1.0, 2.0, 3.0, 100.0, 5.0, 0.95)
	f.Add(-1e300, 1e300, 0.0, -5.0, 1e-300, 0.5)
	f.Fuzz(func(t *testing.T, step, jitter, base, slope, variance, conf float64) {
		times := make([]float64, 12)
		y, v := make([]float64, 12), make([]float64, 12)
		for i := range times {
			times[i] = float64(i)*step + jitter*float64(i%3)
			y[i] = base + slope*float64(i)
			v[i] = variance * float64(i%4)
		}
		e, err := New(times, 3, conf)
		if err != nil {
			return
		}
		fit, err := e.Fit(y, v)
		if err != nil {
			return
		}
		if !(fit.Lo <= fit.Rate && fit.Rate <= fit.Hi) && !math.IsNaN(fit.Rate) {
			t.Errorf("bounds %v, %v around %v", fit.Lo, fit.Hi, fit.Rate)
		}
	})
}

// TestFitCentroid: the fitted line passes through (T0, Y0): on an exact
// line over uneven times, Y0 is the line's value at T0, and T0 lies
// within the fit's window.
func TestFitCentroid(t *testing.T) {
	times := []float64{0, 1, 3, 4, 8, 9, 10, 12, 15, 17, 18, 22, 23, 25, 30, 31, 33, 40, 41}
	e, err := New(times, 1, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	y := make([]float64, len(times))
	for i, x := range times {
		y[i] = 1000 + 37*x
	}
	f, err := e.Fit(y, nil)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.Y0-(1000+37*f.T0)) > 1e-6 || !(f.T0 > times[e.From()] && f.T0 < times[len(times)-1]) {
		t.Errorf("T0 %v, Y0 %v: not on the line 1000+37t within the fit's window", f.T0, f.Y0)
	}
}
