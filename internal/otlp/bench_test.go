package otlp

import (
	"testing"

	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/internal/testkit/benchsnap"
)

// BenchmarkEncode100k encodes (without gzip) a profile of 100,000 buckets
// (1,000 real stacks times 100 sizes).
func BenchmarkEncode100k(b *testing.B) {
	p, err := export.Build(benchsnap.Snapshot(1000, 10))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n = len(Encode(nil, p, Request{Resource: []KeyValue{{"service.name", "shop"}}}))
	}
	b.ReportMetric(float64(n), "bytes")
}
