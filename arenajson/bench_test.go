package arenajson

import (
	"encoding/json"
	"syscall"
	"testing"

	"github.com/arenaprof/arenaprof/arena"
)

// BenchmarkUnmarshal decodes each corpus into its Go type with
// encoding/json and with Unmarshal into an arena reset before each decode
// (as a pooled arena is between requests). The two run interleaved, one
// sub-benchmark after the other per corpus; compare them with benchstat
// over -count=10. Besides the wall time, cpu-ns/op is the process's CPU
// time (user and system, the garbage collector's workers included) per
// decode: on a shared machine it varies less than the wall time.
func BenchmarkUnmarshal(b *testing.B) {
	for _, c := range corpora {
		data := c.data()
		b.Run(c.name+"/impl=encoding-json", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if err := json.Unmarshal(data, c.new()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
		b.Run(c.name+"/impl=arenajson", func(b *testing.B) {
			a := arena.NewArena()
			defer a.Free()
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				a.Reset()
				if err := Unmarshal(a, data, c.new()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime returns the process's user and system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
