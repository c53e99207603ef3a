package hooks

import (
	"slices"
	"strconv"
	"strings"
)

// Labels is an immutable set of key/value pairs attached to an arena and to
// every event it emits. The zero value is the empty set. Labels are cheap to
// copy and compare: [Labels.Key] is a canonical encoding computed once.
type Labels struct {
	kv  []string // sorted by key: k0, v0, k1, v1, ...
	key string
}

// NewLabels builds a label set from key/value pairs. A later pair overrides
// an earlier one with the same key. It panics if kv has an odd length.
//
// For the pprof labels of a context (runtime/pprof.Do, WithLabels), collect
// them with pprof.ForLabels and pass them here, as package arena's Pool
// does.
func NewLabels(kv ...string) Labels {
	if len(kv)%2 != 0 {
		panic("arenaprof: hooks.NewLabels needs key/value pairs, got an odd number of strings")
	}
	m := make(map[string]string, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return fromMap(m)
}

func fromMap(m map[string]string) Labels {
	if len(m) == 0 {
		return Labels{}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	kv := make([]string, 0, 2*len(keys))
	var b strings.Builder
	for _, k := range keys {
		kv = append(kv, k, m[k])
		b.WriteString(strconv.Quote(k))
		b.WriteByte('=')
		b.WriteString(strconv.Quote(m[k]))
		b.WriteByte(';')
	}
	return Labels{kv: kv, key: b.String()}
}

// Get returns the value of key and whether it is set.
func (l Labels) Get(key string) (string, bool) {
	for i := 0; i < len(l.kv); i += 2 {
		if l.kv[i] == key {
			return l.kv[i+1], true
		}
	}
	return "", false
}

// All calls yield for each label in key order; range over it:
//
//	for k, v := range labels.All {
//		...
//	}
func (l Labels) All(yield func(key, value string) bool) {
	for i := 0; i < len(l.kv); i += 2 {
		if !yield(l.kv[i], l.kv[i+1]) {
			return
		}
	}
}

// Key returns a canonical encoding of the set: two sets are equal if and
// only if their keys are equal. The empty set has the empty key.
func (l Labels) Key() string { return l.key }

// String formats the set as {k="v", ...}.
func (l Labels) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < len(l.kv); i += 2 {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(l.kv[i])
		b.WriteByte('=')
		b.WriteString(strconv.Quote(l.kv[i+1]))
	}
	b.WriteByte('}')
	return b.String()
}
