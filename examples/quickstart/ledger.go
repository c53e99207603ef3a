package main

import (
	"reflect"
	"runtime"
)

// ledger counts, exactly, the bytes the service takes from its arenas, by
// endpoint, Go type and allocating function: the truth the profile's
// estimates are compared with. Each worker has its own ledger; they are
// merged at the end.
type ledger struct {
	bytes map[siteKey]int64
	total int64
}

// siteKey is one (endpoint, type, function) of the ledger.
type siteKey struct {
	endpoint, typ, fn string
}

func newLedger() *ledger { return &ledger{bytes: map[siteKey]int64{}} }

// arenaSize is the number of bytes an arena hands out for an object (or a
// slice's backing array, or a string) of n bytes: n rounded up to a
// multiple of 8, which keeps every object 8-aligned. The profile samples,
// and estimates, these rounded bytes. (Go has no type aligned to more than
// 8 bytes; one would also be padded in front.)
func arenaSize(n int64) int64 { return (n + 7) &^ 7 }

// add records an allocation of n bytes (before rounding) of type typ by
// function fn, for a request to endpoint. Types and functions are named as
// the profile names them: "main.record", "[]uint8", "main.parseRecord".
func (l *ledger) add(endpoint, typ, fn string, n int64) {
	n = arenaSize(n)
	l.bytes[siteKey{endpoint, typ, fn}] += n
	l.total += n
}

// merge adds the counts of o to l.
func (l *ledger) merge(o *ledger) {
	for k, v := range o.bytes {
		l.bytes[k] += v
	}
	l.total += o.total
}

// by returns the true bytes grouped as the profile's table groups them:
// by "type", "func" or "label=endpoint".
func (l *ledger) by(group string) map[string]int64 {
	m := map[string]int64{}
	for k, v := range l.bytes {
		switch group {
		case "type":
			m[k.typ] += v
		case "func":
			m[k.fn] += v
		default:
			m[k.endpoint] += v
		}
	}
	return m
}

// The allocating functions, named as the profile names them: the full
// function name, "main.parseRecord" in this program (set in init, since the
// functions refer to these names).
var fnHandle, fnParseHeader, fnParseRecord, fnReadField, fnSnapshotStats, fnBuildIndex, fnEncodeResponse string

func init() {
	fnHandle = funcName(handle)
	fnParseHeader = funcName(parseHeader)
	fnParseRecord = funcName(parseRecord)
	fnReadField = funcName(readField)
	fnSnapshotStats = funcName(snapshotStats)
	fnBuildIndex = funcName(buildIndex)
	fnEncodeResponse = funcName(encodeResponse)
}

// funcName returns the name of function f as the runtime (and so the
// profile) knows it.
func funcName(f any) string {
	return runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
}
