package workload

import (
	"hash/fnv"
	"strings"
	"testing"
)

// digest hashes a stream and returns its per-type bytes and objects.
func digest(w *Workload, seed uint64) (sum uint64, bytes, objects []int64, err string) {
	h := fnv.New64a()
	bytes = make([]int64, len(w.Types))
	objects = make([]int64, len(w.Types))
	var buf [24]byte
	for a := range w.Stream(seed) {
		if a.Type < 0 || a.Type >= len(w.Types) {
			return 0, nil, nil, "type index out of range"
		}
		t := w.Types[a.Type]
		if a.Size < t.MinSize || a.Size > t.MaxSize || a.Size%8 != 0 {
			return 0, nil, nil, "size outside the type's bounds or not a multiple of 8"
		}
		bytes[a.Type] += a.Size
		objects[a.Type]++
		for i := range 8 {
			buf[i] = byte(a.Type >> (8 * i))
			buf[8+i] = byte(a.Size >> (8 * i))
			buf[16+i] = byte(a.Request >> (8 * i))
		}
		h.Write(buf[:])
	}
	return h.Sum64(), bytes, objects, ""
}

func TestStreams(t *testing.T) {
	small, err := NewRequests(256)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		w          *Workload
		seedMatter bool
	}{
		{Periodic(), false},
		{Mixed(), true},
		{Requests(), true},
		{small, true},
	}
	for _, tc := range tests {
		t.Run(tc.w.Name, func(t *testing.T) {
			var first uint64
			for i, seed := range []uint64{1, 1, 2} {
				sum, bytes, objects, bad := digest(tc.w, seed)
				if bad != "" {
					t.Fatalf("seed %d: %s", seed, bad)
				}
				for ti := range tc.w.Types {
					if bytes[ti] != tc.w.Totals[ti] || objects[ti] != tc.w.Objects[ti] {
						t.Errorf("seed %d, %s: %d bytes in %d objects, advertised %d in %d",
							seed, tc.w.Types[ti].Name, bytes[ti], objects[ti], tc.w.Totals[ti], tc.w.Objects[ti])
					}
				}
				switch i {
				case 0:
					first = sum
				case 1:
					if sum != first {
						t.Errorf("seed %d gave two different streams", seed)
					}
				case 2:
					if (sum != first) != tc.seedMatter {
						t.Errorf("seeds 1 and 2: streams differ = %v, want %v", sum != first, tc.seedMatter)
					}
				}
			}
		})
	}
}

func TestTotalsScale(t *testing.T) {
	// The study wants about 1000 samples per run at a mean of 102400.
	for _, w := range All() {
		if tb := w.TotalBytes(); tb < 100e6 || tb > 120e6 {
			t.Errorf("%s: %d bytes in all, want 100..120 MB", w.Name, tb)
		}
	}
}

func TestPeriodicResonates(t *testing.T) {
	if 102400%PeriodicCycle != 0 {
		t.Fatalf("cycle %d does not divide 102400", PeriodicCycle)
	}
	var n int64
	for a := range Periodic().Stream(0) {
		n += a.Size
		if n == PeriodicCycle {
			break
		}
		if n > PeriodicCycle {
			t.Fatalf("pattern does not end on %d bytes", PeriodicCycle)
		}
	}
}

func TestStopEarly(t *testing.T) {
	for _, w := range All() {
		n := 0
		for range w.Stream(3) {
			n++
			if n == 5 {
				break
			}
		}
		if n != 5 {
			t.Errorf("%s: got %d allocations before break", w.Name, n)
		}
	}
}

func TestByName(t *testing.T) {
	for _, name := range []string{"periodic", "mixed", "requests"} {
		w, err := ByName(name)
		if err != nil || w.Name != name {
			t.Errorf("ByName(%q) = %v, %v", name, w, err)
		}
	}
	if _, err := ByName("nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("ByName(nope) error = %v", err)
	}
}

func TestNewRequestsRejects(t *testing.T) {
	for _, n := range []int{-128, 0, 1, 64, 127, 129, 1<<24 + 128} {
		if _, err := NewRequests(n); err == nil {
			t.Errorf("NewRequests(%d) accepted", n)
		}
	}
}

func FuzzNewRequests(f *testing.F) {
	for _, n := range []int{-1, 0, 128, 200, 1 << 24, 1<<24 + 128} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, n int) {
		w, err := NewRequests(n)
		if err != nil {
			if w != nil {
				t.Fatal("workload returned with an error")
			}
			return
		}
		if n%128 != 0 || n <= 0 {
			t.Fatalf("NewRequests(%d) accepted", n)
		}
		for ti, b := range w.Totals {
			if b <= 0 || w.Objects[ti] <= 0 {
				t.Fatalf("NewRequests(%d): type %d has %d bytes in %d objects", n, ti, b, w.Objects[ti])
			}
		}
	})
}
