package arenajson

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Types for the tricky cases.
type (
	caseBasic struct {
		Name   string
		Count  int
		Ratio  float64
		OK     bool
		Tags   []string
		Ptr    *int
		Any    any
		Bytes  []byte
		Arr    [3]int
		Inner  caseInner
		PInner *caseInner
		M      map[string]int
		Num    json.Number
		U8     uint8
		I8     int8
		F32    float32
		skip   int //lint:ignore U1000 unexported: never decoded
		Dash   int `json:"-"`
		//lint:ignore SA5008 the field named "-", a case of its own
		Comma int `json:"-,"`
	}
	caseInner struct {
		A, B string
		C    []int
	}
	caseQuoted struct {
		I int     `json:",string"`
		F float64 `json:",string"`
		B bool    `json:",string"`
		S string  `json:",string"`
		P *int    `json:",string"`
		U uint    `json:",string"`
		//lint:ignore SA5008 not quotable: the option is ignored, a case of its own
		N  []int    `json:",string"`
		Nu *float64 `json:"nu,string"`
	}
	caseEmbedA struct {
		X int
		Y int `json:"y"`
	}
	caseEmbedB struct {
		X int
		Z string
	}
	caseEmbedded struct {
		caseEmbedA
		*caseEmbedB
		W int
	}
	caseEmbedTagged struct {
		caseEmbedA `json:"a"`
		Q          int
	}
	caseUnexp     struct{ V int }
	caseEmbedPriv struct {
		*caseUnexp
	}
	caseDeep struct {
		Outer struct {
			Mid struct {
				Leaf int
			}
		}
	}
	caseTextKey string
	caseMaps    struct {
		IntKeys  map[int]string
		UintKeys map[uint8]bool
		TextKeys map[netip.Addr]int
		BadKeys  map[[2]int]int
		Nested   map[string][]map[string]any
	}
	caseUnm struct {
		calls int
		raw   string
	}
	caseUnmVal   string
	caseText     struct{ s string }
	caseIfaceNE  struct{ S fmt.Stringer }
	caseWithTime struct {
		T  time.Time
		D  *time.Time
		BI *big.Int
		IP netip.Addr
	}
	caseFail struct{}
	caseFold struct {
		KelvinK   int `json:"k"` // folded: "K" (Kelvin sign) matches
		Straße    int
		HTMLTitle string `json:"html_title"`
	}
	caseRecursive struct {
		Name string
		Next *caseRecursive
		Kids []caseRecursive
	}
)

func (u *caseUnm) UnmarshalJSON(b []byte) error {
	u.calls++
	u.raw = string(b)
	return nil
}

func (u *caseUnmVal) UnmarshalJSON(b []byte) error {
	*u = caseUnmVal("got:" + string(b))
	return nil
}

func (t *caseText) UnmarshalText(b []byte) error {
	if string(b) == "bad" {
		return errors.New("caseText: bad")
	}
	t.s = strings.ToUpper(string(b))
	return nil
}

func (caseFail) UnmarshalJSON([]byte) error { return errors.New("caseFail: always") }

func (k *caseTextKey) UnmarshalText(b []byte) error {
	*k = caseTextKey("k-" + string(b))
	return nil
}

// caseDupType is struct{ A int `json:"x"`; B int `json:"x"`; C int `json:"y"` },
// made with reflect because vet refuses the repeated tag in source.
var caseDupType = reflect.StructOf([]reflect.StructField{
	{Name: "A", Type: reflect.TypeFor[int](), Tag: `json:"x"`},
	{Name: "B", Type: reflect.TypeFor[int](), Tag: `json:"x"`},
	{Name: "C", Type: reflect.TypeFor[int](), Tag: `json:"y"`},
})

func newOf[T any]() func() any { return func() any { return new(T) } }

// prefilled returns a value that already holds data, for the cases where
// encoding/json merges into existing values.
func prefilled() any {
	n := 7
	return &caseBasic{Name: "old", Tags: make([]string, 1, 10), Ptr: &n, Any: &n,
		M: map[string]int{"keep": 1}, Inner: caseInner{A: "a", C: []int{9, 9, 9, 9}},
		PInner: &caseInner{B: "b"}}
}

// cases are inputs where encoding/json's behaviour is easy to get wrong.
var cases = []struct {
	name string
	in   string
	new  func() any
}{
	{"basic", `{"Name":"n","Count":3,"Ratio":1.5,"OK":true,"Tags":["a","b"],"Ptr":5,"Any":{"x":[1,"s",null,true]},"Bytes":"aGVsbG8=","Arr":[1,2],"Inner":{"A":"x","C":[1,2,3]},"PInner":{"B":"y"},"M":{"a":1},"Num":12.5e3,"U8":255,"I8":-128,"F32":3.25}`, newOf[caseBasic]()},
	{"case-insensitive", `{"name":"n","COUNT":3,"rAtIo":2,"inner":{"a":"x"}}`, newOf[caseBasic]()},
	{"duplicate last wins", `{"Name":"a","name":"b","NAME":"c"}`, newOf[caseBasic]()},
	{"unknown fields", `{"Nope":1,"Name":"x","skip":5,"Dash":1,"-":2}`, newOf[caseBasic]()},
	{"null everywhere", `{"Name":null,"Count":null,"Tags":null,"Ptr":null,"Any":null,"Bytes":null,"Arr":null,"Inner":null,"PInner":null,"M":null,"Num":null}`, prefilled},
	{"merge into existing", `{"Tags":["x","y"],"Ptr":8,"Any":9,"M":{"new":2},"Inner":{"B":"b","C":[1]},"PInner":{"A":"a"}}`, prefilled},
	{"slice reuse cap", `{"Tags":["x","y","z"]}`, prefilled},
	{"empty slice and object", `{"Tags":[],"M":{},"Inner":{},"Arr":[]}`, prefilled},
	{"array too long", `{"Arr":[1,2,3,4,5]}`, newOf[caseBasic]()},
	{"array short zeroes", `[1]`, func() any { a := [3]int{7, 8, 9}; return &a }},
	{"int overflow", `{"I8":128,"U8":256,"Count":1}`, newOf[caseBasic]()},
	{"uint negative", `{"U8":-1}`, newOf[caseBasic]()},
	{"float to int", `{"Count":1.5,"Name":"after"}`, newOf[caseBasic]()},
	{"float32 overflow", `{"F32":1e39}`, newOf[caseBasic]()},
	{"float64 overflow", `{"Ratio":1e400}`, newOf[caseBasic]()},
	{"big exponent any", `[1e400]`, newOf[any]()},
	{"type errors continue", `{"Count":"x","Name":5,"OK":"true","Tags":"s","Inner":[1],"Ratio":true,"M":[],"Any":1}`, newOf[caseBasic]()},
	{"type error nested field", `{"Inner":{"C":[1,"x",3]}}`, newOf[caseBasic]()},
	{"base64 bad", `{"Bytes":"!!!","Name":"x"}`, newOf[caseBasic]()},
	{"base64 unpadded", `{"Bytes":"aGVsbG8"}`, newOf[caseBasic]()},
	{"base64 newline", `{"Bytes":"aGVs\nbG8="}`, newOf[caseBasic]()},
	{"bytes as array", `{"Bytes":[1,2,300]}`, newOf[caseBasic]()},
	{"number valid", `{"Num":"12"}`, newOf[caseBasic]()},
	{"number invalid", `{"Num":"x12"}`, newOf[caseBasic]()},
	{"number to Number any", `[1,-0,0.5e-3]`, newOf[[]json.Number]()},
	{"quoted ok", `{"I":"12","F":"1.5","B":"true","S":"\"q\"","P":"3","U":"7","N":[1],"nu":"2.5"}`, newOf[caseQuoted]()},
	{"quoted null", `{"I":null,"P":null,"S":null}`, newOf[caseQuoted]()},
	{"quoted null string", `{"P":"null","I":"null"}`, newOf[caseQuoted]()},
	{"quoted unquoted", `{"I":12}`, newOf[caseQuoted]()},
	{"quoted bad number", `{"I":"x"}`, newOf[caseQuoted]()},
	{"quoted empty", `{"I":""}`, newOf[caseQuoted]()},
	{"quoted bool bad", `{"B":"yes"}`, newOf[caseQuoted]()},
	{"quoted string not quoted", `{"S":"plain"}`, newOf[caseQuoted]()},
	{"quoted string escapes", `{"S":"\"a\\u00e9\\n\""}`, newOf[caseQuoted]()},
	{"quoted object", `{"I":{"a":1},"F":[1]}`, newOf[caseQuoted]()},
	{"quoted overflow", `{"U":"-1"}`, newOf[caseQuoted]()},
	{"embedded", `{"X":1,"y":2,"Z":"z","W":3}`, newOf[caseEmbedded]()},
	{"embedded tagged", `{"a":{"X":1},"X":5,"Q":2}`, newOf[caseEmbedTagged]()},
	{"embedded unexported pointer", `{"V":1}`, newOf[caseEmbedPriv]()},
	{"deep field error", `{"Outer":{"Mid":{"Leaf":"s"}}}`, newOf[caseDeep]()},
	{"map keys", `{"IntKeys":{"1":"a","-2":"b"},"UintKeys":{"7":true},"TextKeys":{"127.0.0.1":1},"Nested":{"a":[{"b":[1,{"c":null}]}]}}`, newOf[caseMaps]()},
	{"map bad int key", `{"IntKeys":{"x":"a","2":"b"}}`, newOf[caseMaps]()},
	{"map uint overflow", `{"UintKeys":{"256":true}}`, newOf[caseMaps]()},
	{"map bad text key", `{"TextKeys":{"not-an-ip":1}}`, newOf[caseMaps]()},
	{"map array key", `{"BadKeys":{"a":1}}`, newOf[caseMaps]()},
	{"map text key type", `{"a":1,"b":2}`, newOf[map[caseTextKey]int]()},
	{"unmarshaler top", ` [1, 2 ,{"a" : "b"}] `, newOf[caseUnm]()},
	{"unmarshaler null", `null`, newOf[caseUnm]()},
	{"unmarshaler ptr field null", `{"U":null}`, newOf[struct{ U *caseUnm }]()},
	{"unmarshaler value type", `{"A":"x","B":[1,2]}`, newOf[struct{ A, B caseUnmVal }]()},
	{"unmarshaler in slice", `[1,"a",{}]`, newOf[[]caseUnm]()},
	{"unmarshaler error", `{"F":1,"G":2}`, newOf[struct{ F, G caseFail }]()},
	{"text unmarshaler", `{"T":"abc","P":"x"}`, newOf[struct {
		T caseText
		P *caseText
	}]()},
	{"text unmarshaler error", `{"T":"bad"}`, newOf[struct{ T caseText }]()},
	{"text unmarshaler number", `{"T":5,"U":true,"V":null,"W":[1],"X":{}}`, newOf[struct{ T, U, V, W, X caseText }]()},
	{"time and friends", `{"T":"2024-01-02T03:04:05Z","D":"2025-06-07T08:09:10.5+02:00","BI":123456789012345678901234567890,"IP":"::1"}`, newOf[caseWithTime]()},
	{"time bad", `{"T":"yesterday"}`, newOf[caseWithTime]()},
	{"non-empty interface", `{"S":"x"}`, newOf[caseIfaceNE]()},
	{"any scalars", `[null,true,false,0,-1.5e10,"s","\u00e9"]`, newOf[any]()},
	{"any nested", `{"a":{"b":{"c":[[],{}]}}}`, newOf[any]()},
	{"any existing ptr", `5`, func() any { n := 1; var x any = &n; return &x }},
	{"any existing ptr null", `null`, func() any { n := 1; var x any = &n; return &x }},
	{"any existing value", `"s"`, func() any { var x any = 3; return &x }},
	{"pointer chain", `5`, func() any { var p ***int; return &p }},
	{"pointer chain null", `null`, func() any { n := 1; p := &n; pp := &p; return &pp }},
	{"map of slices", `{"a":[1,2],"b":[]}`, newOf[map[string][]int]()},
	{"slice of pointers", `[{"A":"x"},null,{"B":"y"}]`, newOf[[]*caseInner]()},
	{"slice of slices", `[[1,2],[3],[],null]`, newOf[[][]float64]()},
	{"slice of structs", `[{"A":"x","C":[1]},{"B":"y"}]`, newOf[[]caseInner]()},
	{"fold kelvin", `{"\u212a":1,"STRASSE":2,"straße":3,"HTML_TITLE":"t"}`, newOf[caseFold]()},
	{"duplicate tags annihilate", `{"x":1,"y":2}`, func() any { return reflect.New(caseDupType).Interface() }},
	{"recursive", `{"Name":"a","Next":{"Name":"b","Next":{"Name":"c"}},"Kids":[{"Name":"d","Kids":[{"Name":"e"}]}]}`, newOf[caseRecursive]()},
	{"escapes", `["\"\\\/\b\f\n\r\t\u0041\u00e9\u4e2d\ud83d\ude00"]`, newOf[[]string]()},
	{"bad surrogates", `["\ud800","\udc00x","\ud800\u0041","\ud83d\ud83d"]`, newOf[[]string]()},
	{"invalid utf8", "[\"a\xffb\",\"\xc3\x28\",\"\xed\xa0\x80\"]", newOf[[]string]()},
	{"invalid utf8 any", "{\"k\xff\":\"v\xfe\"}", newOf[any]()},
	{"invalid utf8 key", "{\"Na\xffme\":\"v\"}", newOf[caseBasic]()},
	{"string to int", `"5"`, newOf[int]()},
	{"bool to string", `true`, newOf[string]()},
	{"object to slice", `{}`, newOf[[]int]()},
	{"array to struct", `[]`, newOf[caseBasic]()},
	{"array to map", `[1]`, newOf[map[string]int]()},
	{"empty key", `{"":1}`, newOf[map[string]int]()},
	{"whitespace", " \t\r\n{ \"Name\" : \"x\" , \"Count\" : 1 } \n", newOf[caseBasic]()},
	// Syntax: encoding/json checks the whole input before storing.
	{"empty", ``, newOf[any]()},
	{"spaces only", `   `, newOf[any]()},
	{"trailing value", `{"Name":"x"} {}`, newOf[caseBasic]()},
	{"trailing garbage", `{"Name":"x"}x`, newOf[caseBasic]()},
	{"trailing comma", `{"Name":"x",}`, newOf[caseBasic]()},
	{"truncated object", `{"Name":"x"`, newOf[caseBasic]()},
	{"truncated string", `{"Name":"x`, newOf[caseBasic]()},
	{"truncated number", `[1.`, newOf[any]()},
	{"truncated literal", `[tru`, newOf[any]()},
	{"leading zero", `01`, newOf[any]()},
	{"bad escape", `["\x"]`, newOf[any]()},
	{"control char", "[\"a\tb\"]", newOf[any]()},
	{"single quote", `['a']`, newOf[any]()},
	{"NaN", `NaN`, newOf[float64]()},
	{"plus", `+1`, newOf[float64]()},
	{"syntax after type error", `{"Count":"x"} x`, newOf[caseBasic]()},
	{"BOM", "\ufeff{}", newOf[any]()},
	{"nul byte", "{}\x00", newOf[any]()},
	{"colon missing", `{"a" 1}`, newOf[any]()},
	{"key not string", `{1:1}`, newOf[any]()},
}

// TestCases compares Unmarshal with encoding/json on the table of tricky
// cases: the same error (type and message) and the same values, the
// partial results after an error included.
func TestCases(t *testing.T) {
	requireV1(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if d := differ([]byte(c.in), c.new); d != "" {
				t.Errorf("input %q: %s", c.in, d)
			}
		})
	}
}

// TestInvalidTarget: nil, a non-pointer and a nil pointer, after the
// syntax check as in encoding/json.
func TestInvalidTarget(t *testing.T) {
	requireV1(t)
	var nilPtr *int
	for _, in := range []string{`1`, `x`} {
		for _, v := range []any{nil, 5, nilPtr, caseBasic{}} {
			wantErr := json.Unmarshal([]byte(in), v)
			gotErr := Unmarshal(nil, []byte(in), v)
			if errString(wantErr) != errString(gotErr) {
				t.Errorf("Unmarshal(%q, %#v) = %s, encoding/json %s", in, v, errString(gotErr), errString(wantErr))
			}
		}
	}
}
