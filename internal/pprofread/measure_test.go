package pprofread

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/arenaprof/arenaprof/internal/testkit/fixture"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// checkSuggestion refuses data at o, and checks that the bound the refusal
// measured reads it: a memory refusal's Need as MaxMemory, a size
// refusal's Size as MaxBytes. It returns the refusal.
func checkSuggestion(t *testing.T, data []byte, o Options) error {
	t.Helper()
	_, err := parse(bytes.NewReader(data), o)
	var mle *pprofmt.MemoryLimitError
	var sle *pprofmt.SizeLimitError
	switch {
	case errors.As(err, &mle):
		if !mle.Exact {
			return err
		}
		if _, err2 := parse(bytes.NewReader(data), Options{MaxBytes: max(o.MaxBytes, mle.Size), MaxMemory: mle.Need}); errors.Is(err2, pprofmt.ErrTooLarge) {
			t.Fatalf("refused (%v), then refused again at the memory it measured: %v", err, err2)
		}
	case errors.As(err, &sle):
		if !sle.Exact {
			return err
		}
		if _, err2 := parse(bytes.NewReader(data), Options{MaxBytes: sle.Size, MaxMemory: 1 << 40}); errors.Is(err2, pprofmt.ErrTooLarge) {
			t.Fatalf("refused (%v), then refused again at the size it measured: %v", err, err2)
		}
	}
	return err
}

// TestRefusalMeasures: a refusal at either bound reads the rest of the data
// to measure what the whole needs, exactly, and that much reads it.
func TestRefusalMeasures(t *testing.T) {
	var heapRaw bytes.Buffer
	if err := fixture.BigHeap(20000, 16).WriteUncompressed(&heapRaw); err != nil {
		t.Fatal(err)
	}
	legacy := legacyHeapText(4 << 20)
	for _, tc := range []struct {
		name string
		data []byte
		o    Options
		want string
	}{
		{"protobuf at -max-memory", heapRaw.Bytes(), Options{MaxMemory: 1 << 20}, "memory"},
		{"gzipped protobuf at -max-memory", gzipped(t, heapRaw.Bytes()), Options{MaxMemory: 1 << 20}, "memory"},
		{"legacy text at -max-memory", legacy, Options{MaxMemory: 4 << 20}, "memory"},
		{"legacy text at -max-bytes", legacy, Options{MaxBytes: 1 << 20}, "size"},
		{"gzipped at -max-bytes, compressed", gzipped(t, legacy), Options{MaxBytes: 1 << 10}, "size"},
		{"gzipped at -max-bytes, decompressed", gzipped(t, heapRaw.Bytes()), Options{MaxBytes: int64(heapRaw.Len() / 2)}, "size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkSuggestion(t, tc.data, tc.o)
			var mle *pprofmt.MemoryLimitError
			var sle *pprofmt.SizeLimitError
			switch {
			case tc.want == "memory" && errors.As(err, &mle):
				if !mle.Exact || mle.Size == 0 || mle.NotProfile {
					t.Errorf("%+v", mle)
				}
			case tc.want == "size" && errors.As(err, &sle):
				if sle.NotProfile || !sle.Exact && !sle.Compressed {
					t.Errorf("%+v", sle)
				}
			default:
				t.Fatalf("error %v, want a %s refusal", err, tc.want)
			}
		})
	}
	// Data that is no profile is said to be none at either bound.
	text := []byte(strings.Repeat("0123456789 ", 1<<20))
	for _, o := range []Options{{MaxBytes: 1 << 20}, {MaxMemory: 1 << 20}} {
		_, err := parse(bytes.NewReader(append([]byte{0, 0, 0, 0}, text...)), o)
		if err == nil || !strings.Contains(err.Error(), "the data is not a profile") {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// FuzzParseLimits: whatever the data and the bounds, a refusal that
// measured the whole data names bounds that read it.
func FuzzParseLimits(f *testing.F) {
	var prof bytes.Buffer
	if err := fixture.Arena(f).WriteUncompressed(&prof); err != nil {
		f.Fatal(err)
	}
	f.Add(prof.Bytes(), int64(1000), int64(70000))
	f.Add(gzipped(f, prof.Bytes()), int64(500), int64(1<<20))
	f.Add([]byte("heap profile: 1: 2 [3: 4] @ heap/1048576\n1: 2 [3: 4] @ 0x1 0x2\n#\t0x1\tf\n"), int64(1<<20), int64(1000))
	f.Add(emptySamples(1000), int64(1<<20), int64(100000))
	f.Fuzz(func(t *testing.T, data []byte, maxBytes, maxMem int64) {
		if maxBytes <= 0 || maxBytes > 1<<20 || maxMem <= 0 || maxMem > 1<<24 {
			return
		}
		checkSuggestion(t, data, Options{MaxBytes: maxBytes, MaxMemory: maxMem})
	})
}
