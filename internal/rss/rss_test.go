package rss

import (
	"testing"
)

func TestReadSelf(t *testing.T) {
	r := Read()
	b := Classify(r)
	t.Logf("RSS %d consistent %v heap records %d smaps %v maps %+v", b.RSS, r.Consistent, len(r.Heap), r.SmapsErr, r.maps)
	for i, c := range Classes {
		t.Logf("%-14s %12d", c, b.Bytes[i])
	}
	for _, n := range b.Notes {
		t.Log(n)
	}
}
