// Package arenajson decodes JSON into an arena: encoding/json's Unmarshal,
// with the same values and errors, whose strings, slices, arrays and
// pointers are taken from an arena.Arena instead of the heap.
//
// A JSON service that keeps its own values on arenas still leaves most of
// its request path's garbage to encoding/json: the decoded request's
// strings and slices, and reflect's growth of them. arenajson moves them
// into the request's arena, where they are profiled like any arena
// allocation and freed at once when the arena is reset:
//
//	var pool arena.Pool
//
//	func handleOrder(w http.ResponseWriter, r *http.Request) {
//		a := pool.Get(r.Context())
//		defer pool.Put(a) // the decoded order must not be used after this
//		body, err := arena.ReadAll(a, r.Body, 1<<20)
//		if err != nil { ... }
//		var o Order
//		if err := arenajson.Unmarshal(a, body, &o); err != nil { ... }
//		...
//	}
//
// # Semantics
//
// Unmarshal follows Go 1.26's encoding/json rule for rule (Go 1.27's, built
// on encoding/json/v2, differs in places): case-insensitive field names, the last of duplicate names wins, the ",string" option,
// embedded structs, []byte as base64, json.Unmarshaler and
// encoding.TextUnmarshaler, json.Number, decoding into any, the same
// error types (*json.SyntaxError, *json.UnmarshalTypeError,
// *json.InvalidUnmarshalError, ...) at the same inputs, and the same
// partial results after a type error. github.com/go-json-experiment/json/jsontext
// (Go 1.27's encoding/json/jsontext) tokenizes. A syntax error leaves v as
// it was, as in encoding/json: into a value that holds data the syntax is
// checked before anything is stored; into a zero value the input is
// decoded at once and checked only after an error, and v is set back to
// zero if the input is not JSON (the UnmarshalJSON and UnmarshalText
// methods of the values decoded before the error have then run, where
// encoding/json runs none).
//
// # What comes from the arena
//
//   - the bytes of every string (fields, map keys, values in any);
//   - every value and slice backing the decoder makes, whatever its type,
//     through arena.NewValue and arena.MakeSliceValue: a type with pointers
//     in the arena's typed slab of that type (which the garbage collector
//     scans as that type), a pointer-free one in its byte chunks, sampled
//     as arena.New and arena.MakeSlice sample, under its own type name;
//   - the boxes of the strings, numbers and slices stored in an any.
//
// What stays on the heap: maps and their entries, and whatever a type's
// own UnmarshalJSON or UnmarshalText allocates (time.Time allocates
// nothing; json.RawMessage copies its bytes to the heap). No type needs
// registering.
package arenajson
