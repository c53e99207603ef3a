// Copyright 2010 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// The decoding rules below are those of Go 1.26's encoding/json/decode.go,
// kept in its order and wording so that a reader can compare them line by
// line: its scanner is replaced by a jsontext.Decoder, and its allocations
// by the arena's (alloc.go).

package arenajson

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/go-json-experiment/json/jsontext"
)

// Unmarshal parses the JSON-encoded data and stores the result in the value
// pointed to by v, exactly as encoding/json.Unmarshal does (same values,
// same errors, of encoding/json's own types), taking the memory of the
// strings, slices, arrays and pointers it makes from a: see the package
// documentation for what stays on the heap. A nil a decodes on the heap.
//
// The values stored in v point into a: they must not be used after a's
// Reset or Put. Data is not retained; Unmarshal does not modify it.
func Unmarshal(a *arena.Arena, data []byte, v any) error {
	d := statePool.Get().(*decodeState)
	defer d.release()
	d.a = a

	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		// The syntax check comes first, as in encoding/json.
		if err := d.check(data); err != nil {
			return err
		}
		return &json.InvalidUnmarshalError{Type: reflect.TypeOf(v)}
	}

	if rv.Elem().IsZero() {
		// encoding/json checks the whole input before storing anything,
		// so that a syntax error never leaves half a data structure
		// behind. Into a zero value the check can come after: decode at
		// once, and on any error read the input again, and if it is not
		// JSON set the value back to zero and return encoding/json's
		// syntax error. One read instead of two.
		d.reset(data)
		err := d.value(rv)
		if err == nil {
			if _, err = d.dec.ReadToken(); err == io.EOF {
				return d.savedError
			}
		}
		if serr := d.check(data); serr != nil {
			rv.Elem().SetZero()
			return serr
		}
		return d.addErrorContext(err)
	}

	// Check for well-formedness first, as encoding/json does, so that a
	// syntax error leaves the value as it was.
	if err := d.check(data); err != nil {
		return err
	}
	d.reset(data)
	// We decode rv not rv.Elem because the Unmarshaler interface
	// test must be applied at the top level of the value.
	err := d.value(rv)
	if err != nil {
		return d.addErrorContext(err)
	}
	return d.savedError
}

// options are the syntax encoding/json accepts: duplicate names and
// invalid UTF-8 in strings. They are joined once, through a decoder, so
// that every Reset is given one preallocated Options value.
var options = jsontext.NewDecoder(bytes.NewReader(nil),
	jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)).Options()

var statePool = sync.Pool{New: func() any {
	d := &decodeState{}
	d.dec = jsontext.NewDecoder(&d.buf, options)
	return d
}}

// An errorContext provides context for type errors during decoding.
type errorContext struct {
	Struct     reflect.Type
	FieldStack []string
}

// decodeState represents the state while decoding a JSON value.
type decodeState struct {
	dec          *jsontext.Decoder
	buf          bytes.Buffer
	a            *arena.Arena
	errorContext *errorContext
	savedError   error
	scratch      [2][]byte // unquoting buffers: [0] for names and values, [1] for ,string
}

// reset makes the decoder read data afresh.
func (d *decodeState) reset(data []byte) {
	d.buf = *bytes.NewBuffer(data)
	d.dec.Reset(&d.buf, options)
}

func (d *decodeState) release() {
	d.reset(nil)
	d.a = nil
	d.savedError = nil
	if d.errorContext != nil {
		d.errorContext.Struct = nil
		// Reuse the allocated space for the FieldStack slice.
		clear(d.errorContext.FieldStack)
		d.errorContext.FieldStack = d.errorContext.FieldStack[:0]
	}
	if cap(d.scratch[0]) > 64<<10 || cap(d.scratch[1]) > 64<<10 {
		d.scratch = [2][]byte{} // not kept: one large string must not pin memory
	}
	statePool.Put(d)
}

// check returns encoding/json's error for data if data is not one JSON
// value with optional white space around it.
func (d *decodeState) check(data []byte) error {
	d.reset(data)
	_, err := d.dec.ReadValue()
	if err == nil {
		if _, err = d.dec.ReadToken(); err == io.EOF {
			return nil
		}
	}
	// The error, word for word, is encoding/json's: its syntax check
	// (run first by Unmarshal) stops at the same place, and its messages
	// and offsets are its own.
	if v1 := json.Unmarshal(data, new(json.RawMessage)); v1 != nil {
		return v1
	}
	return fmt.Errorf("arenajson: input rejected by jsontext but valid for encoding/json: %w", err)
}

// saveError saves the first err it is called with,
// for reporting at the end of the unmarshal.
func (d *decodeState) saveError(err error) {
	if d.savedError == nil {
		d.savedError = d.addErrorContext(err)
	}
}

// addErrorContext returns a new error enhanced with information from d.errorContext
func (d *decodeState) addErrorContext(err error) error {
	if d.errorContext != nil && (d.errorContext.Struct != nil || len(d.errorContext.FieldStack) > 0) {
		switch err := err.(type) {
		case *json.UnmarshalTypeError:
			err.Struct = d.errorContext.Struct.Name()
			fieldStack := d.errorContext.FieldStack
			if err.Field != "" {
				fieldStack = append(fieldStack, err.Field)
			}
			err.Field = strings.Join(fieldStack, ".")
		}
	}
	return err
}

// offset is the input offset of the end of the last token read, which
// encoding/json's type errors carry.
func (d *decodeState) offset() int64 { return d.dec.InputOffset() }

// value consumes a JSON value, decoding into v.
// If v is invalid, the value is discarded.
func (d *decodeState) value(v reflect.Value) error {
	if v.IsValid() && factsOf(v.Type()).scalar {
		// A bool, number or string: read the value at once, without
		// peeking at its kind. An array or object is a type error, as
		// array and object find for such a type.
		item, err := d.dec.ReadValue()
		if err != nil {
			return err
		}
		switch item[0] {
		case '[':
			d.saveError(&json.UnmarshalTypeError{Value: "array", Type: v.Type(), Offset: d.offset()})
			return nil
		case '{':
			d.saveError(&json.UnmarshalTypeError{Value: "object", Type: v.Type(), Offset: d.offset()})
			return nil
		}
		return d.literalStore(item, v, false)
	}
	switch d.dec.PeekKind() {
	case '[':
		if v.IsValid() {
			return d.array(v)
		}
		return d.dec.SkipValue()
	case '{':
		if v.IsValid() {
			return d.object(v)
		}
		return d.dec.SkipValue()
	default:
		item, err := d.dec.ReadValue()
		if err != nil {
			return err
		}
		if v.IsValid() {
			return d.literalStore(item, v, false)
		}
		return nil
	}
}

// What valueQuoted found.
const (
	quotedString  = iota // a quoted string literal
	quotedNull           // the literal null
	unquotedValue        // anything else
)

// valueQuoted is like value but reads a quoted string literal or literal
// null for a ",string" field: it returns the string's unquoted bytes (valid
// until the next valueQuoted) and quotedString, or quotedNull, or
// unquotedValue if it finds anything else. Nothing is boxed in an
// interface: that would put a slice header on the heap per field.
func (d *decodeState) valueQuoted() ([]byte, int, error) {
	switch d.dec.PeekKind() {
	case '[', '{':
		return nil, unquotedValue, d.dec.SkipValue()
	}
	item, err := d.dec.ReadValue()
	if err != nil {
		return nil, 0, err
	}
	switch item[0] {
	case 'n':
		return nil, quotedNull, nil
	case '"':
		s, ok := d.unquoteBytes(item, 1)
		if !ok {
			panic(phasePanicMsg)
		}
		return s, quotedString, nil
	}
	return nil, unquotedValue, nil
}

// phasePanicMsg is used as a panic message when we end up with something that
// shouldn't happen: jsontext returned what its own check had refused.
const phasePanicMsg = "arenajson: JSON decoder out of sync - data changing underfoot?"

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	numberType          = reflect.TypeFor[json.Number]()
)

// indirect walks down v allocating pointers as needed,
// until it gets to a non-pointer.
// If it encounters an Unmarshaler, indirect stops and returns that.
// If decodingNull is true, indirect stops at the first settable pointer so it
// can be set to nil.
func (d *decodeState) indirect(v reflect.Value, decodingNull bool) (json.Unmarshaler, encoding.TextUnmarshaler, reflect.Value) {
	// Issue #24153 indicates that it is generally not a guaranteed property
	// that you may round-trip a reflect.Value by calling Value.Addr().Elem()
	// and expect the value to still be settable for values derived from
	// unexported embedded struct fields.
	//
	// The logic below effectively does this when it first addresses the value
	// (to satisfy possible pointer methods) and continues to dereference
	// subsequent pointers as necessary.
	//
	// After the first round-trip, we set v back to the original value to
	// preserve the original RW flags contained in reflect.Value.
	// Most values need none of the walk below: a type that is neither a
	// pointer nor an interface, and whose pointer has neither method,
	// comes back unchanged (known once per type).
	if plainType(v.Type()) {
		return nil, nil, v
	}

	v0 := v
	haveAddr := false

	// If v is a named type and is addressable,
	// start with its address, so that if the type has pointer methods,
	// we find them.
	if v.Kind() != reflect.Pointer && v.Type().Name() != "" && v.CanAddr() {
		haveAddr = true
		v = v.Addr()
	}
	for {
		// Load value from interface, but only if the result will be
		// usefully addressable.
		if v.Kind() == reflect.Interface && !v.IsNil() {
			e := v.Elem()
			if e.Kind() == reflect.Pointer && !e.IsNil() && (!decodingNull || e.Elem().Kind() == reflect.Pointer) {
				haveAddr = false
				v = e
				continue
			}
		}

		if v.Kind() != reflect.Pointer {
			break
		}

		if decodingNull && v.CanSet() {
			break
		}

		// Prevent infinite loop if v is an interface pointing to its own address:
		//     var v any
		//     v = &v
		if v.Elem().Kind() == reflect.Interface && v.Elem().Elem().Equal(v) {
			v = v.Elem()
			break
		}
		if v.IsNil() {
			v.Set(d.newPtr(v.Type().Elem()))
		}
		if v.Type().NumMethod() > 0 && v.CanInterface() {
			if u, ok := reflect.TypeAssert[json.Unmarshaler](v); ok {
				return u, nil, reflect.Value{}
			}
			if !decodingNull {
				if u, ok := reflect.TypeAssert[encoding.TextUnmarshaler](v); ok {
					return nil, u, reflect.Value{}
				}
			}
		}

		if haveAddr {
			v = v0 // restore original value after round-trip Value.Addr().Elem()
			haveAddr = false
		} else {
			v = v.Elem()
		}
	}
	return nil, nil, v
}

// typeFacts are what value and indirect ask of a type, once per type.
type typeFacts struct {
	// plain: indirect returns a value of the type as it is: the type is
	// not a pointer or an interface, and its pointer implements neither
	// json.Unmarshaler nor encoding.TextUnmarshaler.
	plain bool
	// scalar: plain, and a bool, number or string kind, which only a
	// JSON literal can set (an array or object is a type error).
	scalar bool
}

var facts typeCache[typeFacts]

func factsOf(t reflect.Type) typeFacts {
	return facts.get(t, func(t reflect.Type) typeFacts {
		pt := reflect.PointerTo(t)
		f := typeFacts{plain: t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface &&
			!pt.Implements(unmarshalerType) && !pt.Implements(textUnmarshalerType)}
		switch t.Kind() {
		case reflect.Bool, reflect.String,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
			reflect.Float32, reflect.Float64:
			f.scalar = f.plain
		}
		return f
	})
}

// plainType reports whether indirect returns a value of type t as it is.
func plainType(t reflect.Type) bool { return factsOf(t).plain }

// array consumes an array, decoding into v.
func (d *decodeState) array(v reflect.Value) error {
	// Check for unmarshaler.
	u, ut, pv := d.indirect(v, false)
	if u != nil {
		item, err := d.dec.ReadValue()
		if err != nil {
			return err
		}
		return u.UnmarshalJSON(item)
	}
	if ut != nil {
		d.saveError(&json.UnmarshalTypeError{Value: "array", Type: v.Type(), Offset: d.offset() + 1})
		return d.dec.SkipValue()
	}
	v = pv

	// Check type of target.
	switch v.Kind() {
	case reflect.Interface:
		if v.NumMethod() == 0 {
			// Decoding into nil interface? Switch to non-reflect code.
			ai, err := d.arrayInterface()
			if err != nil {
				return err
			}
			d.setAny(v, ai)
			return nil
		}
		// Otherwise it's invalid.
		fallthrough
	default:
		d.saveError(&json.UnmarshalTypeError{Value: "array", Type: v.Type(), Offset: d.offset() + 1})
		return d.dec.SkipValue()
	case reflect.Array, reflect.Slice:
	}

	if _, err := d.dec.ReadToken(); err != nil { // [
		return err
	}
	i := 0
	for d.dec.PeekKind() != ']' {
		// Expand slice length, growing the slice if necessary.
		if v.Kind() == reflect.Slice {
			if i >= v.Cap() {
				d.setSlice(v, v.Len(), max(2*v.Cap(), 4))
			}
			if i >= v.Len() {
				v.SetLen(i + 1)
			}
		}

		if i < v.Len() {
			// Decode into element.
			if err := d.value(v.Index(i)); err != nil {
				return err
			}
		} else {
			// Ran out of fixed array: skip.
			if err := d.dec.SkipValue(); err != nil {
				return err
			}
		}
		i++
	}
	if _, err := d.dec.ReadToken(); err != nil { // ]
		return err
	}

	if i < v.Len() {
		if v.Kind() == reflect.Array {
			for ; i < v.Len(); i++ {
				v.Index(i).SetZero() // zero remainder of array
			}
		} else {
			v.SetLen(i) // truncate the slice
		}
	}
	if i == 0 && v.Kind() == reflect.Slice {
		d.setEmpty(v)
	}
	return nil
}

var nullLiteral = []byte("null")

// object consumes an object, decoding into v.
func (d *decodeState) object(v reflect.Value) error {
	// Check for unmarshaler.
	u, ut, pv := d.indirect(v, false)
	if u != nil {
		item, err := d.dec.ReadValue()
		if err != nil {
			return err
		}
		return u.UnmarshalJSON(item)
	}
	if ut != nil {
		d.saveError(&json.UnmarshalTypeError{Value: "object", Type: v.Type(), Offset: d.offset() + 1})
		return d.dec.SkipValue()
	}
	v = pv
	t := v.Type()

	// Decoding into nil interface? Switch to non-reflect code.
	if v.Kind() == reflect.Interface && v.NumMethod() == 0 {
		oi, err := d.objectInterface()
		if err != nil {
			return err
		}
		d.setAny(v, oi)
		return nil
	}

	var fields structFields

	// Check type of target:
	//   struct or
	//   map[T1]T2 where T1 is string, an integer type,
	//             or an encoding.TextUnmarshaler
	switch v.Kind() {
	case reflect.Map:
		// Map key must either have string kind, have an integer kind,
		// or be an encoding.TextUnmarshaler.
		switch t.Key().Kind() {
		case reflect.String,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		default:
			if !reflect.PointerTo(t.Key()).Implements(textUnmarshalerType) {
				d.saveError(&json.UnmarshalTypeError{Value: "object", Type: t, Offset: d.offset() + 1})
				return d.dec.SkipValue()
			}
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(t)) // maps stay on the heap
		}
	case reflect.Struct:
		fields = cachedTypeFields(t)
		// ok
	default:
		d.saveError(&json.UnmarshalTypeError{Value: "object", Type: t, Offset: d.offset() + 1})
		return d.dec.SkipValue()
	}

	var mapElem reflect.Value
	next := 0 // the position in fields.list of the name expected next
	var origErrorContext errorContext
	if d.errorContext != nil {
		origErrorContext = *d.errorContext
	}

	if _, err := d.dec.ReadToken(); err != nil { // {
		return err
	}
	for d.dec.PeekKind() != '}' {
		// Read key.
		item, err := d.dec.ReadValue()
		if err != nil {
			return err
		}
		start := d.offset() - int64(len(item))
		key, ok := d.unquoteBytes(item, 0)
		if !ok {
			panic(phasePanicMsg)
		}

		// Figure out field corresponding to key.
		var subv reflect.Value
		destring := false // whether the value is wrapped in a string to be decoded first
		var mapKey string

		if v.Kind() == reflect.Map {
			// The key outlives the scratch buffer: keep it in the arena.
			mapKey = d.str(key)
			elemType := t.Elem()
			if !mapElem.IsValid() {
				mapElem = d.newPtr(elemType).Elem()
			} else {
				mapElem.SetZero()
			}
			subv = mapElem
		} else {
			// Objects of one type mostly list their names in the same
			// order, and in the struct's: try the field after the last
			// one found before hashing the name.
			var f *field
			if next < len(fields.list) && string(key) == fields.list[next].name {
				f = &fields.list[next]
			} else {
				f = fields.byExactName[string(key)]
				if f == nil {
					f = fields.byFoldedName[string(foldName(key))]
				}
			}
			if f != nil {
				next = f.pos + 1
			}
			if f != nil {
				subv = v
				destring = f.quoted
				if d.errorContext == nil {
					d.errorContext = new(errorContext)
				}
				for i, ind := range f.index {
					if subv.Kind() == reflect.Pointer {
						if subv.IsNil() {
							// If a struct embeds a pointer to an unexported type,
							// it is not possible to set a newly allocated value
							// since the field is unexported.
							//
							// See https://golang.org/issue/21357
							if !subv.CanSet() {
								d.saveError(fmt.Errorf("json: cannot set embedded pointer to unexported struct: %v", subv.Type().Elem()))
								// Invalidate subv to ensure d.value(subv) skips over
								// the JSON value without assigning it to subv.
								subv = reflect.Value{}
								destring = false
								break
							}
							subv.Set(d.newPtr(subv.Type().Elem()))
						}
						subv = subv.Elem()
					}
					if i < len(f.index)-1 {
						d.errorContext.FieldStack = append(
							d.errorContext.FieldStack,
							subv.Type().Field(ind).Name,
						)
					}
					subv = subv.Field(ind)
				}
				d.errorContext.Struct = t
				d.errorContext.FieldStack = append(d.errorContext.FieldStack, f.name)
			}
		}

		if destring {
			qv, kind, err := d.valueQuoted()
			if err != nil {
				return err
			}
			switch kind {
			case quotedNull:
				if err := d.literalStore(nullLiteral, subv, false); err != nil {
					return err
				}
			case quotedString:
				if err := d.literalStore(qv, subv, true); err != nil {
					return err
				}
			default:
				d.saveError(fmt.Errorf("json: invalid use of ,string struct tag, trying to unmarshal unquoted value into %v", subv.Type()))
			}
		} else {
			if err := d.value(subv); err != nil {
				return err
			}
		}

		// Write value back to map;
		// if using struct, subv points into struct already.
		if v.Kind() == reflect.Map {
			kt := t.Key()
			var kv reflect.Value
			if reflect.PointerTo(kt).Implements(textUnmarshalerType) {
				kv = d.newPtr(kt)
				if err := d.literalStore(item, kv, true); err != nil {
					return err
				}
				kv = kv.Elem()
			} else {
				switch kt.Kind() {
				case reflect.String:
					kv = d.newPtr(kt).Elem()
					kv.SetString(mapKey)
				case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
					s := mapKey
					n, err := strconv.ParseInt(s, 10, 64)
					if err != nil || kt.OverflowInt(n) {
						d.saveError(&json.UnmarshalTypeError{Value: "number " + s, Type: kt, Offset: start + 1})
						break
					}
					kv = d.newPtr(kt).Elem()
					kv.SetInt(n)
				case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
					s := mapKey
					n, err := strconv.ParseUint(s, 10, 64)
					if err != nil || kt.OverflowUint(n) {
						d.saveError(&json.UnmarshalTypeError{Value: "number " + s, Type: kt, Offset: start + 1})
						break
					}
					kv = d.newPtr(kt).Elem()
					kv.SetUint(n)
				default:
					panic("json: Unexpected key type") // should never occur
				}
			}
			if kv.IsValid() {
				v.SetMapIndex(kv, subv)
			}
		}

		if d.errorContext != nil {
			// Reset errorContext to its original state.
			// Keep the same underlying array for FieldStack, to reuse the
			// space and avoid unnecessary allocs.
			d.errorContext.FieldStack = d.errorContext.FieldStack[:len(origErrorContext.FieldStack)]
			d.errorContext.Struct = origErrorContext.Struct
		}
	}
	_, err := d.dec.ReadToken() // }
	return err
}

// convertNumber converts the number literal s to a float64.
func (d *decodeState) convertNumber(s []byte) (any, error) {
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		return nil, &json.UnmarshalTypeError{Value: "number " + string(s), Type: reflect.TypeFor[float64](), Offset: d.offset()}
	}
	return d.anyFloat(f), nil
}

// literalStore decodes a literal stored in item into v.
//
// fromQuoted indicates whether this literal came from unwrapping a
// string from the ",string" struct tag option. this is used only to
// produce more helpful error messages.
func (d *decodeState) literalStore(item []byte, v reflect.Value, fromQuoted bool) error {
	// Check for unmarshaler.
	if len(item) == 0 {
		// Empty string given.
		d.saveError(fmt.Errorf("json: invalid use of ,string struct tag, trying to unmarshal %q into %v", item, v.Type()))
		return nil
	}
	isNull := item[0] == 'n' // null
	u, ut, pv := d.indirect(v, isNull)
	if u != nil {
		return u.UnmarshalJSON(item)
	}
	if ut != nil {
		if item[0] != '"' {
			if fromQuoted {
				d.saveError(fmt.Errorf("json: invalid use of ,string struct tag, trying to unmarshal %q into %v", item, v.Type()))
				return nil
			}
			val := "number"
			switch item[0] {
			case 'n':
				val = "null"
			case 't', 'f':
				val = "bool"
			}
			d.saveError(&json.UnmarshalTypeError{Value: val, Type: v.Type(), Offset: d.offset() - 1})
			return nil
		}
		s, ok := d.unquoteBytes(item, 0)
		if !ok {
			if fromQuoted {
				return fmt.Errorf("json: invalid use of ,string struct tag, trying to unmarshal %q into %v", item, v.Type())
			}
			panic(phasePanicMsg)
		}
		return ut.UnmarshalText(s)
	}

	v = pv

	switch c := item[0]; c {
	case 'n': // null
		// The main parser checks that only true and false can reach here,
		// but if this was a quoted string input, it could be anything.
		if fromQuoted && string(item) != "null" {
			d.saveError(fmt.Errorf("json: invalid use of ,string struct tag, trying to unmarshal %q into %v", item, v.Type()))
			break
		}
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer, reflect.Map, reflect.Slice:
			v.SetZero()
			// otherwise, ignore null for primitives/string
		}
	case 't', 'f': // true, false
		value := item[0] == 't'
		// The main parser checks that only true and false can reach here,
		// but if this was a quoted string input, it could be anything.
		if fromQuoted && string(item) != "true" && string(item) != "false" {
			d.saveError(fmt.Errorf("json: invalid use of ,string struct tag, trying to unmarshal %q into %v", item, v.Type()))
			break
		}
		switch v.Kind() {
		default:
			if fromQuoted {
				d.saveError(fmt.Errorf("json: invalid use of ,string struct tag, trying to unmarshal %q into %v", item, v.Type()))
			} else {
				d.saveError(&json.UnmarshalTypeError{Value: "bool", Type: v.Type(), Offset: d.offset() - 1})
			}
		case reflect.Bool:
			v.SetBool(value)
		case reflect.Interface:
			if v.NumMethod() == 0 {
				d.setAny(v, value)
			} else {
				d.saveError(&json.UnmarshalTypeError{Value: "bool", Type: v.Type(), Offset: d.offset() - 1})
			}
		}

	case '"': // string
		s, ok := d.unquoteBytes(item, 0)
		if !ok {
			if fromQuoted {
				return fmt.Errorf("json: invalid use of ,string struct tag, trying to unmarshal %q into %v", item, v.Type())
			}
			panic(phasePanicMsg)
		}
		switch v.Kind() {
		default:
			d.saveError(&json.UnmarshalTypeError{Value: "string", Type: v.Type(), Offset: d.offset() - 1})
		case reflect.Slice:
			if v.Type().Elem().Kind() != reflect.Uint8 {
				d.saveError(&json.UnmarshalTypeError{Value: "string", Type: v.Type(), Offset: d.offset() - 1})
				break
			}
			b := d.bytes(base64.StdEncoding.DecodedLen(len(s)))
			n, err := base64.StdEncoding.Decode(b, s)
			if err != nil {
				d.saveError(err)
				break
			}
			v.SetBytes(b[:n])
		case reflect.String:
			if v.Type() == numberType && !isValidNumber(string(s)) {
				return fmt.Errorf("json: invalid number literal, trying to unmarshal %q into Number", item)
			}
			v.SetString(d.str(s))
		case reflect.Interface:
			if v.NumMethod() == 0 {
				d.setAny(v, d.anyString(d.str(s)))
			} else {
				d.saveError(&json.UnmarshalTypeError{Value: "string", Type: v.Type(), Offset: d.offset() - 1})
			}
		}

	default: // number
		if c != '-' && (c < '0' || c > '9') {
			if fromQuoted {
				return fmt.Errorf("json: invalid use of ,string struct tag, trying to unmarshal %q into %v", item, v.Type())
			}
			panic(phasePanicMsg)
		}
		switch v.Kind() {
		default:
			if v.Kind() == reflect.String && v.Type() == numberType {
				// s must be a valid number, because it's
				// already been tokenized.
				v.SetString(d.str(item))
				break
			}
			if fromQuoted {
				return fmt.Errorf("json: invalid use of ,string struct tag, trying to unmarshal %q into %v", item, v.Type())
			}
			d.saveError(&json.UnmarshalTypeError{Value: "number", Type: v.Type(), Offset: d.offset() - 1})
		case reflect.Interface:
			n, err := d.convertNumber(item)
			if err != nil {
				d.saveError(err)
				break
			}
			if v.NumMethod() != 0 {
				d.saveError(&json.UnmarshalTypeError{Value: "number", Type: v.Type(), Offset: d.offset() - 1})
				break
			}
			d.setAny(v, n)

		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			n, err := strconv.ParseInt(string(item), 10, 64)
			if err != nil || v.OverflowInt(n) {
				d.saveError(&json.UnmarshalTypeError{Value: "number " + string(item), Type: v.Type(), Offset: d.offset() - 1})
				break
			}
			v.SetInt(n)

		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			n, err := strconv.ParseUint(string(item), 10, 64)
			if err != nil || v.OverflowUint(n) {
				d.saveError(&json.UnmarshalTypeError{Value: "number " + string(item), Type: v.Type(), Offset: d.offset() - 1})
				break
			}
			v.SetUint(n)

		case reflect.Float32, reflect.Float64:
			n, err := strconv.ParseFloat(string(item), v.Type().Bits())
			if err != nil || v.OverflowFloat(n) {
				d.saveError(&json.UnmarshalTypeError{Value: "number " + string(item), Type: v.Type(), Offset: d.offset() - 1})
				break
			}
			v.SetFloat(n)
		}
	}
	return nil
}

// setAny stores x in v, an empty interface, without the copy reflect's Set
// makes of a value that is not pointer-shaped (the arena box is kept).
func (d *decodeState) setAny(v reflect.Value, x any) {
	if v.CanAddr() && v.CanSet() {
		*(*any)(v.Addr().UnsafePointer()) = x
		return
	}
	if x == nil {
		v.SetZero()
		return
	}
	v.Set(reflect.ValueOf(x))
}

// The xxxInterface routines build up a value to be stored
// in an empty interface. They are not strictly necessary,
// but they avoid the weight of reflection in this common case.

// valueInterface is like value but returns any.
func (d *decodeState) valueInterface() (any, error) {
	switch d.dec.PeekKind() {
	case '[':
		return d.arrayInterface()
	case '{':
		return d.objectInterface()
	default:
		return d.literalInterface()
	}
}

// arrayInterface is like array but returns []any.
func (d *decodeState) arrayInterface() (any, error) {
	if _, err := d.dec.ReadToken(); err != nil { // [
		return nil, err
	}
	v := make([]any, 0) // no allocation: the runtime's zero-size base
	for d.dec.PeekKind() != ']' {
		x, err := d.valueInterface()
		if err != nil {
			return nil, err
		}
		if d.a != nil {
			v = arena.Append(d.a, v, x)
		} else {
			v = append(v, x)
		}
	}
	if _, err := d.dec.ReadToken(); err != nil { // ]
		return nil, err
	}
	return d.anySlice(v), nil
}

// objectInterface is like object but returns map[string]any.
func (d *decodeState) objectInterface() (any, error) {
	if _, err := d.dec.ReadToken(); err != nil { // {
		return nil, err
	}
	m := make(map[string]any) // maps stay on the heap
	for d.dec.PeekKind() != '}' {
		// Read string key.
		item, err := d.dec.ReadValue()
		if err != nil {
			return nil, err
		}
		key, ok := d.unquoteBytes(item, 0)
		if !ok {
			panic(phasePanicMsg)
		}
		k := d.str(key)

		// Read value.
		x, err := d.valueInterface()
		if err != nil {
			return nil, err
		}
		m[k] = x
	}
	if _, err := d.dec.ReadToken(); err != nil { // }
		return nil, err
	}
	return m, nil
}

// literalInterface consumes and returns a literal.
func (d *decodeState) literalInterface() (any, error) {
	item, err := d.dec.ReadValue()
	if err != nil {
		return nil, err
	}
	switch c := item[0]; c {
	case 'n': // null
		return nil, nil

	case 't', 'f': // true, false
		return c == 't', nil

	case '"': // string
		s, ok := d.unquoteBytes(item, 0)
		if !ok {
			panic(phasePanicMsg)
		}
		return d.anyString(d.str(s)), nil

	default: // number
		if c != '-' && (c < '0' || c > '9') {
			panic(phasePanicMsg)
		}
		n, err := d.convertNumber(item)
		if err != nil {
			d.saveError(err)
		}
		return n, nil
	}
}

// plainByte holds the ASCII bytes a JSON string holds as they are: not a
// control character, '"' or '\\'.
var plainByte = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// getu4 decodes \uXXXX from the beginning of s, returning the hex value,
// or it returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c = c - '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// unquoteBytes converts a quoted JSON string literal s into the bytes it
// stands for, as encoding/json does (invalid UTF-8 and unpaired surrogates
// become U+FFFD). The result is s's own bytes when s holds no escape, else
// it is in d.scratch[buf], valid until the next use of that buffer.
func (d *decodeState) unquoteBytes(s []byte, buf int) (t []byte, ok bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return
	}
	s = s[1 : len(s)-1]

	// Check for unusual characters. If there are none,
	// then no unquoting is needed, so return a slice of the
	// original bytes.
	r := 0
	for r < len(s) {
		c := s[r]
		if plainByte[c] {
			r++
			continue
		}
		if c < utf8.RuneSelf { // '\\', '"' or a control character
			break
		}
		rr, size := utf8.DecodeRune(s[r:])
		if rr == utf8.RuneError && size == 1 {
			break
		}
		r += size
	}
	if r == len(s) {
		return s, true
	}

	b := d.scratch[buf][:0]
	if n := len(s) + 2*utf8.UTFMax; cap(b) < n {
		// Sized once, as encoding/json sizes its buffer: the result is
		// never longer unless invalid UTF-8 is expanded to U+FFFD.
		b = make([]byte, 0, n)
	}
	b = append(b, s[0:r]...)
	var u [utf8.UTFMax]byte
	for r < len(s) {
		switch c := s[r]; {
		case c == '\\':
			r++
			if r >= len(s) {
				return
			}
			switch s[r] {
			default:
				return
			case '"', '\\', '/', '\'':
				b = append(b, s[r])
				r++
			case 'b':
				b = append(b, '\b')
				r++
			case 'f':
				b = append(b, '\f')
				r++
			case 'n':
				b = append(b, '\n')
				r++
			case 'r':
				b = append(b, '\r')
				r++
			case 't':
				b = append(b, '\t')
				r++
			case 'u':
				r--
				rr := getu4(s[r:])
				if rr < 0 {
					return
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					rr1 := getu4(s[r:])
					if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
						// A valid pair; consume.
						r += 6
						b = append(b, u[:utf8.EncodeRune(u[:], dec)]...)
						break
					}
					// Invalid surrogate; fall back to replacement rune.
					rr = unicode.ReplacementChar
				}
				b = append(b, u[:utf8.EncodeRune(u[:], rr)]...)
			}

		// Quote, control characters are invalid.
		case c == '"', c < ' ':
			return

		// ASCII
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++

		// Coerce to well-formed UTF-8.
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			b = append(b, u[:utf8.EncodeRune(u[:], rr)]...)
		}
	}
	d.scratch[buf] = b
	return b, true
}
