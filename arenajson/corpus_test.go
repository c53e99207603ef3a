package arenajson

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/klauspost/compress/zstd"
)

// corpus is one of the standard JSON corpora with its Go type.
type corpus struct {
	name string
	data func() []byte
	new  func() any
}

// corpora are Go's encoding/json test corpora (testdata/README.md).
var corpora = func() []corpus {
	types := map[string]func() any{
		"canada_geometry": func() any { return new(canadaRoot) },
		"citm_catalog":    func() any { return new(citmRoot) },
		"golang_source":   func() any { return new(golangRoot) },
		"string_escaped":  func() any { return new(stringRoot) },
		"string_unicode":  func() any { return new(stringRoot) },
		"synthea_fhir":    func() any { return new(syntheaRoot) },
		"twitter_status":  func() any { return new(twitterRoot) },
	}
	var cs []corpus
	for _, name := range []string{"canada_geometry", "citm_catalog", "golang_source", "string_escaped", "string_unicode", "synthea_fhir", "twitter_status"} {
		cs = append(cs, corpus{name: name, new: types[name], data: sync.OnceValue(func() []byte {
			b, err := os.ReadFile(filepath.Join("testdata", name+".json.zst"))
			if err != nil {
				panic(err)
			}
			zr, err := zstd.NewReader(nil)
			if err != nil {
				panic(err)
			}
			defer zr.Close()
			out, err := zr.DecodeAll(b, nil)
			if err != nil {
				panic(err)
			}
			return out
		})})
	}
	return cs
}()

// requireV1 skips a differential test unless the toolchain's encoding/json
// is Go 1.26's own. From Go 1.27 encoding/json is built on
// encoding/json/v2 and no longer behaves as Go 1.26's in places (its error
// messages name v2's reasons, it stops at some errors where Go 1.26 goes
// on, and it gives a ",string" field's UnmarshalJSON the quoted string);
// Unmarshal follows Go 1.26's, the module's Go version, which CI runs.
func requireV1(tb testing.TB) {
	if strings.HasPrefix(runtime.Version(), "go1.27") {
		tb.Skipf("%s's encoding/json is built on encoding/json/v2; Unmarshal follows Go 1.26's", runtime.Version())
	}
}

// errString describes an error by its type and message, or "<nil>".
func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%T: %v", err, err)
}

// differ decodes data into two fresh values from newV, with encoding/json
// and with Unmarshal into a fresh arena, and returns a description of any
// difference: in error (type and message) or in the values (reflect.DeepEqual,
// compared after an error too, for encoding/json's partial results), and
// again into the decoded values; see requireV1.
func differ(data []byte, newV func() any) string {
	want := newV()
	wantErr := json.Unmarshal(data, want)
	a := arena.NewArena()
	defer a.Free()
	got := newV()
	gotErr := Unmarshal(a, data, got)
	if errString(wantErr) != errString(gotErr) {
		return fmt.Sprintf("error: encoding/json %s, arenajson %s", errString(wantErr), errString(gotErr))
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Sprintf("values differ:\nencoding/json %s\narenajson     %s", short(want), short(got))
	}
	// Decoding into a value that already holds data takes the other path
	// (the syntax check before anything is stored): decode the input, and
	// its first half, again into the values just decoded.
	if reflect.ValueOf(want).Elem().IsZero() {
		return ""
	}
	for _, in := range [][]byte{data, data[:len(data)/2]} {
		wantErr, gotErr := json.Unmarshal(in, want), Unmarshal(a, in, got)
		if errString(wantErr) != errString(gotErr) {
			return fmt.Sprintf("into a decoded value, input %q: error: encoding/json %s, arenajson %s", in, errString(wantErr), errString(gotErr))
		}
		if !reflect.DeepEqual(want, got) {
			return fmt.Sprintf("into a decoded value, input %q: values differ:\nencoding/json %s\narenajson     %s", in, short(want), short(got))
		}
	}
	return ""
}

func short(v any) string {
	s := fmt.Sprintf("%#v", v)
	if len(s) > 2000 {
		s = s[:2000] + "..."
	}
	return strings.ToValidUTF8(s, "?")
}

// TestCorpora decodes each corpus into its Go type and into any, and
// compares with encoding/json.
func TestCorpora(t *testing.T) {
	requireV1(t)
	for _, c := range corpora {
		t.Run(c.name, func(t *testing.T) {
			data := c.data()
			if d := differ(data, c.new); d != "" {
				t.Errorf("typed: %s", d)
			}
			if d := differ(data, func() any { return new(any) }); d != "" {
				t.Errorf("any: %s", d)
			}
		})
	}
}
