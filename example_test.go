package arenaprof_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/arenaprof/arenaprof"
	"github.com/arenaprof/arenaprof/arena"
	"github.com/google/pprof/profile"
)

type line struct {
	sku   int64
	qty   int32
	cents int64
}

// Start profiles arena allocations and serves the profile on a mux, where
// go tool pprof http://host/debug/arenaprof reads it. The example samples
// every object (SampleMeanBytes 1) so that its output is exact; a service
// keeps the default mean, and sets PyroscopeURL, OTLPURL or Dir to upload
// profiles.
func ExampleStart() {
	mux := http.NewServeMux()
	s, err := arenaprof.Start(arenaprof.Config{Mux: mux, SampleMeanBytes: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Stop(context.Background())

	a := arena.NewArena()
	for i := range 100 {
		arena.New[line](a).sku = int64(i)
	}

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/arenaprof", nil))
	p, err := profile.Parse(rec.Body)
	if err != nil {
		log.Fatal(err)
	}
	for i, st := range p.SampleType {
		var sum int64
		for _, smp := range p.Sample {
			sum += smp.Value[i]
		}
		fmt.Printf("%s %d %s\n", st.Type, sum, st.Unit)
	}
	a.Free()
	// Output:
	// alloc_objects 100 count
	// alloc_space 2400 bytes
	// inuse_objects 100 count
	// inuse_space 2400 bytes
	// alloc_samples 100 count
	// alloc_tail 2400 bytes
}
