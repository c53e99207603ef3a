package arenajson

import (
	"encoding/json"
	"syscall"
	"testing"

	"github.com/arenaprof/arenaprof/arena"
)

// registerCorpusTypes registers the corpus types with pointers, as a
// service registers its request types: named types by name, anonymous
// struct types through type inference (elemOf, ptrOf, mapElemOf).
func registerCorpusTypes() {
	Register[golangNode]()
	Register[twitterStatus]()
	Register[twitterURL]()
	Register[syntheaCode]()
	Register[syntheaCoding]()
	Register[syntheaReference]()
	Register[syntheaAddress]()
	Register[syntheaExtension]()
	Register[[][2]float64]()

	elemOf(canadaRoot{}.Features)

	perf := elemOf(citmRoot{}.Performances)
	elemOf(perf.Prices)
	elemOf(elemOf(perf.SeatCategories).Areas)
	mapElemOf(citmRoot{}.Events)

	elemOf(twitterEntities{}.UserMentions)
	mapElemOf(elemOf(twitterEntities{}.Media).Sizes)

	entry := elemOf(syntheaRoot{}.Entry)
	ptrOf(entry.Request)
	res := ptrOf(entry.Resource)
	elemOf(res.Activity)
	ptrOf(elemOf(res.Activity).Detail)
	elemOf(res.CareTeam)
	elemOf(res.Communication)
	elemOf(res.Component)
	elemOf(res.Contained)
	elemOf(res.Diagnosis)
	dosage := elemOf(res.DosageInstruction)
	elemOf(dosage.DoseAndRate)
	ptrOf(ptrOf(dosage.Timing).Repeat)
	elemOf(res.Identifier)
	elemOf(res.Insurance)
	item := elemOf(res.Item)
	elemOf(item.Adjudication)
	elemOf(res.Participant)
	ptrOf(res.Payment)
	elemOf(res.Procedure)
	elemOf(res.Series)
	elemOf(elemOf(res.Series).Instance)
	elemOf(res.SupportingInfo)
}

// elemOf registers the element type of a slice, which may be anonymous,
// and returns its zero value for registering the types inside it.
func elemOf[E any](_ []E) E { Register[E](); var e E; return e }

// ptrOf registers the type a pointer points to.
func ptrOf[E any](_ *E) E { Register[E](); var e E; return e }

// mapElemOf registers the value type of a map.
func mapElemOf[K comparable, E any](_ map[K]E) E { Register[E](); var e E; return e }

func init() { registerCorpusTypes() }

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
