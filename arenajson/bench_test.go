package arenajson

import (
	"encoding/json"
	"testing"

	"github.com/arenaprof/arenaprof/arena"
)

// registerCorpusTypes registers the named corpus types with pointers, as a
// service registers its request types. The corpora's anonymous struct
// types (citm's areas, synthea's resources, twitter's media) cannot be
// named in Register and stay on the heap.
func registerCorpusTypes() {
	Register[golangNode]()
	Register[twitterStatus]()
	Register[twitterURL]()
	Register[syntheaCode]()
	Register[syntheaCoding]()
	Register[syntheaReference]()
	Register[syntheaAddress]()
	Register[syntheaExtension]()
	Register[[]float64]()
	Register[[][2]float64]()
}

func init() { registerCorpusTypes() }

// BenchmarkUnmarshal decodes each corpus into its Go type with
// encoding/json and with Unmarshal into an arena reset before each decode
// (as a pooled arena is between requests). The two run interleaved, one
// sub-benchmark after the other per corpus; compare them with benchstat
// over -count=10.
func BenchmarkUnmarshal(b *testing.B) {
	for _, c := range corpora {
		data := c.data()
		b.Run(c.name+"/impl=encoding-json", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := json.Unmarshal(data, c.new()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/impl=arenajson", func(b *testing.B) {
			a := arena.NewArena()
			defer a.Free()
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				a.Reset()
				if err := Unmarshal(a, data, c.new()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
