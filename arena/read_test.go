package arena

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
)

// errBroken is the error of a failing reader in the tests.
var errBroken = errors.New("broken reader")

// chunkReader returns data in reads of at most n bytes, then err instead
// of io.EOF (nil err: io.EOF); with last, the final data comes with err.
type chunkReader struct {
	data []byte
	n    int
	err  error
	last bool
}

func (r *chunkReader) Read(p []byte) (int, error) {
	err := r.err
	if err == nil {
		err = io.EOF
	}
	if len(r.data) == 0 {
		return 0, err
	}
	k := copy(p[:min(len(p), r.n)], r.data)
	r.data = r.data[k:]
	if r.last && len(r.data) == 0 {
		return k, err
	}
	return k, nil
}

// readAllRef is what ReadAll must return: io.ReadAll of the first limit+1
// bytes, cut to limit with ErrTooLarge when longer.
func readAllRef(r io.Reader, limit int) ([]byte, error) {
	if limit < 0 {
		return nil, errors.New("negative limit")
	}
	if limit < math.MaxInt {
		r = io.LimitReader(r, int64(limit)+1)
	}
	b, err := io.ReadAll(r)
	if len(b) > limit {
		return b[:limit], ErrTooLarge
	}
	return b, err
}

// sameResult reports whether ReadAll's result matches the reference's.
func sameResult(got []byte, gotErr error, want []byte, wantErr error) bool {
	switch {
	case wantErr == nil:
		if gotErr != nil {
			return false
		}
	case errors.Is(wantErr, ErrTooLarge), wantErr.Error() == "negative limit":
		if wantErr.Error() == "negative limit" {
			if gotErr == nil || errors.Is(gotErr, ErrTooLarge) || got != nil {
				return false
			}
		} else if !errors.Is(gotErr, ErrTooLarge) {
			return false
		}
	default:
		if !errors.Is(gotErr, wantErr) {
			return false
		}
	}
	return bytes.Equal(got, want) && cap(got) >= len(got)
}

func TestReadAll(t *testing.T) {
	data := make([]byte, 300000)
	r := rand.New(rand.NewPCG(11, 12))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	readers := []struct {
		name string
		make func(b []byte) io.Reader
	}{
		{"bytes.Reader", func(b []byte) io.Reader { return bytes.NewReader(b) }},
		{"one byte", func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) }},
		{"half", func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) }},
		{"EOF with data", func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) }},
		{"reads of 1000", func(b []byte) io.Reader { return &chunkReader{data: b, n: 1000} }},
		{"error after data", func(b []byte) io.Reader { return &chunkReader{data: b, n: 700, err: errBroken} }},
		{"error with data", func(b []byte) io.Reader { return &chunkReader{data: b, n: 700, err: errBroken, last: true} }},
	}
	sizes := []int{0, 1, 7, 511, 512, 513, 1024, 5000, 65536, 70000, 300000}
	for _, chunk := range []int{minChunkSize, defaultChunkSize, 1 << 20} {
		a := NewArena(WithChunkSize(chunk))
		for _, rd := range readers {
			if rd.name == "one byte" && chunk != defaultChunkSize {
				continue // slow, and the chunk size does not matter to it
			}
			for _, n := range sizes {
				if rd.name == "one byte" && n > 70000 {
					continue
				}
				in := data[:n]
				for _, limit := range []int{-1, 0, n - 1, n, n + 1, 2 * n, math.MaxInt} {
					want, wantErr := readAllRef(rd.make(in), limit)
					guard := String(a, "guard")
					got, err := ReadAll(a, rd.make(in), limit)
					if !sameResult(got, err, want, wantErr) {
						t.Fatalf("chunk %d, %s, %d bytes, limit %d: got %d bytes, %v; want %d bytes, %v",
							chunk, rd.name, n, limit, len(got), err, len(want), wantErr)
					}
					if limit >= 0 && limit < math.MaxInt && cap(got) > limit+1 {
						t.Fatalf("chunk %d, %s, %d bytes, limit %d: capacity %d, past limit+1", chunk, rd.name, n, limit, cap(got))
					}
					if guard != "guard" {
						t.Fatalf("the guard string before ReadAll's buffer changed: %q", guard)
					}
					if err != nil && errors.Is(err, ErrTooLarge) && !strings.Contains(err.Error(), "limit") {
						t.Fatalf("error %q does not say what happened", err)
					}
				}
				a.Reset()
			}
		}
		a.Free()
	}
}

// TestReadAllGrowsInPlace checks that while ReadAll's buffer is the last
// thing the arena handed out, it doubles in place: reading n bytes into a
// large enough chunk takes the buffer's final capacity from the arena and
// nothing more.
func TestReadAllGrowsInPlace(t *testing.T) {
	a := NewArena(WithChunkSize(1<<20), WithChecked(false))
	defer a.Free()
	for _, n := range []int{1, 512, 513, 4096, 100000} {
		before := a.bytes.off
		b, err := ReadAll(a, &chunkReader{data: make([]byte, n), n: 333}, 1<<30)
		if err != nil || len(b) != n {
			t.Fatalf("%d bytes: got %d, %v", n, len(b), err)
		}
		if used := a.bytes.off - before; used != fastSize(uintptr(cap(b))) || cap(b) > max(2*n, firstRead) {
			t.Errorf("%d bytes: the arena handed out %d bytes for a buffer of capacity %d", n, used, cap(b))
		}
	}
}

func TestReadAllPanics(t *testing.T) {
	for _, c := range []struct {
		name string
		fn   func()
	}{
		{"freed", func() { a := NewArena(); a.Free(); _, _ = ReadAll(a, strings.NewReader("x"), 10) }},
		{"negative count", func() { _, _ = ReadAll(NewArena(), badReader(-1), 10) }},
		{"count past the buffer", func() { _, _ = ReadAll(NewArena(), badReader(1<<20), 1<<30) }},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Errorf("%s: no panic", c.name)
				} else if s, _ := r.(string); !strings.HasPrefix(s, "arenaprof: arena") {
					t.Errorf("%s: panic %v, want an arenaprof panic", c.name, r)
				}
			}()
			c.fn()
		}()
	}
}

// badReader returns n from every Read.
type badReader int

func (r badReader) Read([]byte) (int, error) { return int(r), nil }

// TestReadAllSampled checks, at mean 1, that every buffer ReadAll takes
// (grown in place or copied) is sampled as []uint8 with the caller of
// ReadAll as its leaf frame, and that the events add up to the bytes the
// arena handed out.
func TestReadAllSampled(t *testing.T) {
	rec := record(t, 1, true)
	a := NewArena(WithChunkSize(1 << 20))
	defer a.Free()
	rec.take()
	var handed int64
	for _, n := range []int{0, 100, 5000, 300000} {
		before := a.bytes.off
		if _, err := ReadAll(a, &chunkReader{data: make([]byte, n), n: 4096}, n); err != nil {
			t.Fatal(err)
		}
		handed += int64(a.bytes.off - before)
		_ = New[obj8](a) // the next buffer starts after another object
		handed += 8
	}
	var sum int64
	leaf := "github.com/arenaprof/arenaprof/arena.TestReadAllSampled"
	for _, e := range rec.take() {
		sum += e.Size
		if e.TypeName == "arena.obj8" {
			continue
		}
		if e.TypeName != "[]uint8" || e.frames[0] != leaf {
			t.Errorf("event %s of %d bytes, leaf %s; want []uint8, leaf %s", e.TypeName, e.Size, e.frames[0], leaf)
		}
	}
	if sum != handed {
		t.Errorf("events add up to %d bytes, the arena handed out %d", sum, handed)
	}
}

// TestReadAllLarge reads past the chunk size, where each growth copies into
// a buffer of its own: the result is io.ReadAll's, the arena's memory for
// it stays within four times the input, and an input that fills a buffer
// exactly (1 MiB) ends in it, without a copy into one twice its size.
func TestReadAllLarge(t *testing.T) {
	a := NewArena(WithChunkSize(minChunkSize), WithChecked(false))
	defer a.Free()
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	got, err := ReadAll(a, bytes.NewReader(data), 16<<20)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("got %d bytes, %v", len(got), err)
	}
	if cap(got) != len(data) {
		t.Errorf("a 1 MiB input ended in a buffer of %d bytes", cap(got))
	}
	var held uintptr
	for _, b := range a.bytes.largeUsed {
		held += b.size
	}
	for _, c := range a.bytes.chunks {
		held += c.size
	}
	if held > 4*uintptr(len(data)) {
		t.Errorf("the arena holds %d bytes for a %d-byte input", held, len(data))
	}
}

// FuzzReadAll checks ReadAll against io.ReadAll of a limited reader for any
// input, limit and read size.
func FuzzReadAll(f *testing.F) {
	for _, c := range []struct {
		data  []byte
		limit int
		n     uint16
	}{
		{nil, 0, 1}, {[]byte("x"), 0, 1}, {[]byte("hello"), 5, 2}, {[]byte("hello"), 4, 100},
		{bytes.Repeat([]byte("ab"), 600), 1199, 77}, {[]byte("x"), -1, 1}, {[]byte("xyz"), math.MaxInt, 3},
		{[]byte("xyz"), math.MinInt, 3},
	} {
		f.Add(c.data, c.limit, c.n)
	}
	a := NewArena(WithChunkSize(4096))
	f.Fuzz(func(t *testing.T, data []byte, limit int, n uint16) {
		k := int(n%4096) + 1
		want, wantErr := readAllRef(&chunkReader{data: data, n: k}, limit)
		got, err := ReadAll(a, &chunkReader{data: data, n: k}, limit)
		if !sameResult(got, err, want, wantErr) {
			t.Fatalf("%d bytes, limit %d, reads of %d: got %d bytes, %v; want %d bytes, %v",
				len(data), limit, k, len(got), err, len(want), wantErr)
		}
		if limit >= 0 && limit < math.MaxInt && cap(got) > limit+1 {
			t.Fatalf("capacity %d past limit+1 = %d", cap(got), limit+1)
		}
		a.Reset()
	})
}
