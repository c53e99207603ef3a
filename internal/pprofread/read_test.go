package pprofread

import (
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/testkit/fixture"
	"github.com/arenaprof/arenaprof/internal/testkit/memtest"

	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"
)

// gzipped returns data compressed with gzip.
func gzipped(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	zw.Close()
	return buf.Bytes()
}

func TestParseBounds(t *testing.T) {
	var prof bytes.Buffer
	if err := fixture.Arena(t).Write(&prof); err != nil { // gzipped
		t.Fatal(err)
	}
	var raw bytes.Buffer
	if err := fixture.Arena(t).WriteUncompressed(&raw); err != nil {
		t.Fatal(err)
	}
	bomb := gzipped(t, make([]byte, 8<<20)) // 8 MiB of zeros in ~8 KiB
	for _, tc := range []struct {
		name  string
		data  []byte
		limit int64
		want  string // "" for success
	}{
		{"gzipped", prof.Bytes(), 0, ""},
		{"uncompressed", raw.Bytes(), 0, ""},
		{"bomb", bomb, 1 << 20, "larger than the size limit"},
		{"compressed too large", prof.Bytes(), int64(prof.Len() - 1), "larger than the size limit"},
		{"uncompressed too large", raw.Bytes(), int64(raw.Len() - 1), "larger than the size limit"},
		{"exactly at the limit", raw.Bytes(), int64(raw.Len()), ""},
		{"empty", nil, 0, "empty"},
		{"spaces", []byte("  \n"), 0, "empty"},
		{"text", []byte("hello, world"), 0, "not a pprof profile"},
		{"bad gzip", []byte{0x1f, 0x8b, 1, 2, 3}, 0, "gzip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := parse(bytes.NewReader(tc.data), Options{MaxBytes: tc.limit})
			if tc.want == "" {
				if err != nil || p == nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse: error %v, want %q", err, tc.want)
			}
			if strings.Contains(tc.want, "size limit") && !errors.Is(err, pprofmt.ErrTooLarge) {
				t.Errorf("error %v is not pprofmt.ErrTooLarge", err)
			}
		})
	}
}

// FuzzParse checks that Read (report.Parse) never panics and never returns a profile
// from data that decompresses to more than its bound.
func FuzzParse(f *testing.F) {
	var prof bytes.Buffer
	if err := fixture.Arena(f).Write(&prof); err != nil {
		f.Fatal(err)
	}
	f.Add(prof.Bytes(), int64(0))
	f.Add(gzipped(f, make([]byte, 4096)), int64(100))
	f.Add([]byte("x"), int64(1))
	f.Fuzz(func(t *testing.T, data []byte, limit int64) {
		if limit > 1<<20 || limit <= 0 {
			limit = 1 << 20
		}
		p, err := parse(bytes.NewReader(data), Options{MaxBytes: limit})
		if err == nil && p == nil {
			t.Fatal("nil profile without an error")
		}
		if err != nil && err.Error() == "" {
			t.Fatal("empty error")
		}
	})
}

// emptySamples returns n empty Sample records: 2 bytes each on the wire,
// about 200 decoded.
func emptySamples(n int) []byte { return bytes.Repeat([]byte{0x12, 0x00}, n) }

// TestParseBombsBounded: every kind of bomb is refused, and refusing it
// allocates a small part of what reading it whole would.
func TestParseBombsBounded(t *testing.T) {
	decoderBomb := gzipped(t, emptySamples(32<<20)) // 64 MiB of empty samples in ~64 KiB
	zeros := gzipped(t, make([]byte, 256<<20))      // 256 MiB of zeros in ~256 KiB
	nested := gzipped(t, gzipped(t, make([]byte, 256<<20)))
	bigRecord := new(pb).varint(2<<3 | 2).varint(1 << 40).b // a sample declared 1 TiB long
	hiddenLegacy := new(pb).field(6, []byte("heap profile: 1: 2 [3: 4] @ heap/1048576\n"+strings.Repeat("0: 0 [0: 0] @\n", 150000))).b
	for _, tc := range []struct {
		name     string
		data     []byte
		opts     Options
		want     error  // nil: any error containing msg
		msg      string // for want == nil
		maxAlloc uint64
	}{
		{"decoder bomb, gzipped", decoderBomb, Options{}, pprofmt.ErrMemoryLimit, "", 32 << 20},
		{"decoder bomb, plain", emptySamples(8 << 20), Options{}, pprofmt.ErrMemoryLimit, "", 64 << 20},
		{"decoder bomb, small memory bound", decoderBomb, Options{MaxMemory: 1 << 20}, pprofmt.ErrMemoryLimit, "", 4 << 20},
		{"gzip of zeros", zeros, Options{}, pprofmt.ErrMemoryLimit, "", 32 << 20},
		{"gzip of zeros, size bound", zeros, Options{MaxBytes: 1 << 20}, pprofmt.ErrTooLarge, "", 8 << 20},
		{"gzip of zeros, high memory bound", zeros, Options{MaxBytes: 64 << 20, MaxMemory: 16 << 30}, pprofmt.ErrTooLarge, "", 200 << 20},
		{"nested gzip", nested, Options{}, nil, "gzip data inside gzip data", 8 << 20},
		{"record declared huge", bigRecord, Options{}, pprofmt.ErrMemoryLimit, "", 1 << 20},
		// The decoder falls back to the legacy parsers when a protobuf
		// message fails to decode: 2 MB of legacy heap lines in a string
		// would decode to 120 MB of samples.
		{"legacy text inside a protobuf string", hiddenLegacy, Options{}, nil, "not a pprof profile", 16 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			got := memtest.AllocDuring(func() { _, err = parse(bytes.NewReader(tc.data), tc.opts) })
			t.Logf("%d bytes in, %d allocated: %v", len(tc.data), got, err)
			switch {
			case err == nil:
				t.Fatal("no error")
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("error %v, want %v", err, tc.want)
			case tc.want == nil && !strings.Contains(err.Error(), tc.msg):
				t.Fatalf("error %v, want %q", err, tc.msg)
			}
			if errors.Is(err, pprofmt.ErrMemoryLimit) && !errors.Is(err, pprofmt.ErrTooLarge) {
				t.Errorf("%v does not wrap pprofmt.ErrTooLarge", err)
			}
			if got > tc.maxAlloc {
				t.Errorf("allocated %d bytes refusing it, want at most %d", got, tc.maxAlloc)
			}
		})
	}
}

// TestParseMemoryBoundEdge: a profile is read when its memory need is
// exactly the bound and refused one byte below, and the error gives the
// need.
func TestParseMemoryBoundEdge(t *testing.T) {
	var raw bytes.Buffer
	if err := fixture.BigHeap(2000, 8).WriteUncompressed(&raw); err != nil {
		t.Fatal(err)
	}
	data := raw.Bytes()
	var sc memScan
	sc.scan(data)
	need := 4*int64(len(data)) + sc.estimate(data, true)
	for _, gz := range []bool{false, true} {
		in := data
		if gz {
			in = gzipped(t, data)
		}
		if _, err := parse(bytes.NewReader(in), Options{MaxMemory: need}); err != nil {
			t.Errorf("gzip %v, bound %d: %v", gz, need, err)
		}
		_, err := parse(bytes.NewReader(in), Options{MaxMemory: need - 1})
		if !errors.Is(err, pprofmt.ErrMemoryLimit) {
			t.Errorf("gzip %v, bound %d: error %v, want pprofmt.ErrMemoryLimit", gz, need-1, err)
		}
	}
}

// TestParseDefaultBoundAdmits: the default memory bound reads a Go heap
// profile of 100,000 samples with 16-frame stacks whole.
func TestParseDefaultBoundAdmits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 100,000-sample profile")
	}
	var buf bytes.Buffer
	if err := fixture.BigHeap(100000, 16).Write(&buf); err != nil {
		t.Fatal(err)
	}
	p, err := parse(&buf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) != 100000 {
		t.Fatalf("%d samples", len(p.Sample))
	}
}

// TestParseNotProfile: a refusal at the memory bound says whether the data
// is no profile at all (zeros, bytes no decoder reads), and never says so
// of data that may be one: a protobuf profile, a legacy text profile, the
// binary legacy CPU format, binary data whose first line holds letters.
func TestParseNotProfile(t *testing.T) {
	cpu := make([]byte, 64<<10)
	cpu[8] = 3 // 8-byte little-endian words 0, 3, 0, ...
	legacyText := []byte("heap profile: 1: 2 [3: 4] @ heap/1048576\n" + strings.Repeat("1: 2 [3: 4] @ 0x1 0x2\n", 20000))
	for _, tc := range []struct {
		name       string
		data       []byte
		notProfile bool
	}{
		{"zeros", make([]byte, 4<<20), true},
		{"gzip of zeros", gzipped(t, make([]byte, 4<<20)), true},
		{"0xff bytes", bytes.Repeat([]byte{0xff}, 4<<20), true},
		{"protobuf samples", emptySamples(1 << 20), false},
		{"legacy heap text", legacyText, false},
		{"legacy CPU header", cpu, false},
		{"binary with letters on the first line", append([]byte("\x00\x00heap profile:"), make([]byte, 1<<20)...), false},
	} {
		_, err := parse(bytes.NewReader(tc.data), Options{MaxMemory: 1 << 20})
		var mle *pprofmt.MemoryLimitError
		if !errors.As(err, &mle) || !errors.Is(err, pprofmt.ErrMemoryLimit) || !errors.Is(err, pprofmt.ErrTooLarge) {
			t.Fatalf("%s: error %v, want a MemoryLimitError", tc.name, err)
		}
		if mle.NotProfile != tc.notProfile || mle.Limit != 1<<20 || mle.Need <= mle.Limit {
			t.Errorf("%s: %+v, want NotProfile %v, Limit 1MiB, Need above it", tc.name, *mle, tc.notProfile)
		}
		if got := strings.Contains(err.Error(), "not a profile"); got != tc.notProfile {
			t.Errorf("%s: %q says not a profile: %v", tc.name, err, got)
		}
	}
}
