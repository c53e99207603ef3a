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
//   - the values and slice backings of types without pointers (numbers,
//     bools, and arrays and structs of them);
//   - the values and slice backings of types with pointers that are
//     registered with Register (string, any, []any, []string, []int,
//     []int64, []float64, map[string]any and *string are registered
//     already);
//   - the boxes of the strings, numbers and slices stored in an any.
//
// What stays on the heap: maps and their entries, values of unregistered
// types with pointers, and whatever a type's own UnmarshalJSON or
// UnmarshalText allocates (time.Time allocates nothing; json.RawMessage
// copies its bytes to the heap).
//
// # Registering types with pointers
//
// The arena keeps a value whose type holds pointers in a slab of that type,
// which the garbage collector scans; its API takes the type at compile time
// (arena.New[T], arena.MakeSlice[T]). A decoder meets the types at run
// time, so the types with pointers that a request holds in slices or
// behind pointers are registered once, at start-up:
//
//	type Item struct{ SKU string; Qty int }
//	type Order struct {
//		Items    []Item
//		Shipping *Address
//		Notes    []struct{ By, Text string }
//	}
//
//	func init() {
//		arenajson.Register[Item]()    // the backing arrays of []Item
//		arenajson.Register[Address]() // *Address
//		registerElem(Order{}.Notes)   // an anonymous element type, by inference
//	}
//
//	func registerElem[E any](_ []E) { arenajson.Register[E]() }
//
// A type left unregistered decodes correctly, from the heap, as
// encoding/json allocates it. Structs held by value in another value need
// no registration (they live in their parent's memory), nor do types
// without pointers.
package arenajson
