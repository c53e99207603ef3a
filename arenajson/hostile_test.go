package arenajson

import (
	"bytes"
	"encoding/base64"
	"runtime"
	"strings"
	"testing"

	"github.com/arenaprof/arenaprof/arena"
)

// TestDeepNesting: encoding/json accepts 10,000 levels and refuses 10,001
// with a syntax error; Unmarshal gives the same answers, arrays and
// objects, into any and into a recursive type.
func TestDeepNesting(t *testing.T) {
	requireV1(t)
	for _, depth := range []int{9999, 10000, 10001, 100000} {
		arrays := strings.Repeat("[", depth) + strings.Repeat("]", depth)
		objects := strings.Repeat(`{"Next":`, depth) + "null" + strings.Repeat("}", depth)
		for _, c := range []struct {
			in  string
			new func() any
		}{
			{arrays, newOf[any]()},
			{objects, newOf[any]()},
			{objects, newOf[caseRecursive]()},
			{arrays[:len(arrays)-1], newOf[any]()}, // truncated
		} {
			if d := differ([]byte(c.in), c.new); d != "" {
				t.Errorf("depth %d, %T: %s", depth, c.new(), d)
			}
		}
	}
}

// TestLargeStrings: a 16 MiB string, raw, escaped and base64, decodes as
// encoding/json decodes it, into the arena, and the decoder keeps no
// large buffer afterwards.
func TestLargeStrings(t *testing.T) {
	requireV1(t)
	const n = 16 << 20
	raw := strings.Repeat("abcdefgh", n/8)
	escaped := strings.Repeat(`\u00e9\n`, n/8)
	b64 := base64.StdEncoding.EncodeToString([]byte(raw))
	for _, c := range []struct {
		name, in string
		new      func() any
	}{
		{"raw", `"` + raw + `"`, newOf[string]()},
		{"escaped", `"` + escaped + `"`, newOf[string]()},
		{"any", `["` + escaped + `"]`, newOf[any]()},
		{"base64", `"` + b64 + `"`, newOf[[]byte]()},
		{"unterminated", `"` + raw, newOf[string]()},
		{"invalid utf8", `"` + raw[:n/2] + "\xff" + raw[:n/2] + `"`, newOf[string]()},
	} {
		t.Run(c.name, func(t *testing.T) {
			if d := differ([]byte(c.in), c.new); d != "" {
				t.Error(d[:min(len(d), 300)])
			}
			// Memory: what one decode allocates on the heap, beyond the
			// arena, stays below the input's size.
			a := arena.NewArena()
			defer a.Free()
			in := []byte(c.in)
			v := c.new()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_ = Unmarshal(a, in, v)
			runtime.ReadMemStats(&after)
			heap := after.TotalAlloc - before.TotalAlloc
			limit := uint64(len(in)) * 3 // the arena's chunks (string, scratch copy) plus the syntax-error path's copy
			if heap > limit {
				t.Errorf("one decode of %d bytes allocated %d bytes on the heap (arena chunks included), more than %d", len(in), heap, limit)
			}
			t.Logf("%d input bytes: %d heap bytes allocated (arena chunks included)", len(in), heap)
		})
	}
	d := statePool.Get().(*decodeState)
	if cap(d.scratch[0]) > 64<<10 || cap(d.scratch[1]) > 64<<10 {
		t.Errorf("a pooled decoder keeps %d and %d bytes of scratch", cap(d.scratch[0]), cap(d.scratch[1]))
	}
	statePool.Put(d)
}

// TestTruncated: every prefix of documents, and each of them with a byte
// flipped or with trailing data, decodes as encoding/json decodes it.
func TestTruncated(t *testing.T) {
	requireV1(t)
	docs := []struct {
		in  string
		new func() any
	}{
		{cases[0].in, newOf[caseBasic]()},
		{cases[0].in, newOf[any]()},
		{`{"IntKeys":{"1":"a"},"TextKeys":{"::1":2},"Nested":{"a":[{"b":[1.5e3,{"c":"\ud83d\ude00"}]}]}}`, newOf[caseMaps]()},
		{`{"I":"12","F":"1.5","B":"true","S":"\"q\"","P":"3"}`, newOf[caseQuoted]()},
	}
	n := 0
	for _, doc := range docs {
		for i := range len(doc.in) + 1 {
			for _, in := range []string{doc.in[:i], doc.in[:i] + "}", doc.in[:i] + "\xff" + doc.in[i:], doc.in[:i] + `"` + doc.in[i:], doc.in + doc.in[:i]} {
				n++
				if d := differ([]byte(in), doc.new); d != "" {
					t.Fatalf("input %q: %s", in, d)
				}
			}
		}
	}
	t.Logf("%d inputs", n)
}

// TestCorpusPrefixes: prefixes of a real corpus at many cut points.
func TestCorpusPrefixes(t *testing.T) {
	requireV1(t)
	data := corpora[6].data() // twitter_status
	cuts := 500
	if testing.Short() {
		cuts = 60
	}
	step := len(data)/cuts + 1
	for i := 0; i < len(data); i += step {
		if d := differ(data[:i], newOf[twitterRoot]()); d != "" {
			t.Fatalf("prefix %d: %s", i, d[:min(len(d), 500)])
		}
	}
	// Invalid UTF-8 spliced into the corpus.
	for i := 0; i < len(data); i += step {
		in := bytes.Clone(data)
		in[i] = 0xff
		if d := differ(in, newOf[twitterRoot]()); d != "" {
			t.Fatalf("0xff at %d: %s", i, d[:min(len(d), 500)])
		}
	}
}
