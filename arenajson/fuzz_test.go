package arenajson

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// fuzzTypes are the fixed targets of FuzzUnmarshal.
var fuzzTypes = []func() any{
	newOf[any](),
	newOf[caseBasic](),
	newOf[caseQuoted](),
	newOf[caseEmbedded](),
	newOf[caseMaps](),
	newOf[[]caseRecursive](),
	newOf[struct{ T, U caseText }](),
	newOf[[]caseUnm](),
	newOf[caseWithTime](),
	newOf[twitterRoot](),
	newOf[golangRoot](),
}

// FuzzUnmarshal decodes random inputs into a set of fixed types with
// Unmarshal and encoding/json and requires the same error and values.
func FuzzUnmarshal(f *testing.F) {
	requireV1(f)
	for _, c := range cases {
		f.Add(uint8(0), []byte(c.in))
		v := c.new()
		if json.Unmarshal([]byte(c.in), v) == nil {
			for i := range fuzzTypes {
				f.Add(uint8(i), []byte(c.in))
			}
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		newV := fuzzTypes[int(which)%len(fuzzTypes)]
		if d := differ(data, newV); d != "" {
			t.Fatalf("type %T, input %q: %s", newV(), data, d)
		}
	})
}

// FuzzUnmarshalTypes builds a random Go type from seed (structs with
// random names, tags and ",string" options, slices, arrays, pointers,
// maps, any, json.Number, []byte and types with Unmarshal methods), and
// decodes data into it with Unmarshal and encoding/json. The seeds pair
// such types with the JSON of random values of them.
func FuzzUnmarshalTypes(f *testing.F) {
	requireV1(f)
	for seed := range uint64(64) {
		t := randomType(seed)
		r := rand.New(rand.NewPCG(seed, 1))
		v := reflect.New(t)
		fillRandom(r, v.Elem(), 0)
		b, err := json.Marshal(v.Interface())
		if err != nil {
			f.Fatalf("seed %d: %v", seed, err)
		}
		f.Add(seed, b)
	}
	f.Fuzz(func(tt *testing.T, seed uint64, data []byte) {
		t := randomType(seed)
		if d := differ(data, func() any { return reflect.New(t).Interface() }); d != "" {
			tt.Fatalf("type %v, input %q: %s", t, data, d)
		}
	})
}

// randomType returns the random type of seed; the same seed gives the
// same type.
func randomType(seed uint64) reflect.Type {
	r := rand.New(rand.NewPCG(seed, 0))
	return genType(r, 0)
}

var leafTypes = []reflect.Type{
	reflect.TypeFor[bool](), reflect.TypeFor[int](), reflect.TypeFor[int8](),
	reflect.TypeFor[int64](), reflect.TypeFor[uint8](), reflect.TypeFor[uint32](),
	reflect.TypeFor[float32](), reflect.TypeFor[float64](), reflect.TypeFor[string](),
	reflect.TypeFor[any](), reflect.TypeFor[json.Number](), reflect.TypeFor[[]byte](),
	reflect.TypeFor[caseText](), reflect.TypeFor[caseUnmVal](), reflect.TypeFor[json.RawMessage](),
}

var fieldNames = []string{"A", "B", "a", "Name", "NAME", "x", "Id", "ID", "K", "\u212a"}

func genType(r *rand.Rand, depth int) reflect.Type {
	k := r.IntN(10)
	if depth >= 3 {
		k = 0
	}
	switch k {
	case 0, 1, 2:
		return leafTypes[r.IntN(len(leafTypes))]
	case 3:
		return reflect.SliceOf(genType(r, depth+1))
	case 4:
		return reflect.ArrayOf(r.IntN(4), genType(r, depth+1))
	case 5:
		return reflect.PointerTo(genType(r, depth+1))
	case 6:
		keys := []reflect.Type{reflect.TypeFor[string](), reflect.TypeFor[int16](), reflect.TypeFor[uint](), reflect.TypeFor[caseTextKey]()}
		return reflect.MapOf(keys[r.IntN(len(keys))], genType(r, depth+1))
	default:
		n := 1 + r.IntN(5)
		var fs []reflect.StructField
		used := map[string]bool{}
		for i := range n {
			ft := genType(r, depth+1)
			name := fmt.Sprintf("F%d", i)
			tag := ""
			switch r.IntN(4) {
			case 0:
				tag = fmt.Sprintf(`json:"%s"`, fieldNames[r.IntN(len(fieldNames))])
			case 1:
				tag = fmt.Sprintf(`json:"%s,string"`, fieldNames[r.IntN(len(fieldNames))])
			case 2:
				tag = `json:",string"`
			}
			if used[name] {
				continue
			}
			used[name] = true
			fs = append(fs, reflect.StructField{Name: name, Type: ft, Tag: reflect.StructTag(tag)})
		}
		return reflect.StructOf(fs)
	}
}

// fillRandom sets v to a random value of its type.
func fillRandom(r *rand.Rand, v reflect.Value, depth int) {
	if depth > 6 {
		return
	}
	switch v.Type() {
	case reflect.TypeFor[json.Number]():
		v.SetString(fmt.Sprint(r.IntN(1000)))
		return
	case reflect.TypeFor[json.RawMessage]():
		v.SetBytes([]byte(`{"raw":[1,2]}`))
		return
	case reflect.TypeFor[caseText]():
		return // it has no MarshalText: its JSON is {}
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(r.IntN(200)) - 100)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(r.IntN(200)))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(r.IntN(1000)) / 8)
	case reflect.String:
		v.SetString([]string{"", "a", "é", "\u212a", "x\"y", "12"}[r.IntN(6)])
	case reflect.Interface:
		if v.NumMethod() == 0 && r.IntN(2) == 0 {
			v.Set(reflect.ValueOf(map[string]any{"k": []any{1.5, "s", nil}}))
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte("bytes"))
			return
		}
		n := r.IntN(3)
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			fillRandom(r, v.Index(i), depth+1)
		}
	case reflect.Array:
		for i := range v.Len() {
			fillRandom(r, v.Index(i), depth+1)
		}
	case reflect.Pointer:
		if r.IntN(3) > 0 {
			v.Set(reflect.New(v.Type().Elem()))
			fillRandom(r, v.Elem(), depth+1)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for range r.IntN(3) {
			k := reflect.New(v.Type().Key()).Elem()
			fillRandom(r, k, depth+1)
			if k.Kind() == reflect.String && v.Type().Key() != reflect.TypeFor[string]() {
				k.SetString("key")
			}
			e := reflect.New(v.Type().Elem()).Elem()
			fillRandom(r, e, depth+1)
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillRandom(r, v.Field(i), depth+1)
			}
		}
	}
}
