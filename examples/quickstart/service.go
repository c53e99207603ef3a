package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"reflect"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/arenaprof/arenaprof/arena"
)

// This file is the service: a batch-import API whose requests carry CSV
// records. Each request gets its own arena from a Pool, labelled with the
// request's endpoint, and everything the request builds lives in it until
// the request ends. The allocating functions also write down, exactly, the
// bytes they take from the arena (see ledger.go), so that the program can
// show the true numbers next to the profile's estimates. A real service
// does not need that bookkeeping.

// requestHeader is the parsed header of a request.
type requestHeader struct {
	id       int64
	endpoint string
	records  int
	received time.Time
	//lint:ignore U1000 never read, but part of the header's size, which the ledger and README's figures count
	client [4]uint64 // address and port
}

// record is one parsed CSV line: id,name,amount,note.
type record struct {
	id     int64
	amount int64
	name   string // in the arena (arena.String)
	note   []byte // in the arena (readField)
}

// stats is a snapshot of the service's counters, taken on every 16th
// request: the periodic part of the workload.
type stats struct {
	histogram [120]int64
	requests  int64
	records   int64
	at        time.Time
}

// request is one unit of work for a worker. Its payload is generated from
// seed by the worker itself (standing in for the network read), so the
// whole run is reproducible for a given -seed.
type request struct {
	id       int64
	endpoint string
	seed     uint64
}

// The sizes of the arena-allocated structs, for the ledger.
var (
	sizeHeader = int64(reflect.TypeFor[requestHeader]().Size())
	sizeRecord = int64(reflect.TypeFor[record]().Size())
	sizeStats  = int64(reflect.TypeFor[stats]().Size())
)

// worker handles requests until in is closed. Each request runs inside
// pprof.Do with its endpoint as a label; Pool.Get copies the context's
// labels onto the arena, so the profile can be grouped by endpoint.
func worker(pool *arena.Pool, in <-chan request, led *ledger, done func(bytes int64)) {
	var payload []byte // the request body: ordinary heap memory, reused
	for req := range in {
		labels := pprof.Labels("endpoint", req.endpoint)
		pprof.Do(context.Background(), labels, func(ctx context.Context) {
			a := pool.Get(ctx)
			defer pool.Put(a) // frees everything the request allocated
			payload = makePayload(payload[:0], req)
			before := led.total
			handle(a, req, payload, led)
			done(led.total - before)
		})
	}
}

// handle parses one request and builds its response, all in arena a.
func handle(a *arena.Arena, req request, payload []byte, led *ledger) {
	lines := bytes.Count(payload, []byte{'\n'})
	h := parseHeader(a, req, lines, led)
	recs := arena.MakeSlice[*record](a, 0, lines)
	led.add(req.endpoint, "[]*main.record", fnHandle, int64(lines)*8)
	for line := range bytes.Lines(payload) {
		if r := parseRecord(a, req.endpoint, line, led); r != nil {
			recs = append(recs, r) // within capacity: stays in the arena
		}
	}
	if req.id%16 == 15 {
		snapshotStats(a, req.endpoint, h, recs, led)
	}
	if req.id%64 == 63 {
		buildIndex(a, req, recs, led)
	}
	encodeResponse(a, req.endpoint, recs, led)
}

// parseHeader allocates the request's header.
func parseHeader(a *arena.Arena, req request, lines int, led *ledger) *requestHeader {
	h := arena.New[requestHeader](a)
	led.add(req.endpoint, "main.requestHeader", fnParseHeader, sizeHeader)
	h.id, h.endpoint, h.records, h.received = req.id, req.endpoint, lines, time.Now()
	return h
}

// parseRecord parses "id,name,amount,note\n" into an arena-allocated record.
func parseRecord(a *arena.Arena, endpoint string, line []byte, led *ledger) *record {
	var f [4][]byte
	rest := bytes.TrimSuffix(line, []byte{'\n'})
	for i := range f {
		f[i], rest, _ = bytes.Cut(rest, []byte{','})
	}
	id, err1 := strconv.ParseInt(string(f[0]), 10, 64)
	amount, err2 := strconv.ParseInt(string(f[2]), 10, 64)
	if err1 != nil || err2 != nil {
		return nil // a real service would report the bad line
	}
	r := arena.New[record](a)
	led.add(endpoint, "main.record", fnParseRecord, sizeRecord)
	r.id, r.amount = id, amount
	r.name = arena.String(a, string(f[1]))
	led.add(endpoint, "string", fnParseRecord, int64(len(f[1])))
	r.note = readField(a, endpoint, f[3], led)
	return r
}

// readField copies a field's bytes into the arena.
func readField(a *arena.Arena, endpoint string, field []byte, led *ledger) []byte {
	b := arena.MakeSlice[byte](a, len(field), len(field))
	led.add(endpoint, "[]uint8", fnReadField, int64(len(field)))
	copy(b, field)
	return b
}

// snapshotStats takes a 1 KiB snapshot of counters (every 16th request).
func snapshotStats(a *arena.Arena, endpoint string, h *requestHeader, recs []*record, led *ledger) *stats {
	s := arena.New[stats](a)
	led.add(endpoint, "main.stats", fnSnapshotStats, sizeStats)
	s.requests, s.records, s.at = h.id, int64(len(recs)), h.received
	for _, r := range recs {
		s.histogram[r.amount%int64(len(s.histogram))]++
	}
	return s
}

// buildIndex builds a hash index of 8Ki..128Ki slots (64 KiB..1 MiB) over
// the records (every 64th request): the few large buffers of the run.
func buildIndex(a *arena.Arena, req request, recs []*record, led *ledger) []uint64 {
	r := rand.New(rand.NewPCG(req.seed, 1))
	slots := 8<<10 + 8*r.IntN(15<<10+1) // multiple of 8, 8192..131072
	index := arena.MakeSlice[uint64](a, slots, slots)
	led.add(req.endpoint, "[]uint64", fnBuildIndex, int64(slots)*8)
	for i, rec := range recs {
		index[uint64(rec.id)%uint64(slots)] = uint64(i + 1)
	}
	return index
}

// encodeResponse writes "id:amount\n" per record into an arena buffer.
func encodeResponse(a *arena.Arena, endpoint string, recs []*record, led *ledger) []byte {
	n := 0
	for _, r := range recs {
		n += len(strconv.AppendInt(strconv.AppendInt(nil, r.id, 10), r.amount, 10)) + 2
	}
	out := arena.MakeSlice[byte](a, 0, n)
	led.add(endpoint, "[]uint8", fnEncodeResponse, int64(n))
	for _, r := range recs {
		out = strconv.AppendInt(out, r.id, 10)
		out = append(out, ':')
		out = strconv.AppendInt(out, r.amount, 10)
		out = append(out, '\n')
	}
	return out
}

// Endpoints and the share of requests each gets.
var endpoints = []struct {
	name    string
	percent int
	records [2]int // min, max records per request
}{
	{"/import/users", 60, [2]int{20, 60}},
	{"/import/orders", 30, [2]int{40, 120}},
	{"/report", 10, [2]int{5, 15}},
}

// newRequest returns request i of a run: its endpoint and payload seed
// depend only on (seed, i).
func newRequest(seed uint64, i int64) request {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	p := r.IntN(100)
	ep := endpoints[len(endpoints)-1].name
	for _, e := range endpoints {
		if p < e.percent {
			ep = e.name
			break
		}
		p -= e.percent
	}
	return request{id: i, endpoint: ep, seed: r.Uint64()}
}

// makePayload appends the CSV body of req to buf: id,name,amount,note
// lines, names of 3..20 letters, notes of 16..240 bytes.
func makePayload(buf []byte, req request) []byte {
	r := rand.New(rand.NewPCG(req.seed, 2))
	lo, hi := 20, 60
	for _, e := range endpoints {
		if e.name == req.endpoint {
			lo, hi = e.records[0], e.records[1]
		}
	}
	n := lo + r.IntN(hi-lo+1)
	for range n {
		buf = strconv.AppendInt(buf, r.Int64N(1<<40), 10)
		buf = append(buf, ',')
		for range 3 + r.IntN(18) {
			buf = append(buf, byte('a'+r.IntN(26)))
		}
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, r.Int64N(100000), 10)
		buf = append(buf, ',')
		for range 16 + r.IntN(225) {
			buf = append(buf, byte('A'+r.IntN(26)))
		}
		buf = append(buf, '\n')
	}
	return buf
}
