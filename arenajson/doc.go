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
// Unmarshal follows encoding/json (v1) rule for rule: case-insensitive
// field names, the last of duplicate names wins, the ",string" option,
// embedded structs, []byte as base64, json.Unmarshaler and
// encoding.TextUnmarshaler, json.Number, decoding into any, the same
// error types (*json.SyntaxError, *json.UnmarshalTypeError,
// *json.InvalidUnmarshalError, ...) at the same inputs, and the same
// partial results after a type error. Syntax is checked first, with
// github.com/go-json-experiment/json/jsontext (Go 1.27's
// encoding/json/jsontext), before anything is stored.
//
// # What comes from the arena
//
//   - the bytes of every string (fields, map keys, values in any);
//   - the values and slice backings of types without pointers;
//   - the values and slice backings of types with pointers that are
//     registered with Register (string, any, []any, []string, []int,
//     []int64, []float64, map[string]any and *string are registered
//     already);
//   - the boxes of the strings, numbers and slices stored in an any.
//
// What stays on the heap: maps (and their entries), values of unregistered
// types with pointers (Register them), and whatever a type's own
// UnmarshalJSON or UnmarshalText allocates. The arena's API allocates
// a type known at compile time, so a decoder that meets its types at run
// time needs Register to reach a typed slab for each type with pointers.
package arenajson
