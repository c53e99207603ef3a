package sampling

import "testing"

var benchSink int64

func BenchmarkGapNext(b *testing.B) {
	g, _ := NewGapSamplerSeeded(DefaultMeanBytes, 1, 2)
	var s int64
	for b.Loop() {
		s += g.Next()
	}
	benchSink = s
}
